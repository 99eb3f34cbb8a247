"""Signing in to the dashboard: the cookie's flags, what it refuses (tampered, expired,
signed by a key that was removed), CSRF on every mutating request, and App Service
authentication's headers trusted only when the setting says so."""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import replace
from datetime import timedelta

import httpx
import pytest

from scheduler_lib.dashboard.session import COOKIE, MAX_AGE
from scheduler_lib.runtime import create_web_app
from tests.dashboard.conftest import KEY, UI, browser, csrf_token, sign_in
from tests.support.api_server import serve

PAGES = ("/", "/signin")


def _set_cookie(response: httpx.Response) -> str:
    header = response.headers.get("set-cookie", "")
    assert header.startswith(COOKIE + "="), header
    return header


def test_pages_need_a_session_not_a_bearer_key(server) -> None:
    with browser(server) as client:
        response = client.get(UI + "/")
        assert response.status_code == 303
        assert response.headers["location"] == UI + "/signin"
        signin = client.get(UI + "/signin")
        assert signin.status_code == 200 and "API key" in signin.text
        assert client.get(UI).headers["location"] == UI + "/"
    # The REST API itself still wants its key.
    assert httpx.get(server.api_url + "/subscriptions/s/providers/x").status_code == 401


def test_the_cookie_is_httponly_strict_path_bound_and_holds_no_key(server) -> None:
    with browser(server) as client:
        header = _set_cookie(sign_in(client)).lower()
        assert "httponly" in header and "samesite=strict" in header and "path=/api/ui" in header
        assert "secure" not in header.replace("samesite", "")  # plain http locally
        assert KEY not in header
        assert client.get(UI + "/").status_code == 200


def test_a_script_may_sign_in_with_json(server) -> None:
    with browser(server) as client:
        assert client.post(UI + "/signin", json={"key": KEY}).status_code == 303
        assert client.get(UI + "/").status_code == 200
        assert client.post(UI + "/signin", json=["not", "an", "object"]).status_code == 400


def test_the_cookie_is_secure_behind_an_https_front_end(server) -> None:
    with browser(server) as client:
        response = client.post(
            UI + "/signin", data={"key": KEY}, headers={"X-Forwarded-Proto": "https"}
        )
        assert "; secure" in _set_cookie(response).lower()


def test_a_wrong_key_is_refused_and_not_echoed(server) -> None:
    with browser(server) as client:
        response = client.post(UI + "/signin", data={"key": "guess-<b>"})
        assert response.status_code == 401
        assert "set-cookie" not in response.headers
        assert "guess" not in response.text
        assert client.get(UI + "/").status_code == 303


def test_a_tampered_cookie_is_no_session(server, signed_in) -> None:
    value = signed_in.cookies[COOKIE]
    forged = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
    with browser(server) as client:
        client.cookies.set(COOKIE, forged, path=UI)
        assert client.get(UI + "/").status_code == 303


def test_a_session_expires(signed_in, clock) -> None:
    clock.advance(MAX_AGE - timedelta(seconds=5))
    assert signed_in.get(UI + "/").status_code == 200
    clock.advance(timedelta(seconds=10))
    assert signed_in.get(UI + "/").status_code == 303


def test_removing_a_key_ends_its_sessions(settings, clock) -> None:
    both = replace(settings, api_keys=(KEY, "second-key"))
    with serve(create_web_app(both, clock=clock)) as server, browser(server) as client:
        assert sign_in(client, "second-key").status_code == 303
        cookie = client.cookies[COOKIE]
        assert client.get(UI + "/").status_code == 200
    with serve(create_web_app(settings, clock=clock)) as server, browser(server) as client:
        client.cookies.set(COOKIE, cookie, path=UI)
        assert client.get(UI + "/").status_code == 303


