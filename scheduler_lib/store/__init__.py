"""The only package that talks to Table storage: collections, jobs, due index, history, and
the scheduler's own state (the dispatcher's, the shards', the metrics' rows).

Each module owns one table; `tables.TableStore` holds the clients. Records are the domain's
frozen dataclasses (a job's definition kept as its canonical JSON, read lazily), so the
domain code never sees storage entities.
"""

from scheduler_lib.store.collections import get_collection
from scheduler_lib.store.dashboard_sessions import (
    close_dashboard_session,
    dashboard_session_is_open,
    open_dashboard_session,
)
from scheduler_lib.store.deadlines import (
    Deadline,
    arm_deadline,
    current_deadline,
    disarm_deadline,
    drop_deadline,
    due_deadlines,
    mark_overdue,
    overdue_jobs,
)
from scheduler_lib.store.dispatch_shards import (
    LeaseLostError,
    ShardState,
    acquire_shard,
    get_shard_state,
    release_shard,
    renew_shard,
    shard_states,
)
from scheduler_lib.store.dispatcher_state import (
    DispatcherState,
    TickSummary,
    get_dispatcher_state,
    get_repair_state,
    save_dispatcher_state,
    save_repair_state,
)
from scheduler_lib.store.due_index import (
    MINUTE_FORMAT,
    TRANSACTION_LIMIT,
    DueRow,
    add_due,
    add_due_rows,
    count_rows,
    due_rows,
    has_due_row,
    minute_key,
    park_message,
    reindex_overdue,
    remove_due,
    remove_due_rows,
    remove_incarnation_row,
)
from scheduler_lib.store.due_index_migration import migrate_unsharded
from scheduler_lib.store.etag import LostRace, retry_lost_races
from scheduler_lib.store.history import (
    HISTORY_KEEP,
    POSTPONED_STATUS,
    HistoryEntry,
    add_counted_history,
    add_history,
    delete_history,
    list_history,
    prune_history,
)
from scheduler_lib.store.history_purge import (
    TICK_BUDGET,
    history_purge_pending,
    purge_histories,
    request_history_purge,
)
from scheduler_lib.store.job_reads import JOBS_PER_READ, find_jobs, read_jobs
from scheduler_lib.store.jobs import enabled_jobs, find_job, get_job, put_job, replace_jobs
from scheduler_lib.store.metrics_rows import (
    INSTANCE_PREFIX,
    RETIRED,
    MetricsRow,
    fold_row,
    metrics_rows,
    register_label,
    save_instance_row,
)
from scheduler_lib.store.notification_records import (
    DeliveryStatus,
    NoticeDelivery,
    NoticeRecord,
    list_notices,
    open_notice,
    purge_notices,
    save_notice,
    take_quiet_window,
)
from scheduler_lib.store.tables import TableStore, storage_unavailable

__all__ = [
    "HISTORY_KEEP",
    "INSTANCE_PREFIX",
    "JOBS_PER_READ",
    "MINUTE_FORMAT",
    "POSTPONED_STATUS",
    "RETIRED",
    "TICK_BUDGET",
    "TRANSACTION_LIMIT",
    "Deadline",
    "DeliveryStatus",
    "DispatcherState",
    "DueRow",
    "HistoryEntry",
    "LeaseLostError",
    "LostRace",
    "MetricsRow",
    "NoticeDelivery",
    "NoticeRecord",
    "ShardState",
    "TableStore",
    "TickSummary",
    "acquire_shard",
    "add_counted_history",
    "add_due",
    "add_due_rows",
    "add_history",
    "arm_deadline",
    "close_dashboard_session",
    "count_rows",
    "current_deadline",
    "dashboard_session_is_open",
    "delete_history",
    "disarm_deadline",
    "drop_deadline",
    "due_deadlines",
    "due_rows",
    "enabled_jobs",
    "find_job",
    "find_jobs",
    "fold_row",
    "get_collection",
    "get_dispatcher_state",
    "get_job",
    "get_repair_state",
    "get_shard_state",
    "has_due_row",
    "history_purge_pending",
    "list_history",
    "list_notices",
    "mark_overdue",
    "metrics_rows",
    "migrate_unsharded",
    "minute_key",
    "open_dashboard_session",
    "open_notice",
    "overdue_jobs",
    "park_message",
    "prune_history",
    "purge_histories",
    "purge_notices",
    "put_job",
    "read_jobs",
    "register_label",
    "reindex_overdue",
    "release_shard",
    "remove_due",
    "remove_due_rows",
    "remove_incarnation_row",
    "renew_shard",
    "replace_jobs",
    "request_history_purge",
    "retry_lost_races",
    "save_dispatcher_state",
    "save_instance_row",
    "save_notice",
    "save_repair_state",
    "shard_states",
    "storage_unavailable",
    "take_quiet_window",
]
