"""Job collection quotas: SKU limits, the collection's own overrides, and the checks.

| SKU | jobs | most frequent recurrence |
|---|---|---|
| Free | 5 | every hour |
| Standard, P10Premium | 50 | every minute |
| P20Premium | 1000 | every minute |

A collection's `quota.maxJobCount` and `quota.maxRecurrence` may tighten these, never
loosen them (400 otherwise). A job breaking them gets 409 QuotaExceeded. How often a job
recurs is judged by what its rule does in steady state: the smallest gap between `SAMPLE`
consecutive executions of the rule (see `service.job_schedule.steady_sample`: not the distance
from now or from startTime, wall-clock time), so a daily job with `minutes: [0, 15, 30, 45]`
counts as every 15 minutes and a daily job created a minute before its hour as daily. A
month counts as its shortest length, 28 days, so that a monthly job fits a monthly quota in
February too. `maxJobOccurrence` caps a job's `recurrence.count`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduler_lib.domain import JobDefinition
from scheduler_lib.errors import QuotaExceededError, ValidationError
from scheduler_lib.wire import jitter
from scheduler_lib.wire.shapes import JSONObject, as_object

SKUS = ("Standard", "Free", "P10Premium", "P20Premium")
MAX_RECURRENCE_FREQUENCIES = ("Minute", "Hour", "Day", "Week", "Month")
PERIOD = {
    "Minute": timedelta(minutes=1),
    "Hour": timedelta(hours=1),
    "Day": timedelta(days=1),
    "Week": timedelta(weeks=1),
    "Month": timedelta(days=28),  # the shortest month: a monthly job's smallest gap
}
SAMPLE = 50


@dataclass(frozen=True)
class Limits:
    max_job_count: int
    min_gap: timedelta
    max_job_occurrence: int | None = None

    def describe_gap(self) -> str:
        for name, period in reversed(PERIOD.items()):
            if self.min_gap % period == timedelta(0):
                count = self.min_gap // period
                return f"every {count} {name.lower()}{'s' if count > 1 else ''}"
        return f"every {self.min_gap}"


SKU_LIMITS = {
    "Free": Limits(5, timedelta(hours=1)),
    "Standard": Limits(50, timedelta(minutes=1)),
    "P10Premium": Limits(50, timedelta(minutes=1)),
    "P20Premium": Limits(1000, timedelta(minutes=1)),
}


def recurrence_period(max_recurrence: JSONObject) -> timedelta:
    """The gap a quota's canonical `maxRecurrence` ({frequency, interval}) allows."""
    frequency, interval = max_recurrence["frequency"], max_recurrence.get("interval", 1)
    if not isinstance(frequency, str) or not isinstance(interval, int):
        raise ValidationError("properties.quota.maxRecurrence", "must be {frequency, interval}")
    return PERIOD[frequency] * interval


def check_collection_quota(sku: str, quota: JSONObject) -> None:
    """A collection's quota may only tighten its SKU's limits."""
    limits = SKU_LIMITS[sku]
    count = quota.get("maxJobCount")
    if isinstance(count, int) and count > limits.max_job_count:
        raise ValidationError(
            "properties.quota.maxJobCount",
            f"must be at most {limits.max_job_count} for the {sku} SKU",
        )
    recurrence = quota.get("maxRecurrence")
    if isinstance(recurrence, dict) and recurrence_period(recurrence) < limits.min_gap:
        raise ValidationError(
            "properties.quota.maxRecurrence",
            f"the {sku} SKU allows recurrences of at most {limits.describe_gap()}",
        )


def effective_limits(properties: JSONObject) -> Limits:
    """The limits a collection's jobs live under: its quota, else its SKU's."""
    sku = as_object(properties.get("sku")).get("name")
    base = SKU_LIMITS.get(sku if isinstance(sku, str) else "Standard", SKU_LIMITS["Standard"])
    quota = as_object(properties.get("quota"))
    recurrence = quota.get("maxRecurrence")
    count, occurrences = quota.get("maxJobCount"), quota.get("maxJobOccurrence")
    return Limits(
        max_job_count=count if isinstance(count, int) else base.max_job_count,
        min_gap=recurrence_period(recurrence)
        if isinstance(recurrence, dict) and recurrence
        else base.min_gap,
        max_job_occurrence=occurrences if isinstance(occurrences, int) else None,
    )


def check_job_count(limits: Limits, existing: int) -> None:
    """Room for one more job in a collection already holding `existing`."""
    if existing >= limits.max_job_count:
        raise QuotaExceededError(
            f"The job collection already holds {existing} jobs; its quota allows "
            f"{limits.max_job_count} (properties.quota.maxJobCount)."
        )


def check_job_recurrence(
    limits: Limits, definition: JobDefinition, executions: Sequence[datetime]
) -> None:
    """The job's upcoming `executions` (first `SAMPLE`) recur no more often than allowed,
    and its jitter (2026-12-01) is less than their smallest gap (a 400)."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(executions)]
    if gaps and min(gaps) < limits.min_gap:
        raise QuotaExceededError(
            f"properties.recurrence: the job runs as often as every {min(gaps)}; the job "
            f"collection allows at most {limits.describe_gap()} (quota.maxRecurrence or SKU)."
        )
    recurrence = definition.timing.recurrence
    count = recurrence.count if recurrence is not None else None
    cap = limits.max_job_occurrence
    if cap is not None and count is not None and count > cap:
        raise QuotaExceededError(
            f"properties.recurrence.count: {count} exceeds the job collection's "
            f"maxJobOccurrence of {cap}."
        )
    jitter.check_gaps(definition, executions)


def check_sku_features(sku: str, definition: JobDefinition) -> None:
    """Free collections cannot authenticate outbound (Basic, certificate, OAuth)."""
    from scheduler_lib.wire.actions import uses_authentication

    if sku == "Free" and uses_authentication(definition.document.get("action") or {}):
        raise QuotaExceededError(
            "properties.action.request.authentication: outbound authentication needs a "
            "Standard or Premium job collection; this one is Free."
        )
