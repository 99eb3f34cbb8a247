"""The scheduler resources of a Bicep file: `Microsoft.Scheduler/jobCollections@...` and
`.../jobs@...` declarations, top-level or nested in a collection's body (`resource j 'jobs'`),
plain, conditional (`= if (...) {...}`) or in `for` loops.

A job names its collection by `parent: coll` (a collection symbol, `existing` ones
included: the job then goes into a collection the file does not create), by nesting, or by
a `collection/job` name. Paths in messages start with the symbolic name
(`job.properties.action.request.uri`; `coll::job...` when nested), and `--set` takes them.
A `module` whose local file declares scheduler resources is refused: import that file on its
own, with its params.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from scheduler_lib.migrate.arm_template import MISSING
from scheduler_lib.migrate.bicep_eval import ResourceRef, object_items, text
from scheduler_lib.migrate.confine import readable
from scheduler_lib.migrate.deployment_functions import resource_id
from scheduler_lib.migrate.found import SECRET_KEYS, Found, FoundCollection, FoundJob, MissingSecret
from scheduler_lib.migrate.found import dropped as dropped_note
from scheduler_lib.migrate.problems import SourceError, Unknown, Unresolved

if TYPE_CHECKING:
    from scheduler_lib.migrate.bicep import BicepFile

COLLECTION = "microsoft.scheduler/jobcollections"
JOB = "microsoft.scheduler/jobcollections/jobs"
_IGNORED = frozenset({"name", "parent", "dependsOn", "scope"})


@dataclass(frozen=True)
class Declaration:
    node: Node
    symbol: str  # the path prefix: `coll`, `coll::job`
    kind: str  # lower-case full type
    api_version: str
    existing: bool
    value: Node


def declaration(file: BicepFile, node: Node, parent: Declaration | None) -> Declaration:
    name = next(text(c) for c in node.named_children if c.type == "identifier")
    type_node = next(c for c in node.named_children if c.type == "string")
    kind, _, version = file.literal_string(type_node).partition("@")
    kind = kind.lower()
    if parent is not None and "/" not in kind:
        kind = f"{parent.kind}/{kind}"
    symbol = f"{parent.symbol}::{name}" if parent else name
    existing = any(c.type == "existing" for c in node.children)
    return Declaration(node, symbol, kind, version, existing, node.named_children[-1])


def instances(file: BicepFile, value: Node, body: Callable[[Node], Any]) -> list[Any]:
    """What a declaration's value creates: one body, none or one (`if`), or a loop's."""
    if value.type == "for_statement":
        return file.evaluator.comprehension(value, body)
    if value.type == "if_statement":
        condition = file.evaluator.known(value.named_children[0])
        if not isinstance(condition, bool):
            raise SourceError("", f"{text(value.named_children[0])}: a condition must be a bool")
        return [body(value.named_children[1])] if condition else []
    return [body(value)]


def reference(file: BicepFile, node: Node) -> Any:
    """A resource symbol's value (a list for a loop): its known identity."""
    decl = declaration(file, node, None)
    refs = instances(file, decl.value, lambda body: _ref(file, decl, body, None))
    if decl.value.type == "if_statement" and not refs:
        body = decl.value.named_children[1]
        refs = [_ref(file, decl, body, None)]
    return refs if decl.value.type == "for_statement" else refs[0]


def _ref(file: BicepFile, decl: Declaration, body: Node, parent: str | None) -> ResourceRef:
    items = dict(object_items(body))
    name = file.value(items["name"], f"{decl.symbol}.name") if "name" in items else None
    if not isinstance(name, str):
        raise SourceError(f"{decl.symbol}.name", "a resource needs a string name")
    if "parent" in items:
        owner = file.evaluator.known(items["parent"])
        parent = owner.get("name") if isinstance(owner, dict) else None
    names = ([*parent.split("/")] if parent else []) + name.split("/")
    ref = ResourceRef(name=name, type=decl.kind, apiVersion=decl.api_version)
    segments = len(decl.kind.split("/")) - 1
    ref["id"] = (
        resource_id(file.deployment, "resourceid", [decl.kind, *names])
        if len(names) == segments
        else Unknown(f"the id of {decl.symbol} needs its parent's name")
    )
    return ref


def read_bicep(file: BicepFile) -> Found:
    for module in file.modules:
        target = next((c for c in module.named_children if c.type == "string"), None)
        path = file.path.parent / file.literal_string(target) if target is not None else None
        if (
            path is not None
            and readable(path)
            and "microsoft.scheduler" in path.read_text().lower()
        ):
            raise SourceError(
                text(module.named_children[0]),
                f"the module {path.name} declares scheduler resources: import it on its own",
            )
    found = Found()
    for node in file.top:
        _walk(file, declaration(file, node, None), None, found)
    return found


def _walk(file: BicepFile, decl: Declaration, parent: str | None, found: Found) -> None:
    if decl.kind == COLLECTION:
        instances(file, decl.value, lambda body: _collection(file, decl, body, found))
    elif decl.kind == JOB and not decl.existing:
        found.jobs.extend(instances(file, decl.value, lambda body: _job(file, decl, body, parent)))


def _collection(file: BicepFile, decl: Declaration, body: Node, found: Found) -> None:
    items = dict(object_items(body))
    ref = _ref(file, decl, body, None)
    name = ref.name
    if not decl.existing:
        collection = FoundCollection(name=name, where=decl.symbol)
        for key in ("location", "tags", "properties"):
            if key in items:
                setattr(collection, key, file.value(items[key], f"{decl.symbol}.{key}"))
        collection.notes = _extra(items, decl.symbol, ("location", "tags", "properties"))
        found.collections.append(collection)
    for prop in body.named_children:
        nested = prop.named_children[0] if prop.type == "object_property" else None
        if nested is not None and nested.type == "resource_declaration":
            _walk(file, declaration(file, nested, decl), name, found)


def _job(file: BicepFile, decl: Declaration, body: Node, parent: str | None) -> FoundJob:
    items = dict(object_items(body))
    ref = _ref(file, decl, body, parent)
    if "parent" in items:
        owner = file.evaluator.known(items["parent"])
        if not isinstance(owner, ResourceRef) or owner.get("type") != COLLECTION:
            raise SourceError(f"{decl.symbol}.parent", "must be a job collection's symbol")
        parent = owner.name
    parts = ref.name.split("/")
    if parent is None and len(parts) != 2:
        raise SourceError(
            f"{decl.symbol}.name", "without a parent, a job's name is 'collection/job'"
        )
    if parent is not None and len(parts) > 1 and parts[0].lower() != parent.lower():
        raise SourceError(f"{decl.symbol}.name", f"does not name a job of {parent!r}")
    job = FoundJob(collection=parent or parts[0], name=parts[-1], where=decl.symbol)
    base = f"{decl.symbol}.properties"

    def missing_secret(path: str, error: Unresolved) -> Any:
        if path.rsplit(".", 1)[-1].lower() not in SECRET_KEYS:
            raise error
        job.missing.append(
            MissingSecret("properties" + path[len(base) :], error.expression, error.reason)
        )
        return MISSING

    if "properties" in items:
        job.properties = file.value(items["properties"], base, missing_secret)
    job.notes = _extra(items, decl.symbol, ("properties",))
    return job


def _extra(items: dict[str, Node], symbol: str, own: tuple[str, ...]) -> list[Any]:
    return [
        dropped_note(f"{symbol}.{key}", "not part of the 2016-03-01 API")
        for key in items
        if key not in own and key not in _IGNORED
    ]
