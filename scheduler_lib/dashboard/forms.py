"""The job form: its fields to a job body (what PUT takes) and back, and which field an ARM
error's `target` belongs to.

The form covers what most jobs use (an HTTP action, the schedule, the retry policy); the raw
JSON editor takes everything else. Both end in the same `job_service.put_job`, so a value
the form cannot express is never silently dropped: editing a job through the form starts
from its stored (redacted) definition and replaces only what the form shows.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from scheduler_lib.errors import ValidationError

FIELDS = (
    "name", "method", "uri", "headers", "body", "startTime", "frequency", "interval",
    "count", "endTime", "timeZone", "weekDays", "hours", "minutes", "monthDays",
    "retryType", "retryInterval", "retryCount", "state",
)  # fmt: skip
LIST_FIELDS = ("weekDays", "hours", "minutes", "monthDays")
#: The last segment of an error's target -> the form field that shows it.
_TARGETS = {
    "request.method": "method", "request.uri": "uri", "request.headers": "headers",
    "request.body": "body", "startTime": "startTime", "frequency": "frequency",
    "interval": "interval", "count": "count", "endTime": "endTime", "timeZone": "timeZone",
    "weekDays": "weekDays", "hours": "hours", "minutes": "minutes", "monthDays": "monthDays",
    "retryType": "retryType", "retryInterval": "retryInterval", "retryCount": "retryCount",
}  # fmt: skip


def field_of(target: str | None) -> str:
    """The form field an error's target names ("" for the form as a whole)."""
    if not target:
        return ""
    if target == "name":
        return "name"
    for suffix, name in _TARGETS.items():
        if target == suffix or target.endswith("." + suffix) or f".{suffix}[" in target:
            return name
    return ""


def error_text(error: Mapping[str, Any]) -> str:
    """An ARM error as one line for a person: its message, which for a field's error already
    starts with the field's path (`ValidationError`), so the path is added only when it does
    not (the one place the dashboard words an error; the preview's script shows this too)."""
    message, target = str(error.get("message", "")), error.get("target")
    if not target or message.startswith(f"{target}:") or message.startswith(f"{target} "):
        return message
    return f"{target}: {message}"


#: What a field is set to while the form looks for further errors once it has one: a value
#: that passes, so that the fields that do not depend on it are still checked.
_NEUTRAL = {"uri": "https://example.com/", "method": "GET", "frequency": "Day", "interval": "1"}


def all_errors(form: Mapping[str, str], first: ValidationError, base: dict[str, Any] | None,
               validate: Callable[[dict[str, Any]], object]) -> list[ValidationError]:  # fmt: skip
    """Every field error the form holds, not only the first one validation stops at.

    Validation raises at its first error (one ARM error per answer, as the API gives), which
    makes a form with three mistakes take three saves. So the field at fault is set to a value
    that passes (`_NEUTRAL`, else empty: every other form field is optional) and the form is
    validated again, until it passes or an error names no form field (or one already seen).
    Nothing is saved here: `validate` only checks."""
    errors, fields = [first], dict(form)
    seen = {field_of(first.field)}
    while "" not in seen and len(errors) <= len(FIELDS):
        for name in seen:
            fields[name] = _NEUTRAL.get(name, "")
        try:
            validate(to_properties(fields, base))
            break
        except ValidationError as exc:
            field = field_of(exc.field)
            if field in seen:
                break
            errors.append(exc)
            seen.add(field)
    return errors


def _number(value: str) -> Any:
    """A whole number when it is one; else the text, so that validation names the field."""
    text = value.strip()
    return int(text) if text.lstrip("-").isdigit() else text


def _list(value: str, field: str) -> list[Any]:
    items = [item.strip() for item in value.replace(";", ",").split(",") if item.strip()]
    return items if field == "weekDays" else [_number(item) for item in items]


def _headers(text: str) -> dict[str, str]:
    headers = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon:
            where = "properties.action.request.headers"
            raise ValidationError(where, f"'{line}' is not Name: value")
        headers[name.strip()] = value.strip()
    return headers


