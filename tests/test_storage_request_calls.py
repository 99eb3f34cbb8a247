"""What one storage request runs in this process, counted by Python function calls (not
timed: a count does not move with the machine's load, so the guard cannot flake).

Storage requests are where the host's CPU per occurrence goes (bench/cost.py, docs/cost.md):
~15 of them per occurrence, each through azure-core, `requests`, urllib3 and http.client. The
per-request work `requests` does that a storage request has no use for is skipped
(`storage_account.DirectSession`, `DirectAdapter`); these tests fail if it comes back.
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

#: `requests` functions that ran for every storage request before: parsing azure-core's URL
#: again, its auth from the URL, an empty cookie jar, the proxy lookup, the pool key's
#: attributes (a URL parse and a stat of the CA bundle), the Set-Cookie jar, and the regex
#: check of each header the SDK set.
SKIPPED = {
    ("requests/models.py", "prepare_url"),
    ("requests/models.py", "prepare_auth"),
    ("requests/models.py", "prepare_cookies"),
    ("requests/utils.py", "select_proxy"),
    ("requests/adapters.py", "_urllib3_request_context"),
    ("requests/cookies.py", "extract_cookies_to_jar"),
    ("requests/utils.py", "check_header_validity"),
}


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


def test_a_table_request_runs_none_of_requests_per_request_work(settings: Settings) -> None:
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("JobHistory")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    table.get_entity("p", "r")  # the origin's pool key is worked out once, here

    def requests_made() -> None:
        assert table.get_entity("p", "r")["N"] == 1
        table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})

    calls = _calls(requests_made)
    assert calls[("azure/core/pipeline/transport/_requests_basic.py", "send")] == 2
    assert {call for call in SKIPPED if calls[call]} == set()


def test_a_queue_request_runs_none_of_requests_per_request_work(settings: Settings) -> None:
    queue = ExecutionQueue(settings).ready()
    queue.discard(queue.send_body("{}", delay_seconds=60))
    calls = _calls(lambda: queue.discard(queue.send_body("{}", delay_seconds=60)))
    assert calls[("azure/core/pipeline/transport/_requests_basic.py", "send")] == 2
    assert {call for call in SKIPPED if calls[call]} == set()


def test_a_transaction_is_encoded_and_read_without_the_email_package(settings: Settings) -> None:
    """A transaction's multipart body is written and its answer read by `store/changeset.py`,
    not by the `email` package (azure-core's `set_multipart_mixed` and `parts()`): 2,592 of
    the 7,089 calls of a transaction of two entities went there, and it cost 2.8 times a
    single write's calls. What is left of `email` is http.client's parse of the answer's
    headers, which every request has (no more than a single write's)."""
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("JobHistory")
    rows = [{"PartitionKey": "p", "RowKey": key, "N": 1} for key in ("a", "b")]
    operations = [("upsert", row) for row in rows]
    table.submit_transaction(operations)  # the origin's pool key is worked out once, here

    transaction = _calls(lambda: table.submit_transaction(operations))
    single = _calls(lambda: table.upsert_entity(rows[0]))

    def in_email(calls: Counter[tuple[str, str]]) -> int:
        return sum(n for (path, _), n in calls.items() if "/email/" in path)

    assert not [path for path, _ in transaction if path.endswith("email/generator.py")]
    assert in_email(transaction) <= in_email(single) * 1.5
    assert sum(transaction.values()) <= sum(single.values()) * 1.5
