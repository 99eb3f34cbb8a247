"""A Terraform module (its `.tf` files, read with the maintained `python-hcl2` parser) and the
evaluation of its values: `var.x` (from `--set`, `.tfvars` files or defaults), `local.x`,
references to resources (`azurerm_resource_group.rg.name` is that resource's `name`
argument when the files define it), `count.index`, function calls and templates.

What Terraform only learns from Azure (a storage account's `primary_access_key`, a data
source, any attribute that is not an argument in the files) is an `Unknown`: refused where
it is read, or a missing secret in a secret's place. `for_each` is refused (write the jobs
out, or use `count`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hcl2
from hcl2 import SerializationOptions

from scheduler_lib.domain.json_values import JSON, JSONObject
from scheduler_lib.migrate.arm_template import OnUnresolved, require_object
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.hcl_expression import parse_value
from scheduler_lib.migrate.memo import Memo
from scheduler_lib.migrate.overrides import Overrides, typed
from scheduler_lib.migrate.problems import Evaluated, SourceError, Unknown, Unresolved
from scheduler_lib.migrate.terraform_eval import TerraformEvaluator

_OPTIONS = SerializationOptions(preserve_heredocs=False, with_comments=False)
META = frozenset({"count", "provider", "depends_on", "lifecycle", "timeouts", "__is_block__"})


def unquote(key: str) -> str:
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] == '"' else key


def load_hcl(path: Path) -> JSONObject:
    """A file as python-hcl2 serializes it: JSON, blocks as lists of objects."""
    try:
        with path.open(encoding="utf-8") as handle:
            document: JSONObject = hcl2.load(handle, serialization_options=_OPTIONS)
            return document
    except Exception as error:  # python-hcl2 raises lark's and its own error types
        raise SourceError(
            path.name, f"is not valid HCL ({type(error).__name__}: {error})"
        ) from None


def _blocks(document: JSONObject, kind: str, path: Path) -> list[JSONObject]:
    """The blocks of one kind (`variable`, `locals`, `resource`) of a file."""
    blocks = document.get(kind) or []
    if not isinstance(blocks, list):
        raise SourceError(f"{path.name}: {kind}", "must be a list of blocks")
    return [require_object(block, f"{path.name}: {kind}") for block in blocks]


def _raise(path: str, error: Unresolved) -> Any:
    raise error


class Module:
    """The `.tf` files of one module, with its variable values."""

    def __init__(
        self,
        files: list[Path],
        *,
        tfvars: list[Path],
        overrides: Overrides,
        deployment: Deployment,
    ) -> None:
        self.directory = files[0].parent
        self.overrides = overrides
        self.deployment = deployment
        self.variables: dict[str, JSONObject] = {}
        self.locals: JSONObject = {}
        self.resources: dict[tuple[str, str], JSONObject] = {}
        self.order: list[tuple[str, str]] = []
        for path in files:
            self._add(path, load_hcl(path))
        self.tfvars: JSONObject = {}
        for path in tfvars:
            self.tfvars.update(load_hcl(path))
        self.evaluator = TerraformEvaluator(self)
        self._memo: Memo[Evaluated] = Memo()

    def _add(self, path: Path, document: JSONObject) -> None:
        for block in _blocks(document, "variable", path):
            for name, body in block.items():
                self.variables[unquote(name)] = require_object(
                    body, f"{path.name}: variable.{name}"
                )
        for block in _blocks(document, "locals", path):
            self.locals.update({k: v for k, v in block.items() if k != "__is_block__"})
        for block in _blocks(document, "resource", path):
            for kind, named in block.items():
                for name, body in require_object(named, f"{path.name}: resource.{kind}").items():
                    key = (unquote(kind), unquote(name))
                    if key in self.resources:
                        raise SourceError(f"{path.name}", f"{key[0]}.{key[1]} is declared twice")
                    where = f"{path.name}: {key[0]}.{key[1]}"
                    self.resources[key] = require_object(body, where)
                    self.order.append(key)

    # --- names ---------------------------------------------------------------------------------

    def variable(self, name: str) -> Any:
        if name not in self.variables:
            raise SourceError("", f"var.{name}: the module declares no such variable")
        return self._memo.get(f"var.{name}", lambda: self._variable(name))

    def _variable(self, name: str) -> Any:
        body = self.variables[name]
        declared = str(body.get("type", "any")).strip('"').removeprefix("${").removesuffix("}")
        text = self.overrides.parameter(name)
        if text is not None:
            kind = declared if declared in ("string", "number", "bool") else "any"
            return typed(name, {"number": "int"}.get(kind, kind), text) if kind != "any" else text
        if name in self.tfvars:
            return self.value(self.tfvars[name], f"var.{name}")
        if "default" in body:
            return self.value(body["default"], f"variable.{name}.default")
        return Unknown(
            f"variable {name!r} has no value",
            f"give it in a .tfvars file (--parameters FILE) or with --set {name}=VALUE",
        )

    def local(self, name: str) -> Any:
        if name not in self.locals:
            raise SourceError("", f"local.{name}: the module declares no such local value")
        key = f"local.{name}"
        return self._memo.get(key, lambda: self.value(self.locals[name], key))

    def instances(self, kind: str, name: str) -> list[int | None]:
        """The `count.index` values of a resource (None: it has no `count`)."""
        body = self.resources[(kind, name)]
        if "for_each" in body:
            raise SourceError(f"{kind}.{name}.for_each", "for_each is not supported: use count")
        if "count" not in body:
            return [None]
        count = self.value(body["count"], f"{kind}.{name}.count")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 1000:
            raise SourceError(f"{kind}.{name}.count", "must be a whole number 0-1000")
        return list(range(count))

    def argument(self, kind: str, name: str, attribute: str, index: int | None) -> Any:
        """A resource's argument as a reference reads it (another resource's `name`)."""
        body = self.resources.get((kind, name))
        if body is None:
            return Unknown(
                f"{kind}.{name} is not defined in the files given",
                "give the file that defines it, or the value with --set",
            )
        if attribute not in body or attribute in META:
            return Unknown(f"{kind}.{name}.{attribute} is computed by Azure when it is created")
        self.evaluator.counts.append(index)
        try:
            return self.value(body[attribute], f"{kind}.{name}.{attribute}")
        finally:
            self.evaluator.counts.pop()

    # --- values --------------------------------------------------------------------------------

    def value(self, raw: JSON, path: str, on_unresolved: OnUnresolved = _raise) -> Any:
        """An attribute as python-hcl2 hands it over, evaluated; `path` is what --set takes."""
        replaced, replacement = self.overrides.at(path)
        if replaced:
            return replacement
        if isinstance(raw, str):
            try:
                return self.evaluator.known(parse_value(raw))
            except Unresolved as error:
                return on_unresolved(path, error.at(path))
            except SourceError as error:
                raise error.at(path) from None
        if isinstance(raw, list):
            return [self.value(item, f"{path}[{i}]", on_unresolved) for i, item in enumerate(raw)]
        if isinstance(raw, dict):
            return {
                unquote(k): self.value(v, f"{path}.{unquote(k)}", on_unresolved)
                for k, v in raw.items()
                if k != "__is_block__"
            }
        return raw
