"""Signing out ends the session on the server, not only in the browser: a copy of the cookie
taken before is refused afterwards, on every instance of the app (the session's record is
in Table storage, which they share). Removing the key that signed a session in (the
documented rotation) ends it too. Real HTTP against real apps over the test's Azurite."""

from __future__ import annotations

from dataclasses import replace

import httpx

from scheduler_lib.dashboard.session import COOKIE
from scheduler_lib.runtime import create_web_app
from tests.dashboard.conftest import KEY, UI, browser, csrf_token, sign_in
from tests.support.api_server import ApiServer, serve

PREVIEW = {"mode": "form", "frequency": "Hour", "interval": "1", "uri": "http://x/"}


def _sign_out(client: httpx.Client) -> None:
    token = csrf_token(client.get(UI + "/"))
    out = client.post(UI + "/signout", data={"csrf": token})
    assert out.status_code == 303 and out.headers["location"] == UI + "/signin"


def _replay(server: ApiServer, cookie: str) -> httpx.Client:
    client = browser(server)
    client.cookies.set(COOKIE, cookie, path=UI)
    return client


def test_a_cookie_copied_before_sign_out_is_refused_after_it(server, signed_in) -> None:
    cookie = signed_in.cookies[COOKIE]
    token = csrf_token(signed_in.get(UI + "/"))
    _sign_out(signed_in)
    with _replay(server, cookie) as replay:
        page = replay.get(UI + "/")
        assert page.status_code == 303 and page.headers["location"] == UI + "/signin"
        answer = replay.post(UI + "/preview", data=PREVIEW, headers={"X-CSRF-Token": token})
        assert answer.status_code == 401
        data = {"csrf": token, "subscription": "s1", "group": "rg", "name": "after-signout"}
        assert replay.post(UI + "/collections", data=data).headers["location"] == UI + "/signin"
    with browser(server) as fresh:  # signing in again works
        assert sign_in(fresh).status_code == 303 and fresh.get(UI + "/").status_code == 200
        assert "after-signout" not in fresh.get(UI + "/").text


def test_signing_out_ends_only_that_session(server, signed_in) -> None:
    with browser(server) as other:
        assert sign_in(other).status_code == 303
        _sign_out(other)
        assert other.get(UI + "/").status_code == 303
    assert signed_in.get(UI + "/").status_code == 200


def test_sign_out_on_one_instance_ends_the_session_on_every_instance(settings, clock) -> None:
    first_app, second_app = (
        create_web_app(settings, clock=clock),
        create_web_app(settings, clock=clock),
    )
    with serve(first_app) as first, serve(second_app) as second:
        with browser(first) as client:
            assert sign_in(client).status_code == 303
            cookie = client.cookies[COOKIE]
        with _replay(second, cookie) as on_second:
            assert on_second.get(UI + "/").status_code == 200
            _sign_out(on_second)
        with _replay(first, cookie) as on_first:
            assert on_first.get(UI + "/").status_code == 303


def test_rotating_the_api_key_ends_the_sessions_the_old_key_opened(settings, clock) -> None:
    """docs/deploy.md's rotation: both keys, then only the new one (each step a restart,
    here a new app on the same storage)."""
    both = serve(create_web_app(replace(settings, api_keys=(KEY, "new-key")), clock=clock))
    with both as server, browser(server) as old, browser(server) as new:
        assert sign_in(old, KEY).status_code == 303
        assert sign_in(new, "new-key").status_code == 303
        cookies = old.cookies[COOKIE], new.cookies[COOKIE]
    rotated = serve(create_web_app(replace(settings, api_keys=("new-key",)), clock=clock))
    with rotated as server, _replay(server, cookies[0]) as old, _replay(server, cookies[1]) as new:
        assert old.get(UI + "/").status_code == 303
        assert new.get(UI + "/").status_code == 200
