"""ARM resource names, ids and types of job collections, jobs and history entries.

ARM names are case-insensitive (the store lower-cases its keys); the spelling given at
creation is kept and returned. Names are checked before they reach the store, whose keys
join names with `|`, so a name can never contain one.
"""

from __future__ import annotations

import re
from typing import Any

from scheduler_lib.domain import job_key
from scheduler_lib.errors import ValidationError

PROVIDER = "Microsoft.Scheduler"
COLLECTION_TYPE = f"{PROVIDER}/jobCollections"
JOB_TYPE = f"{PROVIDER}/jobCollections/jobs"
HISTORY_TYPE = f"{PROVIDER}/jobCollections/jobs/history"

_SUBSCRIPTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
# Resource groups: letters, digits, `_ - . ( )`, 1-90 characters, not ending with a period.
_RESOURCE_GROUP = re.compile(r"^[\w\-.()]{0,89}[\w\-()]$", re.ASCII)
# Job collections and jobs: letters, digits, `-` and `_`, 1-64 characters (Azure Scheduler).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_names(
    subscription_id: str,
    resource_group: str,
    collection: str | None = None,
    job: str | None = None,
) -> None:
    """ValidationError naming the first path segment that is not a valid ARM name."""
    if not _SUBSCRIPTION.match(subscription_id):
        raise ValidationError("subscriptionId", "must be 1-64 letters, digits and hyphens")
    if not _RESOURCE_GROUP.match(resource_group):
        raise ValidationError(
            "resourceGroupName",
            "must be 1-90 letters, digits, '_', '-', '.', '(' or ')', not ending with '.'",
        )
    for field, name in (("jobCollectionName", collection), ("jobName", job)):
        if name is not None and not _NAME.match(name):
            raise ValidationError(
                field, "must be 1-64 letters, digits, '-' or '_', starting with a letter or digit"
            )


def resource_group_id(subscription_id: str, resource_group: str) -> str:
    return f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}"


def collection_id(subscription_id: str, resource_group: str, collection: str) -> str:
    base = resource_group_id(subscription_id, resource_group)
    return f"{base}/providers/{COLLECTION_TYPE}/{collection}"


_JOB_ID = re.compile(
    r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Scheduler/"
    r"jobCollections/([^/]+)/jobs/([^/]+)$",
    re.IGNORECASE,
)


def job_key_of_id(value: Any) -> str | None:
    """The job key (`domain.job_key`) of a job's ARM id as GET returns it; None for
    anything else."""
    match = _JOB_ID.match(value) if isinstance(value, str) else None
    return job_key(*match.groups()) if match else None


def job_id(subscription_id: str, resource_group: str, collection: str, job: str) -> str:
    return f"{collection_id(subscription_id, resource_group, collection)}/jobs/{job}"
