"""Serve an ASGI app (the scheduler API) over real HTTP from a thread, on a free port.

Tests talk to it with real clients (httpx, the azure-mgmt-scheduler SDK, schemathesis), so
routing, headers, status codes and bodies are exercised exactly as in production.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import uvicorn

from devtools.azurite import free_port


@dataclass
class ApiServer:
    base_url: str  # e.g. http://127.0.0.1:PORT
    server: uvicorn.Server
    thread: threading.Thread

    @property
    def api_url(self) -> str:
        """What the SDK's `base_url` is set to."""
        return self.base_url + "/api"


@contextmanager
def serve(app: Any, *, timeout: float = 20.0) -> Iterator[ApiServer]:
    """Run `app` under uvicorn in a daemon thread until the block ends.

    uvicorn's own handling of `X-Forwarded-For`/`-Proto` is off (by default it believes them
    from 127.0.0.1, where every test request comes from): in Azure no uvicorn stands in
    front of the app, so the app alone decides which forwarded headers to trust
    (`scheduler_lib/front_end.py`), and the tests must see that decision, not uvicorn's."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        proxy_headers=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"api-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API server did not start")
        time.sleep(0.01)
    try:
        yield ApiServer(f"http://127.0.0.1:{port}", server, thread)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class ManualClock:
    """A clock the test moves by hand: `create_app(settings, clock=clock)`."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime(2026, 3, 4, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta

    def sleep(self, seconds: float) -> None:
        """What the executor calls to wait for an exact start: time passes, at once."""
        self.advance(timedelta(seconds=seconds))
