"""The Functions app: wires the triggers to the scheduler's runtime. No logic here.

- HTTP: the Azure Scheduler-compatible API (FastAPI, served through AsgiFunctionApp).
- Timer, every minute at second 0: the dispatcher's coordinator (one control message per
  due pair: the minute and the due index's shards with work, grouped while rows are few).
- Queue, on the dispatch queue: one pair dispatched under its shards' leases.
- Queue, on the execution queue: one execution message, or a batch of them run at once
  (poisoned by the host after host.json's maxDequeueCount failed attempts).
- Queue, on its poison queue: a poisoned message, recorded in its job's history and status.
- Queue, on the notifications queue (beside the execution queue): one notice, delivered
  to its job's webhook subscriptions (docs/notifications.md).
- Timer, daily at 03:17 UTC: history retention, deletion of long-ended jobs, the full
  consistency check.
"""

import azure.functions as func

from scheduler_lib.config import Settings
from scheduler_lib.heap import freeze_startup_objects
from scheduler_lib.housekeeping import DAILY_SCHEDULE
from scheduler_lib.logs import configure_logging
from scheduler_lib.runtime import Runtime

settings = Settings.from_env()
# The worker itself exports to App Insights (PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY).
configure_logging(settings, console=False, export=False)
runtime = Runtime(settings)
runtime.keep_metrics_flushed()  # this instance's counters reach its row (GET /api/metrics)
freeze_startup_objects()  # the startup's objects, out of every full collection's scan

app = func.AsgiFunctionApp(app=runtime.api, http_auth_level=func.AuthLevel.ANONYMOUS)


@app.timer_trigger(arg_name="timer", schedule="0 * * * * *", use_monitor=True)
def dispatcher(timer: func.TimerRequest) -> None:
    runtime.coordinate()


@app.queue_trigger(
    arg_name="msg", queue_name="%SCHEDULER_DISPATCH_QUEUE%", connection="AzureWebJobsStorage"
)
def dispatch_pair(msg: func.QueueMessage) -> None:
    runtime.dispatch(msg.get_body().decode("utf-8"))


@app.queue_trigger(
    arg_name="msg", queue_name="%SCHEDULER_EXECUTION_QUEUE%", connection="AzureWebJobsStorage"
)
def executor(msg: func.QueueMessage) -> None:
    runtime.execute_queued(
        msg.get_body().decode("utf-8"),
        message_id=msg.id or "",
        dequeue_count=msg.dequeue_count or 1,
    )


@app.queue_trigger(
    arg_name="msg",
    queue_name="%SCHEDULER_EXECUTION_QUEUE%-poison",
    connection="AzureWebJobsStorage",
)
def poisoned(msg: func.QueueMessage) -> None:
    runtime.record_poisoned(msg.get_body().decode("utf-8"), message_id=msg.id or "")


@app.queue_trigger(
    arg_name="msg",
    queue_name="%SCHEDULER_EXECUTION_QUEUE%-notify",
    connection="AzureWebJobsStorage",
)
def notify(msg: func.QueueMessage) -> None:
    runtime.notify(msg.get_body().decode("utf-8"))


@app.timer_trigger(arg_name="timer", schedule=DAILY_SCHEDULE, use_monitor=True)
def housekeeping(timer: func.TimerRequest) -> None:
    runtime.housekeeping()
