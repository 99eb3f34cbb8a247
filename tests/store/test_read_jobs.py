"""`read_jobs`: up to 14 jobs of a collection in one query (the dispatcher's reads of a
chunk's jobs), against Azurite: the same records `get_job` reads, one request."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.store import JOBS_PER_READ, TableStore, get_job, read_jobs
from scheduler_lib.store.jobs import TABLE
from tests.dispatch.support import RG, SUB, T0, definition, make_collection, make_job
from tests.support.storage_counts import methods_since


def test_the_named_jobs_come_back_as_their_own_reads_find_them(counting: TableStore) -> None:
    make_collection(counting, "c2")
    due = T0 + timedelta(minutes=5)
    jobs = [make_job(counting, f"job-{i:02d}", definition(due)) for i in range(JOBS_PER_READ)]
    make_job(counting, "job-00", definition(due), collection="c2")  # same name, other collection
    make_job(counting, "job-99", definition(due))  # not asked for
    rows = [job.name.lower() for job in jobs[:-1]] + ["gone"]
    before = storage_calls.snapshot()

    found = read_jobs(counting, jobs[0].collection_key, rows)

    assert methods_since(before, "store.job_reads [table ") == {"GET": 1}  # one query
    assert set(found) == set(rows) - {"gone"}  # a job that is not there is left out
    for job in jobs[:-1]:
        record = found[job.name.lower()]
        assert record == get_job(counting, SUB, RG, "c1", job.name)  # ETag included
        assert record.etag


@pytest.mark.parametrize("count", [0, JOBS_PER_READ + 1])
def test_more_than_a_filter_can_name_or_none_is_refused(store: TableStore, count: int) -> None:
    """Azure Tables allows 15 comparisons in a $filter: 14 row keys and the partition's."""
    with pytest.raises(ValueError, match="1 to 14"):
        read_jobs(store, "sub|rg|c1", [f"j{i}" for i in range(count)])


def test_an_entity_that_does_not_decode_is_that_jobs_error_alone(store: TableStore) -> None:
    due = T0 + timedelta(minutes=5)
    good, bad = (make_job(store, name, definition(due)) for name in ("good", "bad"))
    table = store.table(TABLE)
    entity = table.get_entity(bad.collection_key, "bad")
    entity["Bookkeeping"] = "{not json"
    table.update_entity(entity)

    found = read_jobs(store, good.collection_key, ["good", "bad"])

    assert found["good"] == get_job(store, SUB, RG, "c1", "good")
    assert isinstance(found["bad"], Exception)
