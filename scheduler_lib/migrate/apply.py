"""Carrying out a plan against a scheduler: collections first, then their jobs, each compared
with what the scheduler holds before anything is written.

- Not there: created (`--dry-run`: "would create").
- There and the same (as GET returns it): "unchanged", nothing written. Importing the same
  source twice changes nothing.
- There and different: a "conflict", reported with the differences and left alone, unless
  `--replace` is given (then PUT, as the API's PUT replaces).
- Refused by the API's validation (run here first, `compare`, then by the PUT for what only
  the server judges): "refused", with the API's message. A job whose collection neither
  exists nor was created is "skipped".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.errors import ValidationError
from scheduler_lib.migrate.client import Address, ApiError, Scheduler
from scheduler_lib.migrate.compare import (
    COMPARE_VERSION,
    CheckedJob,
    check_collection,
    check_job,
    collection_differences,
    job_differences,
)
from scheduler_lib.migrate.convert import ImportedCollection, ImportedJob, Plan


class Outcome(StrEnum):
    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    CONFLICT = "conflict, left alone (--replace replaces it)"
    REFUSED = "refused"
    SKIPPED = "skipped"
    WOULD_CREATE = "would create"
    WOULD_REPLACE = "would replace"
    NOT_COMPARED = "would create or replace (the scheduler was not asked)"


#: Outcomes after which the import is a success.
GOOD = frozenset({Outcome.CREATED, Outcome.REPLACED, Outcome.UNCHANGED, Outcome.WOULD_CREATE,
                  Outcome.WOULD_REPLACE, Outcome.NOT_COMPARED})  # fmt: skip


@dataclass
class Result:
    item: ImportedCollection | ImportedJob
    outcome: Outcome
    details: list[str] = field(default_factory=list)
    checked: CheckedJob | None = None


@dataclass
class Run:
    client: Scheduler | None  # None: a dry run that does not ask the scheduler
    subscription: str
    dry_run: bool
    replace: bool
    results: list[Result] = field(default_factory=list)
    available: set[tuple[str, str]] = field(default_factory=set)  # (group, collection)

    def execute(self, plan: Plan) -> list[Result]:
        for collection in plan.collections:
            self.results.append(self._collection(collection))
        for job in plan.jobs:
            self.results.append(self._job(job))
        return self.results

    def _address(self, group: str, collection: str, job: str | None = None) -> Address:
        return Address(self.subscription, group, collection, job)

    def _collection(self, item: ImportedCollection) -> Result:
        key = (item.resource_group.lower(), item.name.lower())
        try:
            local = check_collection(item)
        except ValidationError as error:
            return Result(item, Outcome.REFUSED, [_refusal(error)])
        address = self._address(item.resource_group, item.name)
        result = self._write(
            item, address, item.api_version, lambda remote: collection_differences(local, remote)
        )
        if result.outcome in GOOD or result.outcome == Outcome.CONFLICT:
            self.available.add(key)
        return result

    def _job(self, item: ImportedJob) -> Result:
        try:
            checked = check_job(item)
        except ValidationError as error:
            return Result(item, Outcome.REFUSED, [_refusal(error)])
        key = (item.resource_group.lower(), item.collection.lower())
        if key not in self.available and not self._exists(item):
            reason = f"the job collection {item.collection} does not exist and was not created"
            return Result(item, Outcome.SKIPPED, [reason], checked)
        address = self._address(item.resource_group, item.collection, item.name)
        result = self._write(
            item, address, item.api_version, lambda remote: job_differences(item, checked, remote)
        )
        result.checked = checked
        return result

    def _exists(self, item: ImportedJob) -> bool:
        if self.client is None:
            return True  # not asked: the PUT would say
        address = self._address(item.resource_group, item.collection)
        return self.client.get(address, COMPARE_VERSION) is not None

    def _write(
        self,
        item: ImportedCollection | ImportedJob,
        address: Address,
        version: str,
        differ: Callable[[JSONObject], list[str]],
    ) -> Result:
        if self.client is None:
            return Result(item, Outcome.NOT_COMPARED)
        remote = self.client.get(address, COMPARE_VERSION)
        found = differ(remote) if remote is not None else []
        if remote is not None and not found:
            return Result(item, Outcome.UNCHANGED)
        if remote is not None and not self.replace:
            return Result(item, Outcome.CONFLICT, found)
        if self.dry_run:
            return Result(
                item, Outcome.WOULD_CREATE if remote is None else Outcome.WOULD_REPLACE, found
            )
        try:
            self.client.put(address, item.body, version)
        except ApiError as error:
            return Result(item, Outcome.REFUSED, [f"{error.status} {error.code}: {error.message}"])
        return Result(item, Outcome.CREATED if remote is None else Outcome.REPLACED, found)


def _refusal(error: ValidationError) -> str:
    """How the API answers the same body: 400 BadRequest with the model's message."""
    return f"400 BadRequest: {error.message}"


def execute(
    plan: Plan, client: Scheduler | None, subscription: str, *, dry_run: bool, replace: bool
) -> list[Result]:
    """The plan's results; `Unreachable` when the scheduler does not answer at all."""
    return Run(client, subscription, dry_run, replace).execute(plan)