def test_sign_out_ends_the_session(signed_in) -> None:
    token = csrf_token(signed_in.get(UI + "/"))
    response = signed_in.post(UI + "/signout", data={"csrf": token})
    assert response.status_code == 303
    assert signed_in.get(UI + "/").status_code == 303


@pytest.mark.parametrize(
    "headers, token",
    [
        ({}, None),  # no token
        ({}, "0" * 64),  # a wrong one
        ({"Sec-Fetch-Site": "cross-site"}, "valid"),
        ({"Origin": "https://evil.example"}, "valid"),
    ],
)
def test_mutating_requests_without_the_token_or_from_elsewhere_are_403(
    signed_in, headers, token
) -> None:
    valid = csrf_token(signed_in.get(UI + "/"))
    data = {"subscription": "s1", "group": "rg", "name": "forged-coll", "sku": "Standard"}
    if token is not None:
        data["csrf"] = valid if token == "valid" else token
    response = signed_in.post(UI + "/collections", data=data, headers=headers)
    assert response.status_code == 403
    assert "Content-Security-Policy" in response.headers
    overview = signed_in.get(UI + "/")
    assert "forged-coll" not in overview.text  # nothing was created
    data["csrf"] = valid
    assert signed_in.post(UI + "/collections", data=data).status_code == 303


def test_sign_in_from_another_site_is_refused(server) -> None:
    with browser(server) as client:
        response = client.post(
            UI + "/signin", data={"key": KEY}, headers={"Sec-Fetch-Site": "cross-site"}
        )
        assert response.status_code == 403 and "set-cookie" not in response.headers


def test_the_preview_endpoint_wants_the_token_header(signed_in) -> None:
    form = {"mode": "form", "frequency": "Hour", "interval": "1", "uri": "http://x/"}
    assert signed_in.post(UI + "/preview", data=form).status_code == 403
    token = csrf_token(signed_in.get(UI + "/"))
    answer = signed_in.post(UI + "/preview", data=form, headers={"X-CSRF-Token": token})
    assert answer.status_code == 200 and len(answer.json()["executions"]) == 10


def _principal(name: str) -> str:
    claims = {"claims": [{"typ": "name", "val": name}], "name_typ": "name"}
    return base64.b64encode(json.dumps(claims).encode()).decode()


def test_easy_auth_headers_are_ignored_unless_enabled(server) -> None:
    with browser(server) as client:
        forged = {"X-MS-CLIENT-PRINCIPAL-NAME": "mallory@example.com"}
        assert client.get(UI + "/", headers=forged).status_code == 303


def test_easy_auth_principal_signs_in_when_enabled(settings, clock) -> None:
    trusting = replace(settings, dashboard_easy_auth=True)
    with serve(create_web_app(trusting, clock=clock)) as server, browser(server) as client:
        headers = {"X-MS-CLIENT-PRINCIPAL": _principal("ada@example.com")}
        page = client.get(UI + "/", headers=headers)
        assert page.status_code == 200 and "ada@example.com" in page.text
        data = {"subscription": "s1", "group": "rg", "name": "c1", "csrf": csrf_token(page)}
        assert client.post(UI + "/collections", data=data, headers=headers).status_code == 303
        # Another principal's token does not work for this one.
        other = {"X-MS-CLIENT-PRINCIPAL-NAME": "bob@example.com"}
        data["name"] = "c2"
        assert client.post(UI + "/collections", data=data, headers=other).status_code == 403
        out = client.post(UI + "/signout", data={"csrf": csrf_token(page)}, headers=headers)
        assert out.headers["location"] == "/.auth/logout"  # App Service signs the user out


def test_the_key_never_appears_in_a_page_or_the_log(signed_in, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    pages = [signed_in.get(UI + path) for path in PAGES]
    seen = [r.text for r in pages] + [str(r.headers) for r in pages]
    seen += [signed_in.post(UI + "/signin", data={"key": KEY}).text]
    assert all(KEY not in text for text in seen)
    assert KEY not in caplog.text
