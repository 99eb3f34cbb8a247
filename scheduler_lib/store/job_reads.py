"""Many jobs in few requests: up to 14 jobs of a collection in one query (issue 22,
docs/cost.md "Jobs read in one query (ninth step)").

Why: the dispatcher reads every job it sends an occurrence of, and a batch message's
members (occurrences starting in the same second) each read their job when delivered: one
point read per job, each billed as a transaction and each costing the client a request's
CPU. A query naming 14 row keys of one partition is one request, billed once, and answers
with the same entities and ETags as their point reads.

Why 14: Azure Tables allows at most 15 comparisons in a `$filter` (Microsoft's "Querying
tables and entities"), and the PartitionKey's is one of them. A job alone in its collection
keeps its point read (a point read costs the service less than a query); a query that fails
is not retried as such: its jobs are read one by one, so one unreadable job still fails
alone, as it did when each had its own read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from scheduler_lib.domain import JobRecord
from scheduler_lib.store.entity import EntityValue
from scheduler_lib.store.jobs import TABLE, find_job, job_from_entity
from scheduler_lib.store.tables import TableStore, storage_errors

log = logging.getLogger(__name__)

#: Jobs one `read_jobs` query names (see the module docstring).
JOBS_PER_READ = 14

#: A job as read: the record, None when it is not there, or the error reading it.
Found = JobRecord | Exception | None
Group = list[str]


def read_jobs(
    store: TableStore, partition: str, rows: Sequence[str]
) -> dict[str, JobRecord | Exception]:
    """The jobs of one collection (`partition`) whose row keys are `rows` (1 to
    `JOBS_PER_READ`), in one query: each job as read, or the error decoding it (it fails
    alone, as its own read would); a job that is not there is left out. A failed request
    raises, as `get_job`'s would."""
    if not 1 <= len(rows) <= JOBS_PER_READ:
        raise ValueError(f"read_jobs reads 1 to {JOBS_PER_READ} jobs, not {len(rows)}")
    named = " or ".join(f"RowKey eq @r{i}" for i in range(len(rows)))
    parameters: dict[str, EntityValue] = {"p": partition}
    parameters.update({f"r{i}": row for i, row in enumerate(rows)})
    found: dict[str, JobRecord | Exception] = {}
    with storage_errors("Jobs"):
        query = f"PartitionKey eq @p and ( {named} )"  # parameters end at a space
        for entity in store.table(TABLE).query_entities(query, parameters=parameters):
            try:
                found[entity["RowKey"]] = job_from_entity(entity)
            except Exception as exc:  # one job's entity that does not decode, not the request
                found[entity["RowKey"]] = exc
    return found


def find_jobs(
    store: TableStore,
    keys: Iterable[str],
    *,
    run: Callable[
        [Callable[[Group], dict[str, Found]], list[Group]], Iterable[dict[str, Found]]
    ] = map,
) -> dict[str, Found]:
    """Each job of `keys` (`JobRecord.key`s) as `find_job` would find it, in as few requests
    as `read_jobs` allows; `run` maps over the requests (a pool's `map` sends them at once).
    What reading a job raised is its value, not raised: the caller decides per job."""
    by_collection: dict[str, list[str]] = {}
    for key in keys:
        by_collection.setdefault(key.rpartition("|")[0], []).append(key)
    groups = [
        members[i : i + JOBS_PER_READ]
        for members in by_collection.values()
        for i in range(0, len(members), JOBS_PER_READ)
    ]
    found: dict[str, Found] = {}
    for read in run(lambda group: _find_group(store, group), groups):
        found.update(read)
    return found


def _find_group(store: TableStore, keys: Group) -> dict[str, Found]:
    if len(keys) > 1:
        partition, rows = keys[0].rpartition("|")[0], [key.rpartition("|")[2] for key in keys]
        try:
            found = read_jobs(store, partition, rows)
        except Exception:
            log.warning("reading %d jobs in one query failed; reading each", len(keys),
                        exc_info=True)  # fmt: skip
        else:
            return {key: found.get(row) for key, row in zip(keys, rows, strict=True)}
    return {key: _find_one(store, key) for key in keys}


def _find_one(store: TableStore, key: str) -> Found:
    try:
        with storage_errors(f"Job '{key.rpartition('|')[2]}'"):
            return find_job(store, key)
    except Exception as exc:
        return exc
