"""Where a job may send, checked when it is stored: malformed URIs, literal metadata and
private addresses, storage account and namespace names, and the accounts / namespaces an
identity-based (secret-less) queue or Service Bus action may reach. Real HTTP requests to
an API over the test's Azurite tables."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from scheduler_lib.api import create_app
from scheduler_lib.config import AZURITE_ACCOUNT, Settings
from tests.actions.test_egress import EMBEDDED_FORMS
from tests.api.conftest import arm_error, http_action, job_body, job_path, make_collection
from tests.support.api_server import ManualClock, serve


def put(client: httpx.Client, action: dict) -> httpx.Response:
    return client.put(job_path(), json=job_body(action=action))


@pytest.mark.parametrize(
    "uri",
    [
        "http://[::1/",
        "http://example.com:99999/",
        "http:///x",
        "http://u:p@example.com/",
        "http://exa mple.com/",
    ],
)
def test_a_malformed_uri_is_a_400_naming_it(client: httpx.Client, uri: str) -> None:
    make_collection(client)
    error = arm_error(put(client, http_action(uri=uri)), 400)
    assert error["target"] == "properties.action.request.uri"


@pytest.mark.parametrize(
    "uri",
    [
        "http://169.254.169.254/metadata/instance?api-version=2021-02-01",
        "http://2852039166/",
        "http://0xA9FEA9FE/",
        "http://0251.0376.0251.0376/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/",
        "https://metadata.azure.com/",
        "http://10.0.0.5/",
        "http://100.64.0.1/",
        "http://[fc00::1]/",
        "http://0.0.0.0:7071/",
        "http://[::ffff:10.0.0.1]/",
    ],
)
def test_metadata_and_private_addresses_are_refused_at_put(client: httpx.Client, uri: str):
    make_collection(client)
    error = arm_error(put(client, http_action(uri=uri)), 400)
    assert error["target"] == "properties.action.request.uri"
    error_action = {**http_action(), "errorAction": http_action(uri=uri)}
    error = arm_error(put(client, error_action), 400)
    assert error["target"] == "properties.action.errorAction.request.uri"


@pytest.fixture
def azure_client(settings: Settings) -> Iterator[httpx.Client]:
    """An API configured as in Azure: nothing private allowed."""
    with (
        serve(create_app(replace(settings, egress_allow=()), clock=ManualClock())) as server,
        httpx.Client(
            base_url=server.api_url,
            headers={"Authorization": "Bearer test-key"},
            params={"api-version": "2016-03-01"},
            timeout=30,
        ) as http,
    ):
        yield http


def test_loopback_is_allowed_locally_not_in_azure(client, azure_client) -> None:
    for api, status in ((client, 201), (azure_client, 400)):
        make_collection(api)
        assert put(api, http_action(uri="http://127.0.0.1:8080/")).status_code == status
    for uri in ("http://localhost:7071/api", "http://[::1]:10001/", "http://2130706433/"):
        error = arm_error(put(azure_client, http_action(uri=uri)), 400)
        assert error["target"] == "properties.action.request.uri"


@EMBEDDED_FORMS
def test_ipv4_embedded_in_ipv6_is_refused_at_put(
    client: httpx.Client, azure_client: httpx.Client, metadata: str, loopback: str
) -> None:
    """Each IPv6 embedding of an IPv4 address is judged as that address: the metadata
    address everywhere, loopback where nothing private is allowed (as in Azure)."""
    for api, address in ((client, metadata), (azure_client, loopback)):
        make_collection(api)
        uri = f"http://[{address}]:8080/x"
        error = arm_error(put(api, http_action(uri=uri)), 400)
        assert error["target"] == "properties.action.request.uri"
        assert str(ipaddress.ip_address(address)) in error["message"]
        error = arm_error(put(api, {**http_action(), "errorAction": http_action(uri=uri)}), 400)
        assert error["target"] == "properties.action.errorAction.request.uri"


def queue(account: str, sas: str | None = None) -> dict:
    message = {"storageAccount": account, "queueName": "q", "message": "m"}
    if sas:
        message["sasToken"] = sas
    return {"type": "StorageQueue", "queueMessage": message}


def bus(namespace: str, authentication: dict | None = None) -> dict:
    body = {"namespace": namespace, "queueName": "q", "message": "m"}
    if authentication is not None:
        body["authentication"] = authentication
    return {"type": "ServiceBusQueue", "serviceBusQueueMessage": body}


def test_names_are_validated(client: httpx.Client) -> None:
    make_collection(client)
    error = arm_error(put(client, queue("127.0.0.1/", "?sig=x")), 400)
    assert error["target"] == "properties.action.queueMessage.storageAccount"
    key = {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "secret"}
    error = arm_error(put(client, bus("127.0.0.1/", key)), 400)
    assert error["target"] == "properties.action.serviceBusQueueMessage.namespace"


def test_a_queue_action_without_sas_reaches_only_allowed_accounts(client: httpx.Client) -> None:
    make_collection(client)
    assert put(client, queue(AZURITE_ACCOUNT)).status_code == 201  # the app's own account
    error = arm_error(put(client, queue("someoneelse")), 400)
    assert error["target"] == "properties.action.queueMessage.sasToken"
    assert "SCHEDULER_IDENTITY_STORAGE_ACCOUNTS" in error["message"]
    assert put(client, queue("someoneelse", "?sig=theirs")).status_code == 200


def test_a_service_bus_action_without_a_key(client: httpx.Client, settings: Settings) -> None:
    make_collection(client)
    error = arm_error(put(client, bus("contoso-bus")), 400)  # no namespace is allowed
    assert error["target"] == "properties.action.serviceBusQueueMessage.authentication"
    error = arm_error(
        put(client, bus("contoso-bus", {"type": "SharedAccessKey", "sasKeyName": "k"})), 400
    )
    assert error["target"] == "properties.action.serviceBusQueueMessage.authentication.sasKey"
    assert "GET carries no secrets" in error["message"]


def test_an_allowed_namespace_takes_identity_based_actions(settings: Settings) -> None:
    allowed = replace(settings, identity_servicebus_namespaces=("contoso-bus",))
    with (
        serve(create_app(allowed, clock=ManualClock())) as server,
        httpx.Client(
            base_url=server.api_url,
            headers={"Authorization": "Bearer test-key"},
            params={"api-version": "2016-03-01"},
            timeout=30,
        ) as api,
    ):
        make_collection(api)
        assert put(api, bus("contoso-bus")).status_code == 201
        assert put(api, bus("Contoso-Bus", {"type": "NotSpecified"})).status_code == 200
        assert put(api, bus("other-bus")).status_code == 400
