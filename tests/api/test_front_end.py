"""Who the client is, and which forwarded headers count (`front_end.py`): the rules on
ASGI scopes as uvicorn and the Functions host build them, and the App Service case (no
socket peer) over real HTTP, the app wrapped so that its scope has no `client`, as
`AsgiFunctionApp` gives it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import httpx
import pytest

from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.front_end import UNKNOWN, FrontEnd
from tests.api.conftest import COLLECTIONS
from tests.support.api_server import serve

PROXY = ("10.0.0.0/8", "2001:db8:ffff::/48")


def _scope(peer: str | None, **headers: str) -> dict[str, Any]:
    return {
        "client": (peer, 50000) if peer else None,
        "headers": [(k.lower().replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }


def _front(**changes: Any) -> FrontEnd:
    return FrontEnd.from_settings(replace(Settings(), **changes))


@pytest.mark.parametrize(
    "peer, headers, client",
    [
        ("203.0.113.5", {}, "203.0.113.5"),
        ("203.0.113.5", {"x_forwarded_for": "198.51.100.1"}, "203.0.113.5"),  # untrusted peer
        ("10.1.2.3", {"x_forwarded_for": "198.51.100.1"}, "198.51.100.1"),
        ("10.1.2.3", {"x_forwarded_for": "6.6.6.6, 198.51.100.1:4711, 10.9.9.9"}, "198.51.100.1"),
        ("10.1.2.3", {"x_forwarded_for": "10.4.4.4, 10.5.5.5"}, "10.4.4.4"),  # all proxies
        ("10.1.2.3", {"x_forwarded_for": "198.51.100.1, unknown"}, "10.1.2.3"),  # garbage
        ("10.1.2.3", {}, "10.1.2.3"),
        ("2001:db8:1:2:3:4:5:6", {}, "2001:db8:1:2::/64"),  # IPv6 counts per /64
        ("2001:db8:ffff::1", {"x_forwarded_for": "[2001:db8:7::9]:443"}, "2001:db8:7::/64"),
        ("::ffff:198.51.100.1", {}, "198.51.100.1"),
        (None, {"x_client_ip": "198.51.100.1"}, UNKNOWN),  # no peer, not on App Service
    ],
)
def test_the_client_is_the_first_hop_that_is_not_a_trusted_proxy(peer, headers, client) -> None:
    assert _front(trusted_proxies=PROXY).client_address(_scope(peer, **headers)) == client


@pytest.mark.parametrize(
    "headers, client",
    [
        ({"x_client_ip": "198.51.100.1", "x_forwarded_for": "6.6.6.6"}, "198.51.100.1"),
        ({"x_client_ip": "10.1.2.3", "x_forwarded_for": "198.51.100.1, 10.1.2.3:4711"},
         "198.51.100.1"),  # front door (a trusted proxy) before App Service
        ({"x_forwarded_for": "198.51.100.1"}, UNKNOWN),
    ],
)  # fmt: skip
def test_on_app_service_the_front_ends_client_ip_is_the_peer(headers, client) -> None:
    front = _front(trusted_proxies=PROXY, platform_hostname="func-x.azurewebsites.net")
    assert front.client_address(_scope(None, **headers)) == client


@pytest.mark.parametrize(
    "origin, peer, headers, allowed",
    [
        ("http://127.0.0.1:8000", "127.0.0.1", {"host": "127.0.0.1:8000"}, True),
        ("http://127.0.0.1:8000", "127.0.0.1", {"host": "evil.example"}, False),
        ("https://evil.example", "127.0.0.1", {"host": "x", "x_forwarded_host": "evil.example"},
         False),
        ("https://proxied.example", "10.1.2.3",
         {"host": "x", "x_forwarded_host": "proxied.example"}, True),
        ("https://public.example", "127.0.0.1", {"host": "127.0.0.1:8000"}, True),
        ("https://PUBLIC.example:443", "127.0.0.1", {"host": "127.0.0.1:8000"}, True),
        ("https://func-x.azurewebsites.net", None, {"host": "internal"}, True),
        ("https://evil.example", None, {"host": "internal", "x_forwarded_host": "evil.example",
                                        "x_client_ip": "10.1.2.3"}, False),
        ("null", "127.0.0.1", {"host": "null"}, False),
    ],
)  # fmt: skip
def test_which_origins_are_this_site(origin, peer, headers, allowed) -> None:
    front = _front(trusted_proxies=PROXY, public_url="https://public.example/api/ui",
                   platform_hostname="func-x.azurewebsites.net")  # fmt: skip
    assert front.is_this_site(origin, _scope(peer, **headers)) is allowed


def _without_peer(app: Any) -> Any:
    async def functions_host(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await app({**scope, "client": None} if scope["type"] == "http" else scope, receive, send)

    return functions_host


def test_on_app_service_wrong_keys_count_per_front_end_client_ip(settings, clock) -> None:
    on_azure = replace(settings, platform_hostname="func-x.azurewebsites.net")
    with serve(_without_peer(create_app(on_azure, clock=clock))) as server:

        def wrong(client_ip: str, forwarded_for: str = "") -> int:
            headers = {"Authorization": "Bearer wrong", "X-Client-IP": client_ip,
                       "X-Forwarded-For": forwarded_for}  # fmt: skip
            url = server.api_url + COLLECTIONS
            return httpx.get(url, params={"api-version": "2016-03-01"}, headers=headers).status_code

        assert [wrong("198.51.100.1", f"6.6.6.{i}") for i in range(11)] == [401] * 10 + [429]
        assert wrong("198.51.100.2") == 401
        clock.advance(timedelta(minutes=1))
        assert wrong("198.51.100.1") == 401
