"""The identities of collections and jobs: one key each, the same in every table.

A job's key (`sub|rg|collection|job`, lower-cased: ARM names are case-insensitive) is its
RowKey in the due index and its PartitionKey in the history table; a collection's key is the
PartitionKey of its jobs. The separator cannot occur in an ARM name.
"""

from __future__ import annotations

SEPARATOR = "|"


def collection_key(subscription_id: str, resource_group: str, collection: str) -> str:
    """PartitionKey of a collection's jobs: `sub|rg|collection`, lower-cased."""
    return SEPARATOR.join((subscription_id, resource_group, collection)).lower()


def job_key(subscription_id: str, resource_group: str, collection: str, job: str) -> str:
    """A job's identity across tables (due index RowKey, history PartitionKey)."""
    return SEPARATOR.join((subscription_id, resource_group, collection, job)).lower()


def split_job_key(key: str) -> tuple[str, str, str, str]:
    """Inverse of `job_key` (lower-cased parts)."""
    sub, rg, coll, job = key.split(SEPARATOR, 3)
    return sub, rg, coll, job
