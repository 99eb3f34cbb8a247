"""Entity-group transactions sent without the `email` package (issue 22, docs/cost.md
"Transactions without the email package").

Every occurrence writes its history entry in a transaction with its partition's counter,
and the dispatcher writes and deletes due-index rows in transactions. azure-data-tables'
`submit_transaction` builds the multipart body through azure-core's `set_multipart_mixed`
(the `email` generator) and reads the answer with the `email` parser and `http.client`:
a transaction of two entities cost ~4.7 point reads of client CPU. `Changesets.submit` has
the same contract, writes the body as text (`changeset_body.py`) and reads the answer with
string operations.

It sends through public azure-core policies chained without azure-core's pipeline runner
(`store/storage_pipeline.py`, shared with the execution queue's requests), over the
same connections (`storage_account.client_transport`) and with the same credential as the
store's TableClients, and the same retries and timeouts (`StoragePatience`):
- an account key (connection string): the Table service's SharedKey signature, as
  Microsoft documents it ("Authorize with Shared Key"), signed on each try;
- a token credential (managed identity): azure-core's `BearerTokenCredentialPolicy` for
  the storage scope the SDK asks for; a SAS: azure-core's `AzureSasCredentialPolicy`.
Errors are the SDK's types with its attributes (`TableTransactionError.index`,
`.error_code`, `RequestTooLargeError`, `ResourceNotFoundError` for a missing table,
azure-core's `ServiceRequestError`/`ServiceResponseError` from the transport), built from
the answer as azure-data-tables' `_decode_error` builds them.

`store/table_client.StoreTableClient` is the SDK's `TableClient` with this
`submit_transaction`: the `TableStore` makes every table client one, so every transaction of
`scheduler_lib/store` goes through here. Its point requests go through the same pipeline
(`store/entity_requests.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from uuid import uuid4

from azure.core.credentials import AzureNamedKeyCredential
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.core.rest import HttpRequest, HttpResponse
from azure.data.tables import RequestTooLargeError, TableTransactionError

from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.storage_transport import ConnectionPools
from scheduler_lib.store.changeset_answer import decode_error, read_parts
from scheduler_lib.store.changeset_body import batch_body, operation_part
from scheduler_lib.store.storage_pipeline import STORAGE_SCOPE as STORAGE_SCOPE
from scheduler_lib.store.storage_pipeline import signature, storage_pipeline

TOO_LARGE = "The transaction request was too large"


class Changesets:
    """Sends entity-group transactions to one storage account's Table service."""

    def __init__(
        self,
        endpoint: str,
        credential: Any,
        *,
        connections: ConnectionPools,
        patience: StoragePatience,
        verify: str | None = None,
        api_version: str = "2019-02-02",
    ) -> None:
        self.base = endpoint.split("?", 1)[0].rstrip("/")
        self.version = api_version
        self.pipeline = storage_pipeline(
            self.base,
            credential,
            shared_key=_SharedKeyPolicy,
            connections=connections,
            patience=patience,
            verify=verify,
            moniker="scheduler-changeset",
        )

    def submit(self, table: str, operations: Iterable[Any]) -> list[Mapping[str, Any]]:
        """`TableClient.submit_transaction(operations)` for `table`: each operation's
        metadata (its new ETag), or the SDK's errors."""
        parts = self._parts(table, operations)
        if not parts:
            return []  # the SDK sends it and returns [] on the service's 400
        batch, changeset = f"batch_{uuid4()}", f"changeset_{uuid4()}"
        request = HttpRequest(
            "POST",
            f"{self.base}/$batch",
            headers={
                "x-ms-version": self.version,
                "DataServiceVersion": "3.0",
                "MaxDataServiceVersion": "3.0;NetFx",
                "Content-Type": f"multipart/mixed; boundary={batch}",
                "Accept": "application/json",
            },
            content=batch_body(batch, changeset, parts),
        )
        response = self.pipeline.send_request(request)
        if response.status_code == 413:
            raise decode_error(response, TOO_LARGE, RequestTooLargeError)
        if response.status_code != 202:
            raise decode_error(response)
        answers = read_parts(response.content, response.headers.get("Content-Type", ""))
        failed = next((a for a in answers if not 200 <= a.status_code < 300), None)
        if failed is not None:
            if failed.status_code == 413:
                raise decode_error(response, TOO_LARGE, RequestTooLargeError)
            raise decode_error(failed, None, TableTransactionError)
        return [{"etag": a.headers["ETag"]} if "ETag" in a.headers else {} for a in answers]

    def _parts(self, table: str, operations: Iterable[Any]) -> list[str]:
        """The changeset's parts; the SDK's ValueError/TypeError for operations it refuses."""
        parts: list[str] = []
        partition = None
        try:
            for index, operation in enumerate(operations):
                entity = operation[1]
                if partition is None:
                    partition = entity.get("PartitionKey")
                elif entity.get("PartitionKey") != partition:
                    raise ValueError("Partition Keys in the batch must all be the same.")
                parts.append(operation_part(self.base, table, tuple(operation), index))
        except TypeError as exc:
            raise TypeError(
                "The value of 'operations' must be an iterator "
                "of Tuples. Please check documentation for correct Tuple format."
            ) from exc
        return parts


class _SharedKeyPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """The Table service's SharedKey authorization (Microsoft's "Authorize with Shared
    Key", Table service): an HMAC-SHA256, with the account key, of the verb, Content-MD5,
    Content-Type, x-ms-date and the canonicalized resource (/account/path). Azurite checks
    it as the service does (tests/store/test_changeset.py, a wrong key)."""

    def __init__(self, credential: AzureNamedKeyCredential) -> None:
        self._credential = credential

    def on_request(self, request: PipelineRequest[HttpRequest]) -> None:
        http = request.http_request
        name, key = self._credential.named_key
        path = "/" + http.url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
        headers = http.headers
        signed = "\n".join(
            (
                http.method,
                headers.get("Content-MD5", ""),
                headers.get("Content-Type", ""),
                headers.get("x-ms-date", ""),
                f"/{name}{path}",
            )
        )
        headers["Authorization"] = f"SharedKey {name}:{signature(key, signed)}"