def to_properties(form: Mapping[str, str], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """Job `properties` from the form's fields, over `base` (the stored definition, redacted,
    when editing): the schedule and retry policy are replaced whole, the request's method,
    uri, headers and body are set, anything else in `base` is kept."""
    properties = copy.deepcopy(base) if base else {}
    properties.pop("status", None)
    action = properties.setdefault("action", {})
    if action.get("type", "Http").lower() not in ("http", "https"):
        raise ValidationError("properties.action.type", "the form edits HTTP actions: use JSON")
    action["type"] = action.get("type", "Http")
    request = action.setdefault("request", {})
    request["method"] = form.get("method", "GET").strip() or "GET"
    request["uri"] = form.get("uri", "").strip()
    headers = _headers(form.get("headers", ""))
    if headers:
        request["headers"] = headers
    else:
        request.pop("headers", None)
    if form.get("body", "").strip():
        request["body"] = form["body"]
    else:
        request.pop("body", None)
    retry = form.get("retryType", "").strip()
    stored = action.pop("retryPolicy", None) or {}
    if retry:
        action["retryPolicy"] = {"retryType": retry}
        if retry == stored.get("retryType"):  # keep what the form does not show (2026-12-01's
            shown = ("retryType", "retryInterval", "retryCount")  # backoff bounds, retry filter)
            action["retryPolicy"].update({k: v for k, v in stored.items() if k not in shown})
        if retry.lower() != "none":
            for key in ("retryInterval", "retryCount"):
                if form.get(key, "").strip():
                    value = form[key].strip()
                    action["retryPolicy"][key] = _number(value) if key == "retryCount" else value
    properties.pop("startTime", None)
    if form.get("startTime", "").strip():
        properties["startTime"] = form["startTime"].strip()
    properties.pop("recurrence", None)
    if form.get("frequency", "").strip():
        properties["recurrence"] = _recurrence(form)
    if form.get("state", "").strip():
        properties["state"] = form["state"].strip()
    return properties


def _recurrence(form: Mapping[str, str]) -> dict[str, Any]:
    recurrence: dict[str, Any] = {"frequency": form["frequency"].strip()}
    for key in ("interval", "count"):
        if form.get(key, "").strip():
            recurrence[key] = _number(form[key])
    for key in ("endTime", "timeZone"):
        if form.get(key, "").strip():
            recurrence[key] = form[key].strip()
    schedule = {k: _list(form[k], k) for k in LIST_FIELDS if form.get(k, "").strip()}
    if schedule:
        recurrence["schedule"] = schedule
    return recurrence


def from_properties(name: str, properties: dict[str, Any]) -> dict[str, str]:
    """The form's fields for a job as GET returns it (secrets already redacted)."""
    action = properties.get("action") or {}
    request = action.get("request") or {}
    recurrence = properties.get("recurrence") or {}
    schedule = recurrence.get("schedule") or {}
    retry = action.get("retryPolicy") or {}
    values = {
        "name": name,
        "method": request.get("method", "GET"),
        "uri": request.get("uri", ""),
        "headers": "\n".join(f"{k}: {v}" for k, v in (request.get("headers") or {}).items()),
        "body": request.get("body", ""),
        "startTime": properties.get("startTime", ""),
        "frequency": recurrence.get("frequency", ""),
        "interval": recurrence.get("interval", ""),
        "count": recurrence.get("count", ""),
        "endTime": recurrence.get("endTime", ""),
        "timeZone": recurrence.get("timeZone", ""),
        "retryType": retry.get("retryType", ""),
        "retryInterval": retry.get("retryInterval", ""),
        "retryCount": retry.get("retryCount", ""),
        "state": properties.get("state", "Enabled"),
    }
    for key in LIST_FIELDS:
        values[key] = ", ".join(str(v) for v in schedule.get(key) or [])
    return {k: "" if v is None else str(v) for k, v in values.items()}


def json_text(properties: dict[str, Any]) -> str:
    """The JSON editor's text: the job body as PUT takes it."""
    shown = {k: v for k, v in properties.items() if k != "status"}
    return json.dumps({"properties": shown}, indent=2)
