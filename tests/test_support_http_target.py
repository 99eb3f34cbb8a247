"""The HttpTarget test fixture answers as scripted (other suites rely on these rules)."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from tests.support.http_target import HttpTarget


def test_rules_path_first_then_general_then_default() -> None:
    with HttpTarget() as target:
        target.reply(503, "busy", times=2)
        target.reply(201, "made", path="/create")
        answers = [
            (r.status_code, r.text)
            for r in (
                requests.get(target.url_for(p), timeout=5)
                for p in ["/a", "/create?x=1", "/b", "/c"]
            )
        ]
    assert answers == [(503, "busy"), (201, "made"), (503, "busy"), (200, "OK")]


def test_records_requests_and_echoes_with_a_body_function() -> None:
    with HttpTarget() as target:
        target.reply(200, lambda r: f"{r.method} {r.header('X-Test')} {r.text}")
        response = requests.put(
            target.url_for("/p"), data="body", headers={"X-Test": "1"}, timeout=5
        )
        [recorded] = target.requests
    assert response.text == "PUT 1 body"
    assert (recorded.method, recorded.path, recorded.body) == ("PUT", "/p", b"body")
    assert recorded.client_certificate_subject is None


def test_wait_for_requests_blocks_until_another_thread_calls() -> None:
    with HttpTarget() as target:
        caller = threading.Thread(target=requests.get, args=(target.url,), kwargs={"timeout": 5})
        caller.start()
        assert len(target.wait_for_requests(1, timeout=5)) == 1
        caller.join()
        with pytest.raises(AssertionError, match="1 requests arrived, not 2"):
            target.wait_for_requests(2, timeout=0.05)


def test_close_releases_a_delayed_reply_at_once() -> None:
    target = HttpTarget()
    target.reply(200, "late", delay=30)
    with pytest.raises(requests.Timeout):
        requests.get(target.url, timeout=0.1)
    started = time.monotonic()
    target.close()
    assert time.monotonic() - started < 2
