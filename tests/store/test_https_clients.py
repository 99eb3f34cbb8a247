"""The store's clients over HTTPS, through `storage_transport.PoolTransport`, with both kinds
of credential the app uses: an account key (a connection string: the SDKs' SharedKey) and a
token (the managed identity in Azure; here a token made for the storage audience), against
an Azurite of its own with a self-signed certificate and OAuth on (tests/store/
test_changeset_token.py). TLS is verified with the CA bundle the environment names, as
`requests` verified it; a client without it refuses the certificate before sending."""

from __future__ import annotations

from pathlib import Path

import pytest
from azure.core.exceptions import ServiceRequestError
from azure.data.tables import TableServiceClient

from devtools.azurite import Azurite
from scheduler_lib.config import Settings
from scheduler_lib.storage_account import client_transport, storage_connections
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore
from tests.store.test_changeset_token import (  # noqa: F401  # the fixture, used by name
    Identity,
    _endpoint,
    oauth_azurite,
)


def _https(azurite: Azurite) -> Settings:
    return Settings(
        storage_connection_string=azurite.connection_string.replace("http://", "https://"),
        storage_prefix="h",
    )


def test_an_account_key_over_https(
    oauth_azurite: tuple[Azurite, Path],  # noqa: F811  # the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    azurite, cert = oauth_azurite
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    store = TableStore(_https(azurite))
    store.ensure_tables()
    table = store.table("JobHistory")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "s", "N": 2})])
    assert [e["N"] for e in table.query_entities("PartitionKey eq 'p'")] == [1, 2]
    queue = ExecutionQueue(_https(azurite)).ready()
    queue.discard(queue.send_body("{}", delay_seconds=60))


def test_a_token_over_https(oauth_azurite: tuple[Azurite, Path]) -> None:  # noqa: F811
    azurite, cert = oauth_azurite
    identity = Identity("https://storage.azure.com")
    options = {"connection_verify": str(cert)}
    transport = client_transport(storage_connections(Settings()), options)
    service = TableServiceClient(_endpoint(azurite), credential=identity, transport=transport)
    table = service.create_table_if_not_exists("tokens")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 3})
    assert table.get_entity("p", "r")["N"] == 3


def test_a_certificate_no_bundle_vouches_for_is_refused_before_sending(
    oauth_azurite: tuple[Azurite, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    azurite, _ = oauth_azurite
    store = TableStore(_https(azurite), patience=INTERACTIVE)
    with pytest.raises(ServiceRequestError, match="CERTIFICATE_VERIFY_FAILED"):
        store.ensure_tables()
