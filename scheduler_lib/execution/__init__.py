"""The executor: one execution message in, one action run, its history and bookkeeping out.

`execute` handles a delivered message (claim, run, history, retry, errorAction), `claims` and
`lifecycle` keep the job's execution bookkeeping (at-most-once claims, counts, state),
`finish` sends an attempt's follow-up and writes its result, `retry` decides and schedules
redeliveries, `late` records occurrences that came too late to run, `poisoned` records
messages the queue gave up on, `outcomes` turns the reports into events (metrics).
`messages` and `queue` are the message and the Storage queue between the dispatcher and the
executor.
"""

from scheduler_lib.domain.messages import BACKFILL, CATCH_UP, MAIN_ACTION, ExecutionMessage
from scheduler_lib.execution.execute import ExecutionReport, Executor
from scheduler_lib.execution.lifecycle import executor_state
from scheduler_lib.execution.outcomes import execution_events, poison_events
from scheduler_lib.execution.pause import failure_streak
from scheduler_lib.execution.poisoned import PoisonReport, record_poisoned
from scheduler_lib.store.execution_queue import ExecutionQueue, ReceivedMessage

__all__ = [
    "BACKFILL",
    "CATCH_UP",
    "MAIN_ACTION",
    "ExecutionMessage",
    "ExecutionQueue",
    "ExecutionReport",
    "Executor",
    "PoisonReport",
    "ReceivedMessage",
    "execution_events",
    "executor_state",
    "failure_streak",
    "poison_events",
    "record_poisoned",
]
