"""Backfill (api-version 2026-12-01, extension 3): run the occurrences of a past range now,
each with the execution tag its on-time run had. One rule for `POST .../backfill` and the
dashboard's Backfill form: `dispatch/catch_up.backfill` sends the occurrences, the executor
runs them as it runs any message. Bad ranges are ValidationErrors naming `from` or `to`
(`wire/missed.backfill_range`); a job without a recurrence names `properties.recurrence`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scheduler_lib.dispatch import backfill as queue_backfill
from scheduler_lib.service import jobs as service
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import JobName
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.missed import backfill_range


def backfill_job(ctx: ApiContext, name: JobName, body: Any, now: datetime) -> list[dict[str, str]]:
    """Queue the occurrences of the job `name` in the range `body` names (`{from, to}`), as
    `[{expectedExecutionTime, executionTag}]`: the one rule for this route and the
    dashboard's Backfill form. ValidationError naming `from`/`to` (checked before the job is
    read), NotFound for no job."""
    start, end = backfill_range(body, now=now)
    record = service.get_job(ctx, name)
    sent = queue_backfill(ctx.queue, record, start, end, now=now)
    return [
        {"expectedExecutionTime": iso_z(m.occurrence), "executionTag": m.execution_tag}
        for m in sent
    ]
