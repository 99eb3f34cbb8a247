"""The dashboard served by the real API app over HTTP, on the test's own Azurite tables, with
a clock the test controls, and a browser-like client that signs in with a key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from scheduler_lib.config import Settings
from tests.api import conftest as api_fixtures
from tests.support.api_server import ApiServer

KEY = "test-key"
UI = "/api/ui"
#: The API test server and its manual clock (the dashboard is part of the same app).
clock = api_fixtures.clock
server = api_fixtures.server


def browser(server: ApiServer) -> httpx.Client:
    """A client that behaves like a browser on the dashboard's own pages: it keeps cookies
    and says its requests are same-origin (as Chromium's Sec-Fetch-Site does)."""
    return httpx.Client(
        base_url=server.base_url,
        headers={"Sec-Fetch-Site": "same-origin"},
        follow_redirects=False,
        timeout=30,
    )


def sign_in(client: httpx.Client, key: str = KEY) -> httpx.Response:
    return client.post(UI + "/signin", data={"key": key})


def csrf_token(page: httpx.Response) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]*)">', page.text)
    assert found, "the page carries no CSRF token"
    return found.group(1)


@pytest.fixture
def signed_in(server: ApiServer) -> Iterator[httpx.Client]:
    with browser(server) as client:
        assert sign_in(client).status_code == 303
        yield client


def settings_with(settings: Settings, **changes: object) -> Settings:
    return replace(settings, **changes)
