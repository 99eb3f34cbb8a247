"""Table storage clients, table names and key encoding: the one place that knows them.

ARM names are case-insensitive, so every key is lower-cased and the original spelling is
kept in a property. Keys join names with `|`, which no ARM name in this API may contain
(names are validated by the API before they reach the store).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime
from functools import cached_property
from typing import Any, cast

from azure.core import MatchConditions
from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.data.tables import TableClient, TableServiceClient, UpdateMode

from scheduler_lib.config import TABLES, Settings
from scheduler_lib.domain import has_lone_surrogate, without_lone_surrogates
from scheduler_lib.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    ServiceUnavailableError,
)
from scheduler_lib.group_commit import GroupCommit
from scheduler_lib.storage_account import (
    Once,
    ca_bundle,
    client_transport,
    service_client,
    storage_connections,
)
from scheduler_lib.storage_patience import BACKGROUND, StoragePatience
from scheduler_lib.storage_transport import ConnectionPools
from scheduler_lib.store.changeset import Changesets
from scheduler_lib.store.entity_queries import EntityQueries
from scheduler_lib.store.entity_requests import EntityRequests
from scheduler_lib.store.table_client import StoreTableClient
from scheduler_lib.transport_choice import TransportChoice


def prefix_range(prefix: str) -> str:
    """OData filter selecting RowKeys that start with `prefix` (a range scan, not a table scan)."""
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    lower, upper = (bound.replace("'", "''") for bound in (prefix, upper))  # OData quoting
    return f"RowKey ge '{lower}' and RowKey lt '{upper}'"


def dumps(value: Any) -> str:
    """Compact JSON for a string column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def loads(text: str) -> Any:
    """A JSON string column as written by `dumps`, each lone surrogate an older version
    stored read as U+FFFD (`domain/text.py`): a record stays readable whatever it holds."""
    return without_lone_surrogates(json.loads(text))


def stored_text(value: str) -> str:
    """A free-text string column, read as `loads` reads JSON."""
    return without_lone_surrogates(value) if has_lone_surrogate(value) else value


#: The most entities Table storage returns in one page of a query.
PAGE_LIMIT = 1000
#: Characters per stored string property: Table storage allows 64 KiB of UTF-16 in one,
#: and a character takes at most two UTF-16 code units.
PROPERTY_CHARS = 16 * 1024


def split_text(name: str, text: str) -> dict[str, str]:
    """`text` as properties `name`, `name_1`, `name_2`, ..., each within Table storage's
    64 KiB string property limit (a short text is just `name`, as before splitting)."""
    parts = [text[i : i + PROPERTY_CHARS] for i in range(0, len(text), PROPERTY_CHARS)] or [""]
    return {(f"{name}_{i}" if i else name): part for i, part in enumerate(parts)}


def join_text(entity: Any, name: str) -> str | None:
    """Inverse of `split_text` (None when the entity has no `name` property)."""
    first = entity.get(name)
    if first is None:
        return None
    parts = [first]
    while (part := entity.get(f"{name}_{len(parts)}")) is not None:
        parts.append(part)
    return "".join(parts)


def set_present(entity: Mapping[str, Any], **columns: Any) -> None:
    """Add to `entity` each of `columns` that has a value: Table storage has no null, so an
    absent column is how "no value" is stored (and read back as None). `entity` is the dict
    being built; typed as a Mapping so that a TypedDict entity is accepted (mypy checks
    neither these columns' names nor their types against it: keep them those it declares)."""
    written = cast(dict[str, Any], entity)  # every entity is a plain dict at run time
    written.update((name, value) for name, value in columns.items() if value is not None)


def stored_datetime(value: Any) -> datetime:
    """`as_datetime` of a column every entity of its table has (written with the entity)."""
    found = as_datetime(value)
    if found is None:
        raise ValueError(f"a stored time is missing or not a time: {value!r}")
    return found


def as_datetime(value: Any) -> datetime | None:
    """Table storage returns its own datetime subclass; callers want a plain aware datetime."""
    if value is None:
        return None
    return datetime.fromisoformat(value.isoformat()) if isinstance(value, datetime) else None


