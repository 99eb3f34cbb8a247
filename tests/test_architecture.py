"""The packages' one-way arrows, checked on the source (what README's design section and
docs/architecture.md draw): the package graph has no cycle, the domain and the schedule engine
import no layer above them, storage imports no behaviour, the executor never imports the
dispatcher, the dashboard reaches storage only through the API's services and stores (never
the dispatcher or the actions), and nothing deployed imports the development tools.

One arrow points up on purpose: the app factory (`api/app.py`) mounts the dashboard, so that
the one app the Functions host serves includes it. It is the only `api` module that may
import `dashboard`, and the cycle check leaves that composition edge out."""

from __future__ import annotations

import re
from graphlib import CycleError, TopologicalSorter

import pytest

from devtools.measure import ROOT, _package, import_graph, package_graph

#: package -> packages it must not import (directly).
FORBIDDEN = {
    "domain": {"store", "api", "dispatch", "execution", "wire", "actions"},
    "schedule": {"store", "api", "dispatch", "execution", "wire", "actions", "domain"},
    "store": {"api", "dispatch", "execution", "wire", "actions", "schedule"},
    "wire": {"store", "api", "dispatch", "execution", "actions"},
    "actions": {"store", "api", "dispatch", "execution"},
    "execution": {"api", "dispatch"},
    "dispatch": {"api"},
    "dashboard": {"dispatch", "actions"},
    # The metrics read events and storage; the API serves them, the runtime feeds them.
    "metrics": {"api", "dispatch", "actions", "dashboard"},
    # The import writes through the HTTP API like any client: never the store or the services.
    "migrate": {"store", "api", "dispatch", "execution", "dashboard"},
}
#: (module, module it imports) edges that compose rather than depend (see the docstring).
COMPOSITION = {("scheduler_lib.api.app", "scheduler_lib.dashboard")}


def _layered_graph() -> dict[str, set[str]]:
    """The package graph without the composition edges."""
    edges: dict[str, set[str]] = {}
    for name, deps in import_graph().items():
        for dep in deps:
            source, target = _package(name), _package(dep)
            if source != target and (name, dep) not in COMPOSITION:
                edges.setdefault(source, set()).add(target)
    return edges


def test_the_package_graph_has_no_cycle() -> None:
    try:
        tuple(TopologicalSorter(_layered_graph()).static_order())
    except CycleError as exc:
        pytest.fail(f"packages import each other: {exc.args[1]}")


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package: str) -> None:
    assert package_graph().get(package, set()) & FORBIDDEN[package] == set()


def test_only_the_app_factory_imports_the_dashboard() -> None:
    importers = {
        name
        for name, deps in import_graph().items()
        if _package(name) == "api" and any(_package(dep) == "dashboard" for dep in deps)
    }
    assert importers == {name for name, _ in COMPOSITION}
    assert "api" in package_graph()["dashboard"]  # the dashboard goes through the API's services


def test_nothing_deployed_imports_the_development_tools() -> None:
    deployed = [ROOT / "function_app.py", *(ROOT / "scheduler_lib").rglob("*.py")]
    importing = re.compile(r"^\s*(from|import) devtools\b", re.M)
    assert [p.name for p in deployed if importing.search(p.read_text())] == []
    assert import_graph()  # the graph was read at all


def test_no_module_is_over_300_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "scheduler_lib").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 300
    }
    assert long == {}
