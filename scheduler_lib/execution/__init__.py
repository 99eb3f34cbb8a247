"""The executor: one execution message in, one action run, its history and bookkeeping out.

One state machine, its rules apart from its I/O: `decide` holds the decisions (pure: drop,
skip as a duplicate, postpone, wait for the second, start, retry at T, run the errorAction,
the occurrence over) and `lifecycle` the pure changes of the job's bookkeeping (claims,
counters, state); `execute` drives a delivered message through them, reading and writing
through `claims` (the job entity's ETag loops), `heartbeat`/`watchdog`/`lease` (a claim's
lease), `late` (postponed occurrences), `overlap` (the overlap policy), `finish` (follow-up
and result) and `history` (the entries). `retry`/`backoff` are the retry policy, `pause`
extension 8, `poisoned` records messages the queue gave up on, `outcomes` turns the reports
into events (metrics). The message is `domain/messages.py`, its queue
`store/execution_queue.py`.
"""

from scheduler_lib.domain.executor_state import executor_state
from scheduler_lib.domain.messages import BACKFILL, CATCH_UP, MAIN_ACTION, ExecutionMessage
from scheduler_lib.execution.execute import ExecutionReport, Executor
from scheduler_lib.execution.outcomes import execution_events, poison_events
from scheduler_lib.execution.pause import failure_streak
from scheduler_lib.execution.poisoned import PoisonReport, record_poisoned, record_poisoned_body
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
    "record_poisoned_body",
]
