"""azurerm 1.x's `azurerm_scheduler_job_collection` and `azurerm_scheduler_job`, in the
2016-03-01 API's JSON, field by field as the provider's own code sends them:

- `action_web` is an `Http` action, `Https` when its `url` is https (the provider decides
  so); `authentication_basic`/`_certificate`/`_active_directory` are Basic,
  ClientCertificate and ActiveDirectoryOAuth; `action_storage_queue` a StorageQueue
  action; `error_action_*` the same as `errorAction`.
- Without a `retry` block the provider sends `retryType: None` (the API's default would be
  4 retries); `retry { interval, count }` is Fixed, its TimeSpan interval (`00:05:00`) in
  ISO 8601 (`PT5M`).
- Without `start_time` the provider sends the time of `terraform apply`; a job without a
  `startTime` runs when it is stored and counts from then: the same schedule.
- `quota`'s `max_retry_interval` is the deprecated name of `max_recurrence_interval`.
Every such rewrite is a `Note` the dry run prints. Lower-case enums pass as they are: the
API reads them in any case.
"""

from __future__ import annotations

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.migrate.found import (
    Found,
    FoundCollection,
    FoundJob,
    changed,
    defaulted,
    dropped,
)
from scheduler_lib.migrate.problems import Note, Unresolved
from scheduler_lib.migrate.terraform import META, Module, unquote
from scheduler_lib.migrate.terraform_actions import action, recurrence, retry_policy
from scheduler_lib.migrate.terraform_body import Body, MissingSecrets, string_field

COLLECTION = "azurerm_scheduler_job_collection"
JOB = "azurerm_scheduler_job"
_JOB_FIELDS = {"name", "resource_group_name", "job_collection_name", "action_web",
               "action_storage_queue", "error_action_web", "error_action_storage_queue", "retry",
               "recurrence", "start_time", "state"}  # fmt: skip
_COLLECTION_FIELDS = {"name", "location", "resource_group_name", "tags", "sku", "state", "quota"}


def read_terraform(module: Module, *, collection: str | None, resource_group: str | None) -> Found:
    found = Found()
    for kind, name in module.order:
        if kind not in (COLLECTION, JOB):
            continue
        for index in module.instances(kind, name):
            body = Body(module, module.resources[(kind, name)], f"{kind}.{name}", index)
            if kind == COLLECTION:
                found.collections.append(_collection(body, resource_group))
            else:
                found.jobs.append(_job(body, collection, resource_group))
    return found


def _unknown_fields(body: Body, known: set[str]) -> list[Note]:
    return [
        dropped(f"{body.path}.{unquote(key)}", "not an argument of azurerm 1.x's resource")
        for key in body.raw
        if unquote(key) not in known and key not in META
    ]


def _collection(body: Body, resource_group: str | None) -> FoundCollection:
    collection = FoundCollection(name=string_field(body, "name"), where=body.path)
    collection.resource_group = resource_group or _placement(body, "resource_group_name")
    collection.notes += _placed_by_options(body, resource_group=resource_group)
    location = body.get("location")
    if isinstance(location, str):
        collection.location = location.replace(" ", "").lower()  # as the provider sends it
        if collection.location != location:
            collection.notes.append(changed(
                f"{body.path}.location", f"{location} → {collection.location}, as azurerm sends it"
            ))  # fmt: skip
    collection.tags = body.get("tags")
    properties: JSONObject = {"sku": {"name": string_field(body, "sku")}}
    if body.has("state"):
        properties["state"] = body.get("state")
    quota = body.block("quota")
    if quota is not None:
        properties["quota"] = _quota(quota, collection)
    collection.properties = properties
    collection.notes += _unknown_fields(body, _COLLECTION_FIELDS)
    return collection


def _quota(quota: Body, collection: FoundCollection) -> JSONObject:
    result: JSONObject = {}
    if quota.has("max_job_count"):
        result["maxJobCount"] = quota.get("max_job_count")
    recurrence: JSONObject = {}
    if quota.has("max_recurrence_frequency"):
        recurrence["frequency"] = quota.get("max_recurrence_frequency")
    for name in ("max_recurrence_interval", "max_retry_interval"):
        if quota.has(name):
            recurrence["interval"] = quota.get(name)
    if recurrence:
        result["maxRecurrence"] = recurrence
    collection.notes += _unknown_fields(
        quota,
        {
            "max_job_count",
            "max_recurrence_frequency",
            "max_recurrence_interval",
            "max_retry_interval",
        },
    )
    return result


def _placed_by_options(
    body: Body, *, collection: str | None = None, resource_group: str | None = None
) -> list[Note]:
    """What an option says instead of the source (the source's value is not read)."""
    given = (("job_collection_name", "--collection", collection),
             ("resource_group_name", "--resource-group", resource_group))  # fmt: skip
    return [
        changed(f"{body.path}.{name}", f"not read: {option} {value} places it")
        for name, option, value in given
        if value is not None and body.has(name)
    ]


def _placement(body: Body, name: str) -> str:
    """Where a resource goes, as the source says; an option can say it instead."""
    option = "--collection" if name == "job_collection_name" else "--resource-group"
    try:
        return string_field(body, name)
    except Unresolved as error:
        hint = f"give {option}, or {error.hint}" if error.hint else f"give {option}"
        raise Unresolved(error.where, error.expression, error.reason, hint) from None


def _job(body: Body, collection: str | None, resource_group: str | None) -> FoundJob:
    job = FoundJob(collection=collection, name=string_field(body, "name"), where=body.path)
    if collection is None:
        job.collection = _placement(body, "job_collection_name")
    job.resource_group = resource_group or _placement(body, "resource_group_name")
    job.notes += _placed_by_options(body, collection=collection, resource_group=resource_group)
    secrets = MissingSecrets(job)
    main = action(body, job, secrets)
    main["retryPolicy"] = retry_policy(body, job)
    properties: JSONObject = {"action": main}
    schedule = body.block("recurrence")
    if schedule is not None:
        properties["recurrence"] = recurrence(schedule, job)
    if body.has("start_time"):
        properties["startTime"] = body.get("start_time")
    else:
        job.notes.append(defaulted(
            f"{body.path}.start_time",
            "not given: azurerm sends the time of terraform apply; without a startTime the job "
            "runs when it is stored and its recurrence counts from then (the same schedule)",
        ))  # fmt: skip
    if body.has("state"):
        properties["state"] = body.get("state")
    job.properties = properties
    job.notes += _unknown_fields(body, _JOB_FIELDS)
    return job
