"""The paged reads: a collection's jobs and a job's history, one page at a time, and a
job's newest notification deliveries (`notices_page`).

The REST API's lists (`Jobs_List`, `Jobs_ListJobHistory`) and the dashboard's pages read
through these, so both see the same pages in the same order (jobs by name, history newest
first) and the same continuation tokens. `HistoryEntry` is what a history page holds.
"""

from __future__ import annotations

from scheduler_lib.domain import JobRecord
from scheduler_lib.service.context import ApiContext
from scheduler_lib.store import HISTORY_KEEP, HistoryEntry, NoticeRecord, list_history, list_notices
from scheduler_lib.store import jobs as job_store

__all__ = [
    "HISTORY_KEEP",
    "HistoryEntry",
    "NoticeRecord",
    "history_page",
    "jobs_page",
    "notices_page",
]


def jobs_page(
    ctx: ApiContext,
    where: tuple[str, str, str],
    *,
    state: str | None = None,
    page_size: int = 100,
    continuation: str | None = None,
) -> tuple[list[JobRecord], str | None]:
    """One page of the jobs of the collection `where` (subscription, resource group,
    collection) in name order, with `state` when given, and the token of the next page."""
    return job_store.list_jobs(
        ctx.store, *where, state=state, page_size=page_size, continuation=continuation
    )


def history_page(
    ctx: ApiContext,
    job: JobRecord,
    *,
    status: str | None = None,
    page_size: int = 100,
    continuation: str | None = None,
) -> tuple[list[HistoryEntry], str | None]:
    """One page of `job`'s history, newest first (with `status` when given), and the token
    of the next page; `page_size=HISTORY_KEEP` reads everything a job keeps."""
    return list_history(
        ctx.store, job.history_key, status=status, page_size=page_size, continuation=continuation
    )


def notices_page(ctx: ApiContext, job: JobRecord, *, limit: int) -> list[NoticeRecord]:
    """The newest `limit` notifications of `job` with how their delivery went
    (`docs/notifications.md`)."""
    return list_notices(ctx.store, job.key, limit=limit)
