"""What `GET /api/health` reports: can the scheduler reach its storage, and is the
dispatcher ticking?

A probe (App Service health check, a load balancer, a monitor) gets 503 only when storage is
unreachable, because then nothing works. A dispatcher that has not ticked for a while leaves
the API usable, so that is `Degraded` with 200, and the body says how long ago it last ran —
the number an operator alerts on. So is a non-zero `jobs.overdue`: the last consistency
check (`anti_entropy`) found Enabled jobs whose next execution had passed without a due-index
row to run it (it repaired them; something lost their rows).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal, TypedDict

from azure.core.exceptions import AzureError

from scheduler_lib.store import (
    DispatcherState,
    TableStore,
    get_dispatcher_state,
    get_repair_state,
)
from scheduler_lib.timeutil import iso_z

#: The timer fires every minute; three missed ticks in a row is worth a look.
STALE_AFTER = timedelta(minutes=3)

Status = Literal["Healthy", "Degraded", "Unhealthy"]


class StorageHealth(TypedDict, total=False):
    reachable: bool
    error: str  # the exception's type name when unreachable (never its text: no secrets)


class DispatcherHealth(TypedDict, total=False):
    lastTick: str | None
    secondsSinceLastTick: float | None
    cursor: str | None
    lastTickSummary: dict[str, int | float | None]


class JobsHealth(TypedDict):
    overdue: int
    checkedAt: str | None


class ConfigurationHealth(TypedDict):
    unresolved: list[str]
    message: str | None


class HealthBody(TypedDict, total=False):
    """The body of `GET /api/health` (what a monitor reads: its keys are the contract)."""

    status: Status
    storage: StorageHealth
    dispatcher: DispatcherHealth
    jobs: JobsHealth
    configuration: ConfigurationHealth


def check_health(store: TableStore, *, now: datetime) -> tuple[int, HealthBody]:
    """The HTTP status and the body of the health endpoint. App settings whose Key Vault
    reference did not resolve (names only) make it Unhealthy: the API is closed until they
    resolve, though the dispatcher and executor keep running."""
    status, body = _check_storage(store, now=now)
    settings = store.settings
    if settings.unresolved_references:
        body = {
            **body,
            "status": "Unhealthy",
            "configuration": {
                "unresolved": list(settings.unresolved_references),
                "message": settings.configuration_problem,
            },
        }
        status = 503
    return status, body


def seconds_since_last_tick(state: DispatcherState, *, now: datetime) -> float | None:
    """How long ago the dispatcher's last tick ran (None: it never ran). The metrics'
    gauge of the same name reads it here."""
    if state.last_tick_at is None:
        return None
    return (now - state.last_tick_at).total_seconds()


def overdue_jobs(repair: dict[str, Any]) -> int:
    """Enabled jobs the last consistency check found overdue (from `get_repair_state`)."""
    return int(repair.get("overdue", 0))


def _check_storage(store: TableStore, *, now: datetime) -> tuple[int, HealthBody]:
    try:
        state = get_dispatcher_state(store.ready())
    except AzureError as exc:
        reason = type(exc).__name__
        return 503, {"status": "Unhealthy", "storage": {"reachable": False, "error": reason}}
    dispatcher: DispatcherHealth = {"lastTick": None, "secondsSinceLastTick": None}
    status: Status = "Degraded"
    age = seconds_since_last_tick(state, now=now)
    if state.last_tick_at is not None and age is not None:
        dispatcher["lastTick"] = iso_z(state.last_tick_at)
        dispatcher["secondsSinceLastTick"] = round(age, 1)
        dispatcher["cursor"] = iso_z(state.cursor) if state.cursor else None
        tick = state.last_tick
        shown: dict[str, int | float | None] = {
            name: tick.counts[name]
            for name in ("messages_sent", "queue_sends", "postponed", "stale_dropped", "failed")
            if name in tick.counts
        }
        if tick.duration is not None:
            shown["duration"] = tick.duration
        dispatcher["lastTickSummary"] = shown
        if age <= STALE_AFTER.total_seconds():
            status = "Healthy"
    repair = get_repair_state(store)
    jobs: JobsHealth = {"overdue": overdue_jobs(repair), "checkedAt": repair.get("checked_at")}
    if jobs["overdue"]:
        status = "Degraded"  # jobs had lost their due-index rows (repaired; worth a look)
    return 200, {
        "status": status,
        "storage": {"reachable": True},
        "dispatcher": dispatcher,
        "jobs": jobs,
    }
