"""Which dead-man window watches a job, for the job page: its own (`wire.deadman.PROPERTY`),
else its collection's default, else none (the rule `notify.subscriptions.window` judges by;
here as the text the client stored, with where it comes from)."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_lib.domain import JobRecord
from scheduler_lib.service.collections import CollectionName, get_collection
from scheduler_lib.service.context import ApiContext
from scheduler_lib.wire.deadman import PROPERTY


@dataclass(frozen=True)
class DeadmanSetting:
    window: str | None  # an ISO duration, None: the job is not watched
    own: bool  # True: the job's own setting; False: its collection's default (or none)


def deadman_setting(ctx: ApiContext, job: JobRecord) -> DeadmanSetting:
    own = job.definition.document.get(PROPERTY)
    if isinstance(own, str):
        return DeadmanSetting(own, True)
    where = CollectionName(job.subscription_id, job.resource_group, job.collection_name)
    default = get_collection(ctx, where).properties.get(PROPERTY)
    return DeadmanSetting(default if isinstance(default, str) else None, False)
