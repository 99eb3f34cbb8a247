"""The `$filter` of a collection's jobs: Jobs_List's and a bulk operation's `filter`.

2016-03-01 knows the one form Azure Scheduler documented, `state eq 'Enabled'`. 2026-12-01
adds ARM's tag filter (`tagName eq 'env' and tagValue eq 'prod'`, as the ARM resource lists
write it; `tagValue` only with `tagName`), and `and` between the clauses, each field at most
once. A value may be quoted ('' is a quote inside) or, for a state, bare. Anything else is a
400 naming `field` (`$filter` or `filter`), never silently an unfiltered list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_lib.domain import JOB_STATES, JobRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.versions import LATEST_VERSION, ApiVersion

_CLAUSE = re.compile(
    r"\s*([A-Za-z]+)\s+eq\s+(?:'((?:[^']|'')*)'|\"([^\"]*)\"|([A-Za-z]+))\s*", re.I
)
_AND = re.compile(r"and\b", re.I)
_FIELDS = {"state": "state", "tagname": "tagName", "tagvalue": "tagValue"}


@dataclass(frozen=True)
class JobFilter:
    """What a job must match; None fields match anything."""

    state: str | None = None
    tag_name: str | None = None
    tag_value: str | None = None

    def matches(self, job: JobRecord) -> bool:
        if self.state is not None and job.state != self.state:
            return False
        return self.tag_name is None or job.definition.has_tag(self.tag_name, self.tag_value)

    @property
    def by_tag(self) -> bool:
        """Whether the store cannot answer it alone (tags live in the stored definition)."""
        return self.tag_name is not None


def parse_job_filter(text: str | None, version: ApiVersion, field: str = "$filter") -> JobFilter:
    """The filter `text` means (empty: everything) for a request of `version`."""
    if text is None or not text.strip():
        return JobFilter()
    tags = version.has(LATEST_VERSION)
    form = "state eq '<value>'" + (
        ", tagName eq '<name>' [and tagValue eq '<value>']" if tags else ""
    )
    found: dict[str, str] = {}
    position = 0
    while True:
        match = _CLAUSE.match(text, position)
        if match is None:
            raise ValidationError(field, f"must have the form: {form}")
        name = _FIELDS.get(match.group(1).lower())
        if name is None or (name != "state" and not tags):
            can = "state, tagName and tagValue" if tags else "state"
            raise ValidationError(field, f"can only filter on {can}")
        if name in found:
            raise ValidationError(field, f"names {name} twice")
        quoted = match.group(2)
        value = next(g for g in (quoted, match.group(3), match.group(4)) if g is not None)
        found[name] = quoted.replace("''", "'") if quoted is not None else value
        position = match.end()
        if position == len(text):
            break
        joined = _AND.match(text, position)
        if joined is None:
            raise ValidationError(field, f"must have the form: {form}")
        position = joined.end()
    if "tagValue" in found and "tagName" not in found:
        raise ValidationError(field, "tagValue needs tagName")
    state = found.get("state")
    return JobFilter(
        state=None if state is None else readers.enum(state, field, JOB_STATES),
        tag_name=found.get("tagName"),
        tag_value=found.get("tagValue"),
    )
