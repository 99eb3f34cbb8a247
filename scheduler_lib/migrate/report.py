"""What an import prints: per collection and job, its outcome, where it comes from in the
source, every note (dropped, changed, defaulted, missing secret), the differences or the
API's refusal, and in a dry run the body it would send and its next 5 runs (the same
preview code as `python -m scheduler_lib preview`). Secret values are never printed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from scheduler_lib.migrate.apply import Result
from scheduler_lib.migrate.compare import Timing
from scheduler_lib.migrate.convert import ImportedCollection, ImportedJob
from scheduler_lib.migrate.found import SECRET_KEYS
from scheduler_lib.migrate.missing_secrets import PLACEHOLDER
from scheduler_lib.schedule import preview_table
from scheduler_lib.wire import notifications, signing

PREVIEW_COUNT = 5


def render(results: list[Result], *, now: datetime, dry_run: bool, read: list[str]) -> str:
    lines = ["read: " + "; ".join(read)] if read else []
    for result in results:
        lines += _result(result, now=now, dry_run=dry_run)
    counts: dict[str, int] = {}
    for result in results:
        counts[result.outcome.split(",")[0]] = counts.get(result.outcome.split(",")[0], 0) + 1
    summary = ", ".join(f"{n} {outcome}" for outcome, n in counts.items()) or "nothing found"
    lines.append(("dry run, nothing written: " if dry_run else "") + summary)
    return "\n".join(lines)


def _result(result: Result, *, now: datetime, dry_run: bool) -> list[str]:
    item = result.item
    if isinstance(item, ImportedCollection):
        title = f"job collection {item.resource_group}/{item.name}"
    else:
        title = f"job {item.resource_group}/{item.collection}/{item.name}"
    lines = ["", f"{title}: {result.outcome}", f"  from {item.where}"]
    lines += [f"  {detail}" for detail in result.details]
    lines += [f"  {note}" for note in item.notes]
    if dry_run:
        lines.append(f"  body (PUT, api-version {item.api_version}):")
        text = json.dumps(masked(item.body), indent=2, ensure_ascii=False)
        lines += [f"    {line}" for line in text.splitlines()]
    if isinstance(item, ImportedJob) and result.checked is not None:
        lines += _runs(item, result.checked.timing, now)
    return lines


def _runs(item: ImportedJob, timing: Timing, now: datetime) -> list[str]:
    disabled = str(item.properties.get("state", "")).lower() == "disabled"
    heading = f"  next {PREVIEW_COUNT} runs of its schedule as of {now:%Y-%m-%d %H:%M:%S}Z"
    if disabled:
        heading += " (it is Disabled: none runs until it is enabled)"
    table = preview_table(timing, now=now, count=PREVIEW_COUNT)
    return [heading + ":"] + [f"    {line}" for line in table.splitlines()]


def masked(value: Any, key: str = "") -> Any:
    """A body as it may be shown: secrets replaced by a word saying what is there."""
    if isinstance(value, dict) and key == signing.PROPERTY and "value" in value:
        return {**value, "value": "(secret, not shown)"}
    if (
        isinstance(value, dict)
        and key == notifications.PROPERTY
        and isinstance(value.get("url"), str)
    ):
        # A webhook URL's path and query are its credential: shown as GET shows it.
        value = {**value, "url": notifications.masked(value["url"])}
    if isinstance(value, dict):
        return {k: masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, key) for v in value]
    if key.lower() in SECRET_KEYS and isinstance(value, str):
        return "(missing: placeholder)" if value == PLACEHOLDER else "(secret, not shown)"
    return value
