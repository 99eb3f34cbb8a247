"""A Bicep file, read with the tree-sitter grammar the project already uses for `infra/`:
its params, vars and resource symbols, and the evaluation of values with paths.

A `param` takes its value from `--set NAME=VALUE`, the parameters file (ARM's JSON format,
which Bicep also reads) or its default; without one it is an `Unknown`, as in ARM templates
(`arm_template`). `@allowed` is checked. A resource's symbol gives its `name`, `id`, `type`
and `apiVersion`, which are known before deployment; anything else (`.properties`, the
deployed state) is an `Unknown`. `loadTextContent`, `loadFileAsBase64` and
`loadJsonContent` read files next to the Bicep file, as the compiler does.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import tree_sitter
import tree_sitter_bicep

from scheduler_lib.migrate.arm_template import MISSING, OnUnresolved
from scheduler_lib.migrate.bicep_eval import Evaluator, object_items, string_value, text
from scheduler_lib.migrate.bicep_resources import reference
from scheduler_lib.migrate.confine import readable
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.functions import is_int, kind
from scheduler_lib.migrate.memo import Memo
from scheduler_lib.migrate.overrides import Overrides, typed
from scheduler_lib.migrate.problems import (
    Evaluated,
    SourceError,
    Unknown,
    Unresolved,
    parameter_hint,
)

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bicep.language()))
_TYPES = {"string": str, "int": int, "bool": bool, "object": dict, "array": list}


def _raise(path: str, error: Unresolved) -> Any:
    raise error


class BicepFile:
    def __init__(
        self,
        path: Path,
        *,
        given: dict[str, Evaluated],
        overrides: Overrides,
        deployment: Deployment,
    ) -> None:
        self.path = path
        self.source = path.read_bytes()
        self.given = given
        self.overrides = overrides
        self.deployment = deployment
        root = _PARSER.parse(self.source).root_node
        _check_syntax(path, root)
        self.params: dict[str, tuple[tree_sitter.Node, list[str]]] = {}
        self.vars: dict[str, tree_sitter.Node] = {}
        self.resources: dict[str, tree_sitter.Node] = {}
        self.modules: list[tree_sitter.Node] = []
        self.top: list[tree_sitter.Node] = []
        self._collect(root)
        self.evaluator = Evaluator(self)
        self._memo: Memo[Evaluated] = Memo()

    def _collect(self, root: tree_sitter.Node) -> None:
        decorators: list[str] = []
        for node in root.named_children:
            if node.type == "decorators":
                decorators = [text(d) for d in node.named_children]
                continue
            name = next((text(c) for c in node.named_children if c.type == "identifier"), "")
            if node.type == "parameter_declaration":
                self.params[name] = (node, decorators)
            elif node.type == "variable_declaration":
                self.vars[name] = node.named_children[-1]
            elif node.type == "resource_declaration":
                self.resources[name] = node
                self.top.append(node)
            elif node.type == "module_declaration":
                self.modules.append(node)
            decorators = []

    # --- symbols -------------------------------------------------------------------------------

    def symbol(self, name: str, node: tree_sitter.Node) -> Any:
        if name in self.params:
            return self._memo.get(f"param {name}", lambda: self._parameter(name))
        if name in self.vars:
            return self._memo.get(f"var {name}", lambda: self.evaluator.evaluate(self.vars[name]))
        if name in self.resources:
            return self._memo.get(f"resource {name}", lambda: reference(self, self.resources[name]))
        raise SourceError("", f"{text(node)}: the file declares no param, var or resource {name!r}")

    def is_resource(self, name: str) -> bool:
        return name in self.resources and name not in self.params and name not in self.vars

    def _parameter(self, name: str) -> Any:
        node, decorators = self.params[name]
        type_node = next((c for c in node.named_children if c.type == "type"), None)
        declared = text(type_node) if type_node is not None else "any"
        given = self.overrides.parameter(name)
        value: Evaluated
        if given is not None:
            value = typed(name, declared if declared in _TYPES else "any", given)
        elif name in self.given:
            value = self.given[name]
            if isinstance(value, Unknown):
                return value
        elif any(c.type == "=" for c in node.children):
            self.evaluator.in_default = True
            try:
                value = self.evaluator.known(node.named_children[-1])
            except Unresolved as error:
                return Unknown(
                    f"param {name!r} has no value and its default {error.detail}",
                    parameter_hint(name, error),
                )
            finally:
                self.evaluator.in_default = False
        else:
            return Unknown(
                f"param {name!r} has no value",
                f"give it in --parameters FILE or with --set {name}=VALUE",
            )
        self._check(name, declared, value, decorators)
        return value

    def _check(self, name: str, declared: str, value: Any, decorators: list[str]) -> None:
        expected = _TYPES.get(declared)
        fits = expected is None or (
            is_int(value) if expected is int else isinstance(value, expected)
        )
        if not fits:
            raise SourceError(
                f"param {name}", f"is declared {declared} but the value is {kind(value)}"
            )
        for decorator in decorators:
            if decorator.startswith("@allowed(") or decorator.startswith("@sys.allowed("):
                allowed = self._decorator_argument(decorator)
                if value not in allowed:
                    raise SourceError(
                        f"param {name}", f"{value!r} is not one of @allowed {allowed}"
                    )

    def _decorator_argument(self, decorator: str) -> Any:
        root = _PARSER.parse(f"var x = {decorator[decorator.index('(') + 1 : -1]}".encode())
        return Evaluator(self).known(root.root_node.named_children[0].named_children[-1])

    def call(self, name: str, args: list[Any], node: tree_sitter.Node) -> Any:
        loaders = {
            "loadtextcontent": "text",
            "loadfileasbase64": "base64",
            "loadjsoncontent": "json",
        }
        how = loaders.get(name.lower())
        if how is None:
            return NotImplemented
        if not args or not isinstance(args[0], str):
            raise SourceError("", f"{text(node)}: takes a file path")
        target = self.path.parent / args[0]
        if not readable(target):
            return Unknown(f"the file {args[0]!r} is not next to {self.path.name}")
        data = target.read_bytes()
        if how == "base64":
            return base64.b64encode(data).decode()
        return json.loads(data) if how == "json" else data.decode()

    # --- values with paths ---------------------------------------------------------------------

    def value(self, node: tree_sitter.Node, path: str, on_unresolved: OnUnresolved = _raise) -> Any:
        """A value of the file, evaluated; `path` names it in messages and for `--set`."""
        replaced, replacement = self.overrides.at(path)
        if replaced:
            return replacement
        if node.type == "object":
            result = {}
            for key, item in object_items(node):
                evaluated = self.value(item, f"{path}.{key}", on_unresolved)
                if evaluated is not MISSING:
                    result[key] = evaluated
            return result
        if node.type == "array":
            return [
                self.value(c, f"{path}[{i}]", on_unresolved)
                for i, c in enumerate(node.named_children)
            ]
        try:
            return self.evaluator.known(node)
        except Unresolved as error:
            return on_unresolved(path, error.at(path))
        except SourceError as error:
            raise error.at(path) from None

    def literal_string(self, node: tree_sitter.Node) -> str:
        return string_value(node, self.evaluator.known)


def _check_syntax(path: Path, root: tree_sitter.Node) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            line, column = node.start_point
            raise SourceError(f"{path.name}:{line + 1}:{column + 1}", "is not valid Bicep syntax")
        stack.extend(node.children)
