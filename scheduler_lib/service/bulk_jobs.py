"""The bulk use case on the real single-job use cases: `CollectionJobs` (the port
`service/bulk.py` declares) over `service/jobs.py` and `service/collections.py`, so a job
changed in bulk is changed exactly as one PATCH, run or DELETE of it would be."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scheduler_lib.domain import JobRecord, JobState
from scheduler_lib.service import collections as collection_service
from scheduler_lib.service import jobs as job_service
from scheduler_lib.service.bulk import JobResult, read_request, run_bulk
from scheduler_lib.service.collections import CollectionName
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import JobName


@dataclass(frozen=True)
class CollectionJobs:
    """The API's single-job services on the jobs of `collection`, at the instant `now`."""

    ctx: ApiContext
    collection: CollectionName
    now: datetime

    def _name(self, job: str) -> JobName:
        c = self.collection
        return JobName(c.subscription_id, c.resource_group, c.collection, job)

    def check(self) -> None:
        collection_service.get_collection(self.ctx, self.collection)

    def every(self) -> list[JobRecord]:
        record = collection_service.get_collection(self.ctx, self.collection)
        return collection_service.all_jobs(self.ctx, record)

    def read(self, name: str) -> JobRecord:
        return job_service.get_job(self.ctx, self._name(name))

    def set_state(self, name: str, state: JobState) -> JobRecord:
        body = {"properties": {"state": state.value}}
        return job_service.patch_job(self.ctx, self._name(name), body, None, self.now)

    def run(self, name: str) -> JobRecord:
        return job_service.run_job(self.ctx, self._name(name), now=self.now)

    def delete(self, name: str) -> None:
        job_service.delete_job(self.ctx, self._name(name), client_etag=None)


def bulk(ctx: ApiContext, name: CollectionName, body: Any, now: datetime) -> list[JobResult]:
    """The one entry of the route and the dashboard: the body read (400s naming the field)
    before the collection is (404), then each job."""
    request = read_request(body, name.collection)
    return run_bulk(CollectionJobs(ctx, name, now), request)
