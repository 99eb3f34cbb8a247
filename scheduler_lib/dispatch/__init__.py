"""The dispatcher: due-index rows in, execution messages out, each job advanced.

`tick` runs one timer tick over the due index in chunks (`chunk`), `job` and `postpone` advance
one job (send its occurrence, or postpone it past a collection quota), `context` holds what a
tick shares, `now` runs the per-job step at once for a job the API just made due, and
`anti_entropy` re-indexes Enabled jobs whose due row was lost. Imports `execution` only for the
message and the queue it writes; `execution` never imports `dispatch`.
"""

from scheduler_lib.dispatch.anti_entropy import RepairReport, due_for_check, repair_jobs
from scheduler_lib.dispatch.catch_up import backfill
from scheduler_lib.dispatch.now import dispatch_if_due
from scheduler_lib.dispatch.tick import Dispatcher, TickReport

__all__ = [
    "Dispatcher",
    "RepairReport",
    "TickReport",
    "backfill",
    "dispatch_if_due",
    "due_for_check",
    "repair_jobs",
]