class TableStore:
    """Clients for the scheduler's tables in one storage account.

    Built once per worker from `Settings`: a connection string (Azurite, or an account key)
    or, in Azure, the account name and the managed identity through DefaultAzureCredential.
    `group_writes`: job replaces that wait at the same moment share transactions
    (`store/grouped_writes.py`, in `writes`; the worker's store, not the API's)."""

    def __init__(
        self,
        settings: Settings,
        *,
        patience: StoragePatience = BACKGROUND,
        group_writes: bool = False,
    ) -> None:
        self.settings = settings
        self.patience = patience
        self.writes: GroupCommit[Any, Any] | None = GroupCommit() if group_writes else None
        self._clients: dict[str, TableClient] = {}
        self._ready = Once()

    @cached_property
    def _connections(self) -> ConnectionPools:
        return storage_connections(self.settings, "table")

    @cached_property
    def service(self) -> TableServiceClient:
        return service_client(
            TableServiceClient,
            self.settings,
            self.settings.table_endpoint,
            connections=self._connections,
            **_client_options(self.patience),
        )

    @cached_property
    def _changesets(self) -> Changesets:
        service = self.service
        return Changesets(
            service.url,
            service.credential,
            connections=self._connections,
            patience=self.patience,
            verify=ca_bundle(),
            api_version=service.api_version,
        )

    @cached_property
    def _entities(self) -> EntityRequests | None:
        """Point requests off the SDK's generated client, but with the SDKs as they come."""
        if self.settings.storage_transport is TransportChoice.REQUESTS:
            return None
        return EntityRequests(self._changesets)

    @cached_property
    def _queries(self) -> EntityQueries | None:
        """Queries off the SDK's generated client, sent as the point requests are."""
        return None if self._entities is None else EntityQueries(self._entities)

    def table(self, logical: str) -> TableClient:
        """The client of one of `config.TABLES`, by its logical name: the SDK's, with its
        transactions and point requests on a lighter path over the same connections and
        credential (`store/table_client.py`)."""
        client = self._clients.get(logical)
        if client is None:
            service = self.service
            options = {**_verify_option(), **_client_options(self.patience)}
            client = StoreTableClient(
                service.url,
                table_name=self.settings.table_name(logical),
                credential=service.credential,
                api_version=service.api_version,
                # the service client's connections: closing a table keeps them
                transport=client_transport(self._connections, options),
                changesets=self._changesets,
                entities=self._entities,
                queries=self._queries,
                **options,
            )
            self._clients[logical] = client
        return client

    def ready(self) -> TableStore:
        """This store, its tables created once per instance (the first caller creates them;
        building the app at worker import therefore never touches the network)."""
        self._ready.run(self.ensure_tables)
        return self

    def ensure_tables(self) -> None:
        """Create any missing table (idempotent; cheap enough for worker start-up)."""
        for logical in TABLES:
            with suppress(ResourceExistsError):
                self.service.create_table(self.settings.table_name(logical))


def _client_options(patience: StoragePatience) -> dict[str, Any]:
    """azure-data-tables' retry options (its TablesRetryPolicy reads them) and timeouts."""
    return {**patience.transport_options(), **patience.retry_options()}


def _verify_option() -> dict[str, str]:
    """The CA bundle as `service_client` gives it to the service client."""
    return {"connection_verify": bundle} if (bundle := ca_bundle()) else {}


def write_entity(
    table: TableClient, entity: dict[str, Any], *, etag: str | None, create_only: bool
) -> dict[str, Any]:
    """Create (`create_only`: ResourceExistsError if it exists), replace only if unchanged
    since `etag` was read, or else upsert; returns the write's metadata (its new ETag)."""
    if create_only:
        return table.create_entity(entity)
    if etag is not None:
        return table.update_entity(entity, mode=UpdateMode.REPLACE, **etag_kwargs(etag))
    return table.upsert_entity(entity, mode=UpdateMode.REPLACE)


def etag_kwargs(etag: str | None) -> dict[str, Any]:
    """Keyword arguments for an update that must not overwrite someone else's change."""
    if etag is None:
        return {}
    return {"etag": etag, "match_condition": MatchConditions.IfNotModified}


@contextmanager
def storage_errors(what: str) -> Iterator[None]:
    """Translate azure-core's storage errors into the scheduler's own (with ARM codes)."""
    try:
        yield
    except ResourceNotFoundError as exc:
        raise NotFoundError(f"{what} was not found.") from exc
    except ResourceModifiedError as exc:
        raise PreconditionFailedError(f"{what} was changed by another request.") from exc
    except ResourceExistsError as exc:
        raise ConflictError(f"{what} already exists.") from exc
    except HttpResponseError as exc:
        if exc.status_code == 412:
            raise PreconditionFailedError(f"{what} was changed by another request.") from exc
        raise


def storage_unavailable(exc: Exception) -> ServiceUnavailableError | None:
    """The 503 to answer when `exc` says storage cannot be reached or is overloaded (no
    connection, no answer in time, a 5xx such as `ServerBusy`); None for any other error."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, ServiceRequestError | ServiceResponseError) or (
        isinstance(exc, HttpResponseError) and status is not None and status >= 500
    ):
        return ServiceUnavailableError(
            f"Storage is unavailable ({type(exc).__name__}); try again shortly."
        )
    return None
