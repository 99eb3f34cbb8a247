"""The dispatcher: due-index rows in, execution messages out, each job advanced.

The due index is sharded. `coordinator` is the timer tick: one control message (`control`)
per pair (the tick's minute and the shards with work, grouped while their rows are few);
`pair` handles one under its shards' leases, `shard` reads their due rows and handles them
in chunks (`chunk`); `tick` holds the entry points (and
`run_tick`, a whole tick in one process); `report` what they did. `job` and `postpone` advance
one job (send its occurrence, or postpone it past a collection quota), `context` holds what a
tick shares, `now` runs the per-job step at once for a job the API just made due, and
`anti_entropy` re-indexes Enabled jobs whose due row was lost. Imports `execution` only for the
message and the queue it writes; `execution` never imports `dispatch`.
"""

from scheduler_lib.dispatch.anti_entropy import RepairReport, due_for_check, repair_jobs
from scheduler_lib.dispatch.catch_up import backfill, send_missed
from scheduler_lib.dispatch.control import ControlMessage
from scheduler_lib.dispatch.coordinator import CoordinatorReport
from scheduler_lib.dispatch.now import dispatch_if_due
from scheduler_lib.dispatch.pair import LEASE, PairOutcome, PairResult
from scheduler_lib.dispatch.tick import Dispatcher, TickReport, combine_results

__all__ = [
    "LEASE",
    "ControlMessage",
    "CoordinatorReport",
    "Dispatcher",
    "PairOutcome",
    "PairResult",
    "RepairReport",
    "TickReport",
    "backfill",
    "combine_results",
    "dispatch_if_due",
    "due_for_check",
    "repair_jobs",
    "send_missed",
]
