"""A Terraform resource or block, read field by field, and the secrets it only refers to."""

from __future__ import annotations

from typing import Any

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.migrate.arm_template import MISSING
from scheduler_lib.migrate.found import FoundJob, MissingSecret
from scheduler_lib.migrate.problems import SourceError, Unresolved
from scheduler_lib.migrate.terraform import Module


class Body:
    """One resource or block of the module, read field by field (lazily: a field nobody
    reads needs no value)."""

    def __init__(self, module: Module, raw: JSONObject, path: str, index: int | None) -> None:
        self.module, self.raw, self.path, self.index = module, raw, path, index

    def has(self, name: str) -> bool:
        return name in self.raw

    def get(self, name: str, secret: MissingSecrets | None = None, api: str = "") -> Any:
        if name not in self.raw:
            return None
        self.module.evaluator.counts.append(self.index)
        try:
            handler = secret.handler(api) if secret else _raise
            return self.module.value(self.raw[name], f"{self.path}.{name}", handler)
        finally:
            self.module.evaluator.counts.pop()

    def blocks(self, name: str) -> list[Body]:
        """A nested block (or, as Terraform 0.11 wrote it, an attribute object or a list of
        them), one Body each."""
        value = self.raw.get(name)
        if value is None:
            return []
        items = [
            item
            for item in (value if isinstance(value, list) else [value])
            if isinstance(item, dict)
        ]
        if len(items) != (len(value) if isinstance(value, list) else 1):
            raise SourceError(
                f"{self.path}.{name}", "write the block out: it cannot be an expression"
            )
        single = len(items) == 1
        return [
            Body(
                self.module,
                item,
                f"{self.path}.{name}" if single else f"{self.path}.{name}[{i}]",
                self.index,
            )
            for i, item in enumerate(items)
        ]

    def block(self, name: str) -> Body | None:
        found = self.blocks(name)
        if len(found) > 1:
            raise SourceError(f"{self.path}.{name}", "may be given once")
        return found[0] if found else None


def _raise(path: str, error: Unresolved) -> Any:
    raise error


class MissingSecrets:
    """Records the secrets a job's source only refers to (`found.MissingSecret`)."""

    def __init__(self, job: FoundJob) -> None:
        self.job = job

    def handler(self, api_field: str) -> Any:
        def record(path: str, error: Unresolved) -> Any:
            self.job.missing.append(MissingSecret(api_field, error.expression, error.reason))
            return MISSING

        return record


def string_field(body: Body, name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise SourceError(f"{body.path}.{name}", "is required and must be a string")
    return value
