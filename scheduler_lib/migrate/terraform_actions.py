"""azurerm 1.x's action, retry and recurrence blocks of `azurerm_scheduler_job`, in the
API's JSON (see `terraform_convert` for the rules and why)."""

from __future__ import annotations

from typing import Any

from scheduler_lib.domain.json_values import JSON, JSONObject
from scheduler_lib.migrate.arm_template import MISSING
from scheduler_lib.migrate.found import FoundJob, defaulted, dropped
from scheduler_lib.migrate.problems import SourceError
from scheduler_lib.migrate.terraform import META, unquote
from scheduler_lib.migrate.terraform_body import Body, MissingSecrets, string_field

#: ServiceManagementEndpoint of Azure's public cloud: the provider's default OAuth audience.
DEFAULT_AUDIENCE = "https://management.core.windows.net/"
_AUTH_BLOCKS = (
    "authentication_basic",
    "authentication_certificate",
    "authentication_active_directory",
)
_WEB = {"url", "method", "body", "headers", *_AUTH_BLOCKS}
_QUEUE = {"storage_account_name", "storage_queue_name", "sas_token", "message"}
_RECURRENCE = {"frequency", "interval", "count", "end_time", "minutes", "hours", "week_days",
               "month_days", "monthly_occurrences"}  # fmt: skip
_SCHEDULE = {
    "minutes": "minutes",
    "hours": "hours",
    "week_days": "weekDays",
    "month_days": "monthDays",
}


def _put(target: JSONObject, key: str, value: Any) -> None:
    if value is not None and value is not MISSING:
        target[key] = value


def _check_fields(block: Body, known: set[str], job: FoundJob) -> None:
    for key in block.raw:
        if unquote(key) not in known and key not in META:
            job.notes.append(
                dropped(f"{block.path}.{unquote(key)}", "not an argument of azurerm 1.x")
            )


def _one(body: Body, names: tuple[str, str]) -> tuple[str, Body] | None:
    present = [(name, block) for name in names if (block := body.block(name)) is not None]
    if len(present) > 1:
        raise SourceError(body.path, f"{names[0]} and {names[1]} conflict: give one")
    return present[0] if present else None


def action(body: Body, job: FoundJob, secrets: MissingSecrets) -> JSONObject:
    main = _one(body, ("action_web", "action_storage_queue"))
    if main is None:
        raise SourceError(body.path, "one of action_web or action_storage_queue must be set")
    result = _action(*main, "properties.action", job, secrets)
    error = _one(body, ("error_action_web", "error_action_storage_queue"))
    if error is not None:
        result["errorAction"] = _action(*error, "properties.action.errorAction", job, secrets)
    return result


def _action(name: str, block: Body, api: str, job: FoundJob, secrets: MissingSecrets) -> JSONObject:
    if name.endswith("storage_queue"):
        _check_fields(block, _QUEUE, job)
        message: JSONObject = {}
        _put(message, "storageAccount", block.get("storage_account_name"))
        _put(message, "queueName", block.get("storage_queue_name"))
        _put(message, "sasToken", block.get("sas_token", secrets, f"{api}.queueMessage.sasToken"))
        _put(message, "message", block.get("message"))
        return {"type": "StorageQueue", "queueMessage": message}
    _check_fields(block, _WEB, job)
    url = string_field(block, "url")
    request: JSONObject = {"uri": url}
    if block.has("method"):
        request["method"] = block.get("method")
    else:
        request["method"] = "GET"
        job.notes.append(defaulted(f"{block.path}.method", "not given: azurerm's default, GET"))
    if block.get("body") not in (None, ""):  # the provider sends a body only when non-empty
        request["body"] = block.get("body")
    _put(request, "headers", block.get("headers"))
    auth = _authentication(block, f"{api}.request.authentication", job, secrets)
    _put(request, "authentication", auth)
    return {"type": "Https" if url.lower().startswith("https://") else "Http", "request": request}


def _authentication(
    block: Body, api: str, job: FoundJob, secrets: MissingSecrets
) -> JSONObject | None:
    given = [(name, found) for name in _AUTH_BLOCKS if (found := block.block(name)) is not None]
    if len(given) > 1:
        raise SourceError(block.path, "give one authentication_* block")
    if not given:
        return None
    name, auth = given[0]
    result: JSONObject = {}
    if name == "authentication_basic":
        _check_fields(auth, {"username", "password"}, job)
        result = {"type": "Basic", "username": auth.get("username")}
        _put(result, "password", auth.get("password", secrets, f"{api}.password"))
    elif name == "authentication_certificate":
        _check_fields(auth, {"pfx", "password", "thumbprint", "expiration", "subject_name"}, job)
        result = {"type": "ClientCertificate"}
        _put(result, "pfx", auth.get("pfx", secrets, f"{api}.pfx"))
        _put(result, "password", auth.get("password", secrets, f"{api}.password"))
    else:
        _check_fields(auth, {"tenant_id", "client_id", "secret", "client_secret", "audience"}, job)
        result = {"type": "ActiveDirectoryOAuth", "tenant": auth.get("tenant_id")}
        result["clientId"] = auth.get("client_id")
        key = "secret" if auth.has("secret") else "client_secret"
        _put(result, "secret", auth.get(key, secrets, f"{api}.secret"))
        if auth.has("audience"):
            result["audience"] = auth.get("audience")
        else:
            result["audience"] = DEFAULT_AUDIENCE
            job.notes.append(defaulted(
                f"{auth.path}.audience",
                f"not given: azurerm sends the public cloud's endpoint, {DEFAULT_AUDIENCE}",
            ))  # fmt: skip
    return result


def retry_policy(body: Body, job: FoundJob) -> JSONObject:
    retry = body.block("retry")
    if retry is None:
        job.notes.append(defaulted(
            f"{body.path}.retry",
            "not given: azurerm sends retryType None (no retries), not the API's default",
        ))  # fmt: skip
        return {"retryType": "None"}
    _check_fields(retry, {"interval", "count"}, job)
    policy: JSONObject = {"retryType": "Fixed"}
    for name, key, default in (
        ("interval", "retryInterval", "00:00:30"),
        ("count", "retryCount", 4),
    ):
        if retry.has(name):
            policy[key] = retry.get(name)
        else:
            policy[key] = default
            job.notes.append(
                defaulted(f"{retry.path}.{name}", f"not given: azurerm's default, {default}")
            )
    return policy


def recurrence(block: Body, job: FoundJob) -> JSONObject:
    _check_fields(block, _RECURRENCE, job)
    result: JSONObject = {"frequency": string_field(block, "frequency")}
    for name, key in (("interval", "interval"), ("count", "count"), ("end_time", "endTime")):
        _put(result, key, block.get(name))
    schedule: JSONObject = {}
    for name, key in _SCHEDULE.items():
        _put(schedule, key, block.get(name))
    occurrences: list[JSON] = []
    for occurrence in block.blocks("monthly_occurrences"):
        _check_fields(occurrence, {"day", "occurrence"}, job)
        occurrences.append(
            {"day": occurrence.get("day"), "occurrence": occurrence.get("occurrence")}
        )
    if occurrences:
        schedule["monthlyOccurrences"] = occurrences
    if schedule:
        result["schedule"] = schedule
    return result
