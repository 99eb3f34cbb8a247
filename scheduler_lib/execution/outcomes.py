"""The executor's reports as events (`domain.outcomes`): what an attempt did and how its
occurrence ended, read off the report the entry point gets back, so the executor itself
stays as it was and records nothing twice.

An occurrence ends `Completed` when its main action succeeds (on any attempt) and `Faulted`
when its main action fails on its last allowed attempt (the errorAction, if any, follows:
its attempts are attempts, not another outcome). `Postponed` and `Skipped` come from the
dispositions of the same names, `Poisoned` from the poison queue's report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_lib.domain import HistoryStatus
from scheduler_lib.domain.messages import ERROR_ACTION, MAIN_ACTION
from scheduler_lib.domain.outcomes import AttemptEnded, Event, OccurrenceEnded
from scheduler_lib.domain.vocabulary import Outcome

if TYPE_CHECKING:  # only annotations: the reports' modules need nothing of this one
    from scheduler_lib.execution.poisoned import PoisonReport
    from scheduler_lib.execution.report import ExecutionReport

#: Dispositions of a message whose attempt ran (now, or in an earlier delivery: Recorded).
RAN = ("Ran", "Rerun", "Recorded")
_NOT_RUN = {"Postponed": Outcome.POSTPONED, "Skipped": Outcome.SKIPPED}


def execution_events(report: ExecutionReport) -> list[Event]:
    """What one executed message tells (nothing for a duplicate, a drop, a deferral)."""
    kind = report.action_type or ""
    if report.disposition in _NOT_RUN:
        not_run = _NOT_RUN[report.disposition]
        return [OccurrenceEnded(report.job_key, kind, not_run, report.execution_tag)]
    entry = report.history
    if report.disposition not in RAN or entry is None:
        return []
    status = HistoryStatus(entry.status)
    attempt = AttemptEnded(
        report.job_key, kind, report.action_name, report.attempt, status,
        entry.start_time, entry.end_time, report.start_at,
    )  # fmt: skip
    events: list[Event] = [attempt]
    if report.action_name == MAIN_ACTION:
        follow_up = report.follow_up
        ended: Outcome | None = None
        if status is HistoryStatus.COMPLETED:
            ended = Outcome.COMPLETED
        elif follow_up is None or follow_up.action == ERROR_ACTION:  # no retry left
            ended = Outcome.FAULTED
        if ended is not None:
            events.append(
                OccurrenceEnded(
                    report.job_key, kind, ended, report.execution_tag, report.turn, entry.end_time
                )
            )
    return events


def poison_events(report: PoisonReport) -> list[Event]:
    """A poisoned message recorded in its job ends its occurrence as `Poisoned`."""
    if report.disposition != "Recorded":
        return []
    return [OccurrenceEnded(report.job_key, report.action_type or "", Outcome.POISONED)]
