"""What one storage request runs in this process, counted by Python function calls (not
timed: a count does not move with the machine's load, so the guard cannot flake).

Storage requests are where the host's CPU per occurrence goes (bench/cost.py, docs/cost.md):
5-7 of them per occurrence, each through the SDK and azure-core. They are sent by
`storage_transport.PoolTransport` on `http.client` connections, without `requests` and urllib3
(whose per-request work cost a third of a point read's client CPU: docs/cost.md, "SDK request
CPU (seventh step)"); these tests fail if a storage request goes through them again.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from functools import partial
from types import FrameType
from typing import Any

from azure.core import MatchConditions

from scheduler_lib.config import Settings
from scheduler_lib.storage_account import client_transport
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.table_client import StoreTableClient
from scheduler_lib.store.tables import TableStore

#: What a storage request no longer runs: `requests` and urllib3 (and azure-core's transport
#: over them), every function of theirs.
SKIPPED = ("requests/", "urllib3/", "azure/core/pipeline/transport/_requests_basic.py")
SEND = ("scheduler_lib/storage_transport.py", "send")


def _calls(action: Callable[[], Any]) -> Counter[tuple[str, str]]:
    """(file under site-packages or the repository, function) of every Python call `action`
    makes here."""
    calls: Counter[tuple[str, str]] = Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            path = code.co_filename.rpartition("site-packages/")[2]
            ours = path.rpartition("/scheduler_lib/")[2]
            calls[("scheduler_lib/" + ours if ours else path, code.co_name)] += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls


def _skipped(calls: Counter[tuple[str, str]]) -> set[str]:
    return {path for path, _ in calls if path.startswith(SKIPPED)}


def test_a_table_request_runs_neither_requests_nor_urllib3(settings: Settings) -> None:
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("JobHistory")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    table.get_entity("p", "r")  # the origin's pool key is worked out once, here

    def requests_made() -> None:
        assert table.get_entity("p", "r")["N"] == 1
        table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})

    calls = _calls(requests_made)
    assert calls[SEND] == 2
    assert _skipped(calls) == set()


def test_a_queue_request_runs_neither_requests_nor_urllib3(settings: Settings) -> None:
    queue = ExecutionQueue(settings).ready()
    queue.discard(queue.send_body("{}", delay_seconds=60))
    calls = _calls(lambda: queue.discard(queue.send_body("{}", delay_seconds=60)))
    assert calls[SEND] == 2
    assert _skipped(calls) == set()


def _sdk_table(store: TableStore, logical: str) -> StoreTableClient:
    """The store's table client with the SDK's own point requests and queries (its
    generated client), on the same connections: the reference the lighter paths are
    measured against."""
    ours = store.table(logical)
    return StoreTableClient(
        store.service.url,
        table_name=ours.table_name,
        credential=store.service.credential,
        changesets=store._changesets,
        entities=None,
        queries=None,
        transport=client_transport(store._connections, {}),
    )


def test_point_requests_and_queries_do_not_run_the_sdks_generated_client(
    settings: Settings,
) -> None:
    """A point read, a conditional write and a query go through `store/entity_requests.py`
    and `store/entity_queries.py` on the transactions' pipeline: less than 60 % of the SDK's
    own calls for each (~45 % measured), none in its generated client."""
    store = TableStore(settings)
    store.ensure_tables()
    ours, sdk = store.table("JobHistory"), _sdk_table(store, "JobHistory")
    row = {"PartitionKey": "p", "RowKey": "r", "N": 1}
    etag = ours.upsert_entity(row)["etag"]
    sdk.get_entity("p", "r")  # the origin's pool key is worked out once, here
    requests: dict[str, Callable[[Any], Any]] = {
        "read": lambda table: table.get_entity("p", "r"),
        "write": lambda table: table.update_entity(
            row, etag=etag, match_condition=MatchConditions.IfNotModified
        ),
        "query": lambda table: list(
            table.query_entities("PartitionKey eq @p", parameters={"p": "p"})
        ),
    }
    for name, request in requests.items():
        mine = _calls(partial(request, ours))
        etag = ours.get_entity("p", "r").metadata["etag"]
        theirs = _calls(partial(request, sdk))
        etag = ours.get_entity("p", "r").metadata["etag"]
        assert not [path for path, _ in mine if "tables/_generated/" in path], name
        assert [path for path, _ in theirs if "tables/_generated/" in path], name
        assert sum(mine.values()) < 0.6 * sum(theirs.values()), name


def test_a_transaction_is_encoded_and_read_without_the_email_package(settings: Settings) -> None:
    """A transaction's multipart body is written and its answer read by `store/changeset.py`,
    not by the `email` package (azure-core's `set_multipart_mixed` and `parts()`): 2,592 of
    the 7,089 calls of a transaction of two entities went there, and it cost 2.8 times a
    single write's calls through the SDK. What is left of `email` is http.client's parse of
    the answer's headers, which every request has (no more than a single write's)."""
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("JobHistory")
    rows = [{"PartitionKey": "p", "RowKey": key, "N": 1} for key in ("a", "b")]
    operations = [("upsert", row) for row in rows]
    table.submit_transaction(operations)  # the origin's pool key is worked out once, here
    sdk = _sdk_table(store, "JobHistory")
    sdk.upsert_entity(rows[0])

    transaction = _calls(lambda: table.submit_transaction(operations))
    single = _calls(lambda: sdk.upsert_entity(rows[0]))

    def in_email(calls: Counter[tuple[str, str]]) -> int:
        return sum(n for (path, _), n in calls.items() if "/email/" in path)

    assert not [path for path, _ in transaction if path.endswith("email/generator.py")]
    assert in_email(transaction) <= in_email(single) * 1.5
    assert sum(transaction.values()) <= sum(single.values()) * 1.5
