"""The import against the real API: an API server over the test's own Azurite tables, its
clock set by the test, and the CLI run in-process against it over HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from scheduler_lib.__main__ import main
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.migrate.compare import COMPARE_VERSION
from tests.api.conftest import api_client
from tests.support.api_server import ApiServer, ManualClock, serve

FIXTURES = Path(__file__).parent / "fixtures"
SUB = "00000000-0000-0000-0000-00000000cafe"
#: Monday 2026-03-02 09:00 UTC: the server's clock, and the instant previews start from.
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@dataclass
class Imported:
    code: int
    out: str
    err: str


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def server(settings: Settings, clock: ManualClock) -> Iterator[ApiServer]:
    with serve(create_app(settings, clock=clock)) as running:
        yield running


@pytest.fixture
def client(server: ApiServer) -> Iterator[httpx.Client]:
    # Read back in the canonical form the import compares with (`compare.COMPARE_VERSION`):
    # 2016-03-01 answers in each client's own spelling (lower-case enums, TimeSpans as sent).
    with api_client(server, version=COMPARE_VERSION) as http:
        yield http


@pytest.fixture
def run_import(
    server: ApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Imported]:
    """`python -m scheduler_lib import ...` against the test's server (its key from the
    environment, as a deployed app's would be)."""
    monkeypatch.setenv("SCHEDULER_API_KEY", "test-key")

    def run(*args: str) -> Imported:
        capsys.readouterr()
        code = main(["import", *args, "--subscription", SUB, "--url", server.api_url])
        captured = capsys.readouterr()
        return Imported(code, captured.out, captured.err)

    return run


def path(*parts: str) -> str:
    """An ARM path of the test subscription: rg, collection[, job]."""
    group, collection, *job = parts
    provider = f"/subscriptions/{SUB}/resourceGroups/{group}/providers/Microsoft.Scheduler"
    base = f"{provider}/jobCollections/{collection}"
    return base + (f"/jobs/{job[0]}" if job else "")


def next_runs(client: httpx.Client, job: dict, count: int = 5) -> list[str]:
    """The job's next runs as of NOW, from what GET returned, through the API's preview."""
    body = {"properties": job["properties"], "count": count, "now": NOW.isoformat()}
    answer = client.post("/preview", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["errors"] == []
    return answer.json()["executions"]
