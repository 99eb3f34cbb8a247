"""Notifications and the dead-man switch (docs/notifications.md).

The executor and the dispatcher only emit events (`domain/outcomes.py`); the runtime hands
them to `Notifier.observe`, which puts a small notice on the notifications queue. That
queue's own function (`Notifier.handle`) reads the job's subscriptions, de-duplicates,
formats (Json, Slack, Teams), signs and delivers through the actions' egress policy, retries,
and records each delivery. The dead-man switch is judged in the dispatcher's upkeep from a
deadline index (`deadman.judge`).

- `notice`: the queued notice and its derived id. `rules`: events -> notices.
- `subscriptions`: which subscriptions apply (which window: `domain.deadman`). `formats`:
  the bodies.
- `deliver`: one POST through the Http action. `worker`: one notice, recorded, retried.
- `deadman`: deadlines armed, judged. `notifier`: the entry points.
"""

from scheduler_lib.notify.deadman import arm_collection, arm_job
from scheduler_lib.notify.notice import Notice
from scheduler_lib.notify.notifier import Notifier, watched_default_changed
from scheduler_lib.notify.subscriptions import check_destinations
from scheduler_lib.notify.worker import NotifyReport

__all__ = [
    "Notice",
    "Notifier",
    "NotifyReport",
    "arm_collection",
    "arm_job",
    "check_destinations",
    "watched_default_changed",
]
