"""Moving due-index rows into the shard they belong to (an upgrade, or a new shard count).

Before sharding, a row's PartitionKey was the minute alone (`202603040900`); now it is the
shard and the minute (`s03-202603040900`, see `due_index`). A deployed app that upgrades
still has its old rows, and an app whose `SCHEDULER_DISPATCH_SHARDS` went down has rows in
shards no worker reads. Both kinds lie in PartitionKey ranges no current row uses (before
`s`, and from the first shard past the count up to `t`), so finding them is two range
queries that return nothing once everything is moved: the coordinator runs this every tick,
for the cost of two empty queries, and an app that upgrades loses no job even while an
instance of the old version still writes old rows.

A row is moved by creating it in its shard first and deleting the old one (ETag-
conditional) after: a crash in between leaves two rows for one occurrence, which is
harmless (the job's `nextExecutionTime` decides; the next pass deletes the old one). A row
the new shard already holds (the API wrote the job's row again meanwhile) is newer and is
kept. The minute a row is filed under is kept (a row re-indexed under a later minute stays
there), and so are its other properties (due time, parked payload, incarnation).
"""

from __future__ import annotations

from contextlib import suppress

from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError

from scheduler_lib.store.due_index import SHARD_PREFIX, TABLE, partition_key, shard_of
from scheduler_lib.store.tables import TableStore, etag_kwargs


def misplaced_filters(shards: int) -> list[str]:
    """The PartitionKey ranges of rows that are not in a current shard."""
    end = chr(ord(SHARD_PREFIX) + 1)
    return [
        f"PartitionKey lt '{SHARD_PREFIX}'",
        f"PartitionKey ge '{partition_key(shards, '')[:-1]}' and PartitionKey lt '{end}'",
    ]


def migrate_unsharded(store: TableStore) -> int:
    """Move every row outside the current shards into its shard; returns how many moved."""
    table = store.table(TABLE)
    shards = store.settings.dispatch_shards
    moved = 0
    for query in misplaced_filters(shards):
        for entity in list(table.query_entities(query)):
            old = entity["PartitionKey"]
            minute = old.rsplit("-", 1)[-1]
            job_key = entity.get("JobKey") or entity["RowKey"]
            row = dict(entity)
            row["PartitionKey"] = partition_key(shard_of(job_key, shards), minute)
            with suppress(ResourceExistsError):
                table.create_entity(row)
            with suppress(ResourceNotFoundError, ResourceModifiedError):
                table.delete_entity(
                    old, entity["RowKey"], **etag_kwargs(entity.metadata.get("etag"))
                )
            moved += 1
    return moved
