"""`authentication.type: ManagedServiceIdentity` (2026-12-01) is closed until the operator
opens an audience (`SCHEDULER_IDENTITY_AUDIENCES`), and then reaches only the hosts listed
with it: checked on PUT and on PATCH (a URI moved to another host included). Real HTTP
requests to an API over the test's Azurite tables; what happens when such a job runs is in
tests/test_managed_identity_end_to_end.py."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest

from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.identity_audiences import IdentityAudiences
from tests.api.conftest import (
    EXTENSIONS_VERSION,
    api_client,
    arm_error,
    http_action,
    job_body,
    job_path,
    make_collection,
)
from tests.support.api_server import ManualClock, serve

SETTING = "SCHEDULER_IDENTITY_AUDIENCES"
AUDIENCE_FIELD = "properties.action.request.authentication.audience"
URI_FIELD = "properties.action.request.uri"
#: Audiences that mint tokens for the app's own storage, management plane and Key Vault.
OWN_RESOURCES = (
    "https://storage.azure.com",
    "https://storage.azure.com/",
    "https://management.azure.com",
    "https://management.core.windows.net/",
    "https://vault.azure.net",
    "https://devstoreaccount1.blob.core.windows.net",
)


@contextmanager
def api(settings: Settings, audiences: str) -> Iterator[httpx.Client]:
    """A client (2026-12-01) of an API whose operator set `SCHEDULER_IDENTITY_AUDIENCES`."""
    opened = replace(settings, identity_audiences=IdentityAudiences.parse(audiences))
    with (
        serve(create_app(opened, clock=ManualClock())) as server,
        api_client(server, version=EXTENSIONS_VERSION) as client,
    ):
        make_collection(client)
        yield client


def msi(uri: str, audience: str = "api://orders") -> dict[str, Any]:
    return http_action(
        uri=uri, authentication={"type": "ManagedServiceIdentity", "audience": audience}
    )


def put(client: httpx.Client, action: dict[str, Any], name: str = "job1") -> httpx.Response:
    return client.put(job_path(name), json=job_body(action=action))


def test_the_type_is_refused_by_default_naming_the_setting(client_ext: httpx.Client) -> None:
    """Before: 201 for any audience and host. Now the default allows no audience."""
    make_collection(client_ext)
    for audience in ("api://orders", *OWN_RESOURCES):
        error = arm_error(put(client_ext, msi("https://orders.example.com/", audience)), 400)
        assert error["target"] == AUDIENCE_FIELD
        assert SETTING in error["message"] and "empty" in error["message"]
    as_error_action = {**http_action(), "errorAction": msi("https://orders.example.com/")}
    error = arm_error(put(client_ext, as_error_action), 400)
    assert error["target"] == "properties.action.errorAction.request.authentication.audience"


def test_the_apps_own_resources_are_refused_unless_listed(settings: Settings) -> None:
    with api(settings, "api://orders=127.0.0.1,orders.example.com") as client:
        assert put(client, msi("http://127.0.0.1:9/")).status_code == 201
        for number, audience in enumerate(OWN_RESOURCES):
            for uri in ("http://127.0.0.1:9/", "https://orders.example.com/"):
                response = put(client, msi(uri, audience), f"own{number}")
                error = arm_error(response, 400)
                assert error["target"] == AUDIENCE_FIELD
                assert audience in error["message"]
                assert f"only 'api://orders' in {SETTING}" in error["message"]
    with api(settings, "https://storage.azure.com=orders.example.com") as client:
        listed = msi("https://orders.example.com/", "https://storage.azure.com")
        assert put(client, listed, "listed").status_code == 201  # the operator's choice
        for audience in OWN_RESOURCES[1:]:
            error = arm_error(put(client, msi("https://orders.example.com/", audience)), 400)
            assert error["target"] == AUDIENCE_FIELD


@pytest.mark.parametrize(("uri", "allowed"), [
    ("https://attacker.example/collect", False),
    ("https://orders.example.com.attacker.example/", False),
    ("https://attacker.example/orders.example.com", False),
    ("https://attacker.example/?host=orders.example.com", False),
    ("http://127.0.0.1:9/", False),
    ("https://a.orders.example.org/", False),  # its entry names port 8443
    ("https://orders.example.org:8443/", False),  # `*.` is the names under it
    ("https://orders.example.com/close-day", True),
    ("http://ORDERS.Example.COM:8080/", True),
    ("https://a.orders.example.org:8443/x", True),
    ("https://bücher.example/", True),  # sent as xn--bcher-kva.example, as listed
])  # fmt: skip
def test_a_host_outside_the_audiences_list_is_refused(
    settings: Settings, uri: str, allowed: bool
) -> None:
    audiences = "api://orders=orders.example.com,*.orders.example.org:8443,xn--bcher-kva.example"
    with api(settings, audiences) as client:
        response = put(client, msi(uri))
        if allowed:
            assert response.status_code == 201, response.text
        else:
            error = arm_error(response, 400)
            assert error["target"] == URI_FIELD
            assert SETTING in error["message"] and "api://orders" in error["message"]


def test_a_uri_moved_to_another_host_is_checked_again(settings: Settings) -> None:
    """No secret is stored to re-send: the audience's host check decides, on every PATCH."""
    audiences = "api://orders=orders.example.com,orders-2.example.com"
    with api(settings, audiences) as client:
        action = {
            **msi("https://orders.example.com/a"),
            "errorAction": msi("https://orders.example.com/e"),
        }
        assert put(client, action).status_code == 201
        for field, patch in (
            (URI_FIELD, {"request": {"uri": "https://attacker.example/a"}}),
            ("properties.action.errorAction.request.uri",
             {"errorAction": {"request": {"uri": "https://attacker.example/e"}}}),
        ):  # fmt: skip
            response = client.patch(job_path(), json={"properties": {"action": patch}})
            error = arm_error(response, 400)
            assert error["target"] == field and SETTING in error["message"]
        for uri in ("https://orders.example.com/b", "https://orders-2.example.com/a"):
            patch = {"properties": {"action": {"request": {"uri": uri}}}}
            assert client.patch(job_path(), json=patch).status_code == 200
        stored = client.get(job_path()).json()["properties"]["action"]
        assert stored["request"]["uri"] == "https://orders-2.example.com/a"
        assert stored["errorAction"]["request"]["uri"] == "https://orders.example.com/e"
