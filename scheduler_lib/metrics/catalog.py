"""Every metric the scheduler exposes, defined once: its OpenTelemetry instrument (what the
recorder records and Azure Monitor receives), its Prometheus name (what `GET /api/metrics`
serves), its type, unit, attributes and, for a histogram, its bucket bounds.

Attributes stay bounded (docs/metrics.md): `collection` and `job_name` are a registered
name or `other` (`labels`), `action_type` one of the five action types or `other`,
`outcome` and `action` words of the vocabulary, `queue` one of three queues.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from scheduler_lib.domain import HistoryStatus, Outcome
from scheduler_lib.execution import MAIN_ACTION

#: The OpenTelemetry instrumentation scope of every instrument.
SCOPE = "scheduler"
COLLECTION, ACTION_TYPE, JOB_NAME = "collection", "action_type", "job_name"
OUTCOME, ACTION, QUEUE = "outcome", "action", "queue"


class Kind(StrEnum):
    COUNTER = "counter"
    HISTOGRAM = "histogram"
    GAUGE = "gauge"


@dataclass(frozen=True)
class Metric:
    otel: str  # the instrument's name
    prometheus: str  # the family's name (a counter's samples add `_total`)
    kind: Kind
    unit: str
    description: str
    labels: tuple[str, ...] = ()
    bounds: tuple[float, ...] = ()  # a histogram's bucket upper bounds


#: Seconds late a scheduled start may be: the executor waits for the second itself, so most
#: starts fall in the first buckets; the grace period (5 minutes by default) ends the range.
LATENESS_BOUNDS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: An action's duration: a target's answer within milliseconds up to the HTTP timeout.
DURATION_BOUNDS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

OCCURRENCES = Metric(
    "scheduler.occurrences", "scheduler_occurrences", Kind.COUNTER, "1",
    "Occurrences (and manual runs) by how they ended: "
    + ", ".join(outcome.value for outcome in Outcome),
    (COLLECTION, ACTION_TYPE, JOB_NAME, OUTCOME),
)  # fmt: skip
ATTEMPTS = Metric(
    "scheduler.attempts", "scheduler_attempts", Kind.COUNTER, "1",
    "Attempts of an action that ran, by history status ("
    + ", ".join((HistoryStatus.COMPLETED, HistoryStatus.FAILED)) + f") and action ({MAIN_ACTION} "
    "or ErrorAction); retries included",
    (COLLECTION, ACTION_TYPE, JOB_NAME, ACTION, OUTCOME),
)  # fmt: skip
RETRIES = Metric(
    "scheduler.retries", "scheduler_retries", Kind.COUNTER, "1",
    "Attempts that were retries (attempt 1 and later of an action)",
    (COLLECTION, ACTION_TYPE, JOB_NAME),
)  # fmt: skip
START_LATENESS = Metric(
    "scheduler.start_lateness", "scheduler_start_lateness_seconds", Kind.HISTOGRAM, "s",
    "Seconds from a scheduled occurrence's second (jitter included) to its request's start",
    (COLLECTION, ACTION_TYPE), LATENESS_BOUNDS,
)  # fmt: skip
ACTION_DURATION = Metric(
    "scheduler.action_duration", "scheduler_action_duration_seconds", Kind.HISTOGRAM, "s",
    "Seconds one attempt of an action took, from its request's start to its outcome",
    (COLLECTION, ACTION_TYPE), DURATION_BOUNDS,
)  # fmt: skip
DISPATCHER_TICKS = Metric(
    "scheduler.dispatcher.ticks", "scheduler_dispatcher_ticks", Kind.COUNTER, "1",
    "Completed ticks of the dispatcher's coordinator: a heartbeat, one a minute; Azure "
    "Monitor alerts when none arrives (the gauges below exist only when scraped)",
)  # fmt: skip
QUEUE_MESSAGES = Metric(
    "scheduler.queue.messages", "scheduler_queue_messages", Kind.GAUGE, "1",
    "Approximate messages in a queue (execution, dispatch, poison), delayed ones included",
    (QUEUE,),
)  # fmt: skip
SECONDS_SINCE_TICK = Metric(
    "scheduler.dispatcher.seconds_since_last_tick",
    "scheduler_dispatcher_seconds_since_last_tick", Kind.GAUGE, "s",
    "Seconds since the dispatcher's last completed tick (absent before the first)",
)  # fmt: skip
OVERDUE_JOBS = Metric(
    "scheduler.jobs.overdue", "scheduler_overdue_jobs", Kind.GAUGE, "1",
    "Enabled jobs the last consistency check found overdue without a due-index row",
)  # fmt: skip
INSTANCES = Metric(
    "scheduler.metrics.instances", "scheduler_metrics_instances", Kind.GAUGE, "1",
    "Instances whose counters flushed recently (the rows a scrape sums besides the retired)",
)  # fmt: skip

COUNTERS = (OCCURRENCES, ATTEMPTS, RETRIES, DISPATCHER_TICKS)
HISTOGRAMS = (START_LATENESS, ACTION_DURATION)
GAUGES = (QUEUE_MESSAGES, SECONDS_SINCE_TICK, OVERDUE_JOBS, INSTANCES)
ALL = (*COUNTERS, *HISTOGRAMS, *GAUGES)
BY_OTEL = {metric.otel: metric for metric in ALL}
