"""A job's definition as a type: its timing, its action and errorAction, its policies.

`JobDefinition` keeps the canonical JSON document it was read from (`document`: what is
stored, byte for byte as before this type existed, and what the wire layer renders, redacts
and converts between versions) and reads its typed parts from it once, on first use
(`functools.cached_property` on the frozen value). So decoding a stored job is free (a tick
reads thousands and looks at the timing and the jitter of each), a part nobody asks for is
never read, and a stored part that is corrupt (no API would store it) fails where it is
used, naming its field, as it always did, instead of making the whole job unreadable.

The document is canonical because `wire.parse_job` made it so (every validator ran once);
the parts here trust that and only read. Every default of the definition is declared here,
once: the validators write them (`wire/actions.py`), the executor and the dashboard read them.

The actions' own types and the retry policy are in `domain/actions.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property
from typing import Any

from scheduler_lib.domain.actions import Action, action_of
from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule import (
    MAX_JITTER,
    JobTiming,
    Schedule,
    parse_job_timing,
    parse_schedule,
)
from scheduler_lib.timeutil import read_iso_duration


class ConcurrencyPolicy(StrEnum):
    """Extension 2: what a scheduled occurrence does while the previous one still runs."""

    ALLOW = "Allow"  # run alongside (2016-03-01's behaviour; the default)
    FORBID = "Forbid"  # record it as Skipped and do not run it
    BUFFER_ONE = "BufferOne"  # run it as soon as the previous one ends; at most one waits


class MissedRunPolicy(StrEnum):
    """Extension 3: which occurrences missed by downtime run late."""

    SKIP = "Skip"  # one Postponed entry, continue at the next occurrence (the default)
    RUN_LATEST = "RunLatest"  # and run the latest missed occurrence once, late
    RUN_ALL = "RunAll"  # and run the missed ones inside the catch-up window (at most MAX_RUNS)


#: The wire names of the job's 2026-12-01 properties (docs/extensions.md), each declared once,
#: here beside its field: its catalog entry (`wire/`), report strings and the dashboard's
#: words take the name from here (the jitter's is `schedule.MAX_JITTER`).
CONCURRENCY_POLICY = "concurrencyPolicy"
MISSED_RUN_POLICY = "missedRunPolicy"
CATCH_UP_WINDOW = "catchUpWindow"
PAUSE_NOTE = "pauseNote"
PAUSE_AFTER = "pauseAfterConsecutiveFailures"
PLACEHOLDERS = "placeholders"
TAGS = "tags"
NOTIFICATIONS = "notifications"
ALERT_IF_NO_SUCCESS_WITHIN = "alertIfNoSuccessWithin"

DEFAULT_CONCURRENCY_POLICY = ConcurrencyPolicy.ALLOW
DEFAULT_MISSED_RUN_POLICY = MissedRunPolicy.SKIP
DEFAULT_CATCH_UP_WINDOW = timedelta(days=1)
#: What a 2026-12-01 request that leaves `PLACEHOLDERS` out gets (the validator writes it).
#: A job stored without the key (written by 2016-03-01, or before the extension) has none.
DEFAULT_PLACEHOLDERS = True


@dataclass(frozen=True)
class JobDefinition:
    """A job's definition: the canonical stored JSON and its typed parts (read once each).

    Build one with `wire.parse_job` (a request, validated) or `JobDefinition(document)` (a
    stored job, trusted). Never mutate `document`: make a new definition (`with_pause_note`).
    """

    document: Mapping[str, Any]

    @classmethod
    def parsed(cls, document: Mapping[str, Any], timing: JobTiming) -> JobDefinition:
        """A definition whose timing the validation has parsed already: kept, not parsed again."""
        definition = cls(document)
        definition.__dict__["timing"] = timing  # the cached_property's own slot
        return definition

    # -- timing ---------------------------------------------------------------------------

    @cached_property
    def timing(self) -> JobTiming:
        """`startTime` and `recurrence`, parsed (ValidationError naming the field if corrupt)."""
        return parse_job_timing(self.document)

    @property
    def start_time(self) -> datetime | None:
        return self.timing.start_time

    @property
    def recurs(self) -> bool:
        """Whether it has a `recurrence` (without one it runs once)."""
        return self.document.get("recurrence") is not None

    @property
    def timing_key(self) -> tuple[Any, Any]:
        """What decides when the job runs, as stored: a change to it restarts the schedule."""
        return self.document.get("startTime"), self.document.get("recurrence")

    def schedule(self, created_time: datetime) -> Schedule:
        """The job's schedule (`created_time`: the reference of a job without startTime),
        built once per value and creation instant: every record made from this one by
        `dataclasses.replace` shares it, a job whose timing changed is a new value."""
        memo = self.__dict__.get("_schedule")
        if memo is not None and memo[0] == created_time:
            return memo[1]
        schedule = parse_schedule(self.document, now=created_time, timing=self.timing)
        self.__dict__["_schedule"] = (created_time, schedule)
        return schedule

    # -- actions --------------------------------------------------------------------------

    @cached_property
    def action(self) -> Action:
        """The main action (ValidationError if the stored job has none)."""
        found = self.document.get("action")
        if not isinstance(found, Mapping):
            raise ValidationError("action", "the stored job has no action")
        return action_of(found, "action")

    @cached_property
    def error_action(self) -> Action | None:
        found = (self.document.get("action") or {}).get("errorAction")
        return action_of(found, "action.errorAction") if found else None

    @property
    def has_error_action(self) -> bool:
        action = self.document.get("action")
        return isinstance(action, Mapping) and bool(action.get("errorAction"))

    def action_type(self, *, error_action: bool = False) -> str | None:
        """The type of the main action (or of the errorAction) as stored, None without one:
        for labels and counts, so it never fails, also on a job whose action is corrupt."""
        action = self.document.get("action")
        if isinstance(action, Mapping) and error_action:
            action = action.get("errorAction")
        kind = action.get("type") if isinstance(action, Mapping) else None
        return kind if isinstance(kind, str) else None

    # -- the 2026-12-01 policies ----------------------------------------------------------

    @cached_property
    def concurrency_policy(self) -> ConcurrencyPolicy:
        return ConcurrencyPolicy(
            self.document.get(CONCURRENCY_POLICY) or DEFAULT_CONCURRENCY_POLICY
        )

    @cached_property
    def missed_run_policy(self) -> MissedRunPolicy:
        return MissedRunPolicy(self.document.get(MISSED_RUN_POLICY) or DEFAULT_MISSED_RUN_POLICY)

    @cached_property
    def catch_up_window(self) -> timedelta:
        return _duration(self.document.get(CATCH_UP_WINDOW), CATCH_UP_WINDOW) or (
            DEFAULT_CATCH_UP_WINDOW
        )

    @cached_property
    def max_jitter(self) -> timedelta:
        """The jitter bound (zero without one)."""
        return _duration(self.document.get(MAX_JITTER), MAX_JITTER) or timedelta(0)

    @property
    def pause_after(self) -> int | None:
        """Faulted occurrences in a row that disable it (`PAUSE_AFTER`)."""
        value = self.document.get(PAUSE_AFTER)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def pause_note(self) -> str | None:
        return self.document.get(PAUSE_NOTE) or None

    @property
    def placeholders(self) -> bool:
        """Whether `@{...}` placeholders are filled in (see `DEFAULT_PLACEHOLDERS`)."""
        return self.document.get(PLACEHOLDERS) is True

    @property
    def tags(self) -> Mapping[str, str]:
        """The job's own labels (2026-12-01), for filters and bulk selections."""
        tags = self.document.get(TAGS)
        return tags if isinstance(tags, Mapping) else {}

    def has_tag(self, name: str, value: str | None = None) -> bool:
        """Whether it has the tag `name` (any case) and, when `value` is given, that value."""
        wanted = name.lower()
        return any(
            key.lower() == wanted and (value is None or item == value)
            for key, item in self.tags.items()
        )

    @property
    def notifications(self) -> tuple[Mapping[str, Any], ...] | None:
        """Its own notification subscriptions; None when it has none of its own (its
        collection's apply), `()` when it silences them."""
        if NOTIFICATIONS not in self.document:
            return None
        return tuple(self.document.get(NOTIFICATIONS) or ())

    def with_pause_note(self, note: str) -> JobDefinition:
        """The same definition with its pause note set unless it has one (the executor pausing
        the job says why; a note the user wrote is theirs)."""
        if PAUSE_NOTE in self.document:
            return self
        return JobDefinition({**self.document, PAUSE_NOTE: note})


def _duration(value: Any, field: str) -> timedelta | None:
    """A stored duration of days, hours, minutes or seconds (None when absent)."""
    if value is None:
        return None
    parsed = read_iso_duration(str(value), field)
    if not isinstance(parsed, timedelta):
        raise ValidationError(field, "must use days, hours, minutes or seconds")
    return parsed


#: The longest dead-man window; a duration in months or years counts as this.
MAX_ALERT_WINDOW = timedelta(days=366)


def alert_window(text: str) -> timedelta:
    """A dead-man window from its canonical text (a job's or its collection's)."""
    parsed = read_iso_duration(text, ALERT_IF_NO_SUCCESS_WITHIN)
    return parsed if isinstance(parsed, timedelta) else MAX_ALERT_WINDOW
