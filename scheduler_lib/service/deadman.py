"""Which dead-man window watches a job, for the job page: the rule the judge uses
(`domain.deadman`), the collection read from storage only when the job has no window of
its own."""

from __future__ import annotations

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.deadman import DeadmanSetting
from scheduler_lib.domain.deadman import deadman_setting as _rule
from scheduler_lib.service.collections import CollectionName, get_collection
from scheduler_lib.service.context import ApiContext

__all__ = ["DeadmanSetting", "deadman_setting"]


def deadman_setting(ctx: ApiContext, job: JobRecord) -> DeadmanSetting:
    where = CollectionName(job.subscription_id, job.resource_group, job.collection_name)
    return _rule(job, lambda: get_collection(ctx, where))
