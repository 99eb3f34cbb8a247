"""The store's table client: azure-data-tables' `TableClient`, its transactions sent by
`Changesets` (`store/changeset.py`), its point requests by `EntityRequests`
(`store/entity_requests.py`) and its queries by `EntityQueries` (`store/entity_queries.py`),
all on one pipeline over the store's connections.

Table management and everything else stay the SDK's own. The `TableStore` makes
every table client one of these, so every point request and transaction of
`scheduler_lib/store` goes through the lighter path; with
`SCHEDULER_STORAGE_TRANSPORT=requests` (`entities=None`) the point requests are the SDK's
own again, and the queries (`queries=None`) too (the operator's way back,
`docs/settings.md`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from azure.core.tracing.decorator import distributed_trace
from azure.data.tables import TableClient, UpdateMode

from scheduler_lib.store.changeset import Changesets
from scheduler_lib.store.entity_queries import EntityQueries
from scheduler_lib.store.entity_requests import EntityRequests


class StoreTableClient(TableClient):
    """`TableClient` with `Changesets` for transactions, `EntityRequests` (unless None) for
    `get_entity`, `create_entity`, `update_entity`, `upsert_entity`, `delete_entity`, and
    `EntityQueries` (unless None) for `query_entities` and `list_entities`."""

    def __init__(
        self,
        *args: Any,
        changesets: Changesets,
        entities: EntityRequests | None,
        queries: EntityQueries | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._changesets = changesets
        self._entities = entities
        self._queries = queries

    @distributed_trace
    def submit_transaction(  # type: ignore[override]  # the SDK's keywords are refused
        self, operations: Iterable[Any]
    ) -> list[Mapping[str, Any]]:
        return self._changesets.submit(self.table_name, operations)

    @distributed_trace
    def query_entities(  # type: ignore[override]  # the SDK's other keywords are refused
        self,
        query_filter: str,
        *,
        parameters: dict[str, Any] | None = None,
        select: str | list[str] | None = None,
        results_per_page: int | None = None,
    ) -> Any:
        if self._queries is None:
            return super().query_entities(
                query_filter,
                parameters=parameters,
                select=select,
                results_per_page=results_per_page,
            )
        return self._queries.query(
            self.table_name,
            query_filter,
            parameters=parameters,
            select=select,
            results_per_page=results_per_page,
        )

    @distributed_trace
    def list_entities(  # type: ignore[override]  # the SDK's other keywords are refused
        self, *, select: str | list[str] | None = None, results_per_page: int | None = None
    ) -> Any:
        if self._queries is None:
            return super().list_entities(select=select, results_per_page=results_per_page)
        return self._queries.query(
            self.table_name, None, select=select, results_per_page=results_per_page
        )

    @distributed_trace
    def get_entity(  # type: ignore[override]  # the SDK's other keywords are refused
        self, partition_key: str, row_key: str, *, select: str | list[str] | None = None
    ) -> Any:
        if self._entities is None:
            return super().get_entity(partition_key, row_key, select=select)
        return self._entities.get(self.table_name, partition_key, row_key, select)

    @distributed_trace
    def create_entity(self, entity: Any, **kwargs: Any) -> dict[str, Any]:
        if self._entities is None:
            return super().create_entity(entity, **kwargs)
        return self._entities.write(self.table_name, "create", entity, kwargs)

    @distributed_trace
    def update_entity(
        self, entity: Any, mode: UpdateMode = UpdateMode.MERGE, **kwargs: Any
    ) -> dict[str, Any]:
        if self._entities is None:
            return super().update_entity(entity, mode, **kwargs)
        return self._entities.write(self.table_name, "update", entity, {"mode": mode, **kwargs})

    @distributed_trace
    def upsert_entity(
        self, entity: Any, mode: UpdateMode = UpdateMode.MERGE, **kwargs: Any
    ) -> dict[str, Any]:
        if self._entities is None:
            return super().upsert_entity(entity, mode, **kwargs)
        return self._entities.write(self.table_name, "upsert", entity, {"mode": mode, **kwargs})

    @distributed_trace
    def delete_entity(self, *args: Any, **kwargs: Any) -> None:
        if self._entities is None:
            return super().delete_entity(*args, **kwargs)
        entity: Mapping[str, Any]
        if args and isinstance(args[0], Mapping):
            entity = args[0]
        elif "entity" in kwargs:
            entity = kwargs.pop("entity")
        else:  # (partition_key, row_key), each positional or by keyword
            keys = list(args)
            named = kwargs.pop("partition_key", None), kwargs.pop("row_key", None)
            partition_key = keys.pop(0) if named[0] is None else named[0]
            row_key = keys.pop(0) if named[1] is None else named[1]
            entity = {"PartitionKey": partition_key, "RowKey": row_key}
        self._entities.delete(self.table_name, entity, kwargs)
        return None
