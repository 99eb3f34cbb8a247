"""A client that goes away in the middle of its request body (a timeout, a killed script)
is routine, not a server error: one quiet line, no traceback, no ERROR. Against the real
server over a real socket."""

from __future__ import annotations

import logging
import socket
import time
from urllib.parse import urlsplit

from tests.api.conftest import job_path


def _send_half_a_body(base_url: str, path: str) -> None:
    address = urlsplit(base_url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        head = (
            f"PUT {path}?api-version=2016-03-01 HTTP/1.1\r\n"
            f"Host: {address.netloc}\r\n"
            "Authorization: Bearer test-key\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 5000\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"properties": {"action": ')
        time.sleep(0.2)  # let the server start reading the body before the socket closes


def _records_about(caplog, words: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if words in r.getMessage().lower()]


def test_client_disconnecting_mid_body_is_one_quiet_line(server, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    _send_half_a_body(server.base_url, "/api" + job_path())
    deadline = time.monotonic() + 10
    while not _records_about(caplog, "disconnect") and time.monotonic() < deadline:
        time.sleep(0.05)
    records = _records_about(caplog, "disconnect")
    assert records, [r.getMessage() for r in caplog.records]
    assert all(r.levelno <= logging.INFO and r.exc_info is None for r in records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
