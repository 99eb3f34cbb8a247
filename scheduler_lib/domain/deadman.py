"""Which dead-man window watches a job: its own `alertIfNoSuccessWithin`, else its
collection's (the default of its jobs), else none. A job's own setting replaces the
collection's whatever their lengths, and a collection's setting is never read when the job
has one.

The one rule for the judge (`notify/deadman.py`, which needs the window's length) and the job
page (`service/deadman.py`, which shows the text the client stored and where it comes from):
the page says what the judge does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.domain.definition import ALERT_IF_NO_SUCCESS_WITHIN, alert_window
from scheduler_lib.domain.jobs import JobRecord


@dataclass(frozen=True)
class DeadmanSetting:
    window: str | None  # the canonical ISO duration stored; None: the job is not watched
    own: bool  # True: the job's own setting; False: its collection's default (or none)

    @property
    def duration(self) -> timedelta | None:
        """The window's length, as the judge counts it (None: not watched)."""
        return alert_window(self.window) if self.window is not None else None


def deadman_setting(
    job: JobRecord, collection: Callable[[], CollectionRecord | None]
) -> DeadmanSetting:
    """`job`'s window; `collection` (its collection, None when there is none) is called only
    when the job has no window of its own, so a caller that must read it from storage reads
    it only then."""
    own = job.definition.document.get(ALERT_IF_NO_SUCCESS_WITHIN)
    if isinstance(own, str):
        return DeadmanSetting(own, True)
    record = collection()
    default = record.properties.get(ALERT_IF_NO_SUCCESS_WITHIN) if record else None
    return DeadmanSetting(default if isinstance(default, str) else None, False)
