"""What one storage request runs in this process, counted by Python function calls (not
timed: a count does not move with the machine's load, so the guard cannot flake).

Storage requests are where the host's CPU per occurrence goes (bench/cost.py, docs/cost.md):
~13 of them per occurrence, each through azure-core, urllib3 and http.client. The transport
sends azure-core's request to urllib3's pool itself (`storage_transport.PoolTransport`), not
through `requests`; these tests fail if `requests` comes back under a storage request, or if
a request's calls grow past the counts measured with this transport.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

from scheduler_lib.config import Settings
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore

#: Python calls (C functions not counted) the two requests of each test ran in this process
#: when the transport went straight to urllib3 (`storage_transport`): 1,979 and 1,996, here
#: with ~3 % to spare. Through `requests` (azure-core's `RequestsTransport` on the trimmed
#: session before) they were 2,470 and 2,442.
MOST_CALLS = {"read and upsert": 2_040, "queue send and delete": 2_060}

#: Where a request would run `requests` or azure-core's transport on it.
REQUESTS_STACK = ("requests/", "azure/core/pipeline/transport/_requests_basic.py")


def _calls(action: Callable[[], Any]) -> Counter[tuple[str, str]]:
    """(file under site-packages, function) of every Python call `action` makes here."""
    calls: Counter[tuple[str, str]] = Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            calls[(code.co_filename.rpartition("site-packages/")[2], code.co_name)] += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls


def _through(calls: Counter[tuple[str, str]]) -> set[str]:
    """The files of the `requests` stack that ran."""
    return {file for file, _ in calls if file.startswith(REQUESTS_STACK)}


def test_a_table_request_goes_straight_to_urllib3(settings: Settings) -> None:
    """Fails on the transport before (azure-core's `RequestsTransport` on a `requests`
    session): 2,470 calls for these two requests, `requests` among them."""
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("JobHistory")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    table.get_entity("p", "r")  # the origin's pool is made once, here

    def requests_made() -> None:
        assert table.get_entity("p", "r")["N"] == 1
        table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})

    calls = _calls(requests_made)
    assert calls[("urllib3/connectionpool.py", "urlopen")] == 2
    assert _through(calls) == set()
    assert sum(calls.values()) <= MOST_CALLS["read and upsert"]


def test_a_queue_request_goes_straight_to_urllib3(settings: Settings) -> None:
    """Fails on the transport before: 2,442 calls for a send and a delete."""
    queue = ExecutionQueue(settings).ready()
    queue.discard(queue.send_body("{}", delay_seconds=60))
    calls = _calls(lambda: queue.discard(queue.send_body("{}", delay_seconds=60)))
    assert calls[("urllib3/connectionpool.py", "urlopen")] == 2
    assert _through(calls) == set()
    assert sum(calls.values()) <= MOST_CALLS["queue send and delete"]
