"""The packages' one-way arrows, checked on the source (what docs/architecture.md draws): the
package graph has no cycle, the domain and the schedule engine import no layer above them,
storage imports no behaviour, the executor never imports the dispatcher, the use cases
(`service`) import no front end, the dashboard reaches everything through the use cases
(storage and the API never, except the API's error mapping), and nothing deployed imports
the development tools.

`LAYERS` declares the order, lowest first: a module may import its own layer and those
below, never one above. No arrow points up, not even to compose: the API does not mount the
dashboard, the composition root (`runtime.create_web_app`) does."""

from __future__ import annotations

import re
from graphlib import CycleError, TopologicalSorter

import pytest

from devtools.measure import ROOT, import_graph, package_graph
from devtools.measure import _package as _unit  # a top-level module is its own unit

#: package -> packages it must not import (directly).
FORBIDDEN = {
    "domain": {"store", "api", "dispatch", "execution", "wire", "actions"},
    "schedule": {"store", "api", "dispatch", "execution", "wire", "actions", "domain"},
    "store": {"api", "dispatch", "execution", "wire", "actions", "schedule"},
    "wire": {"store", "api", "dispatch", "execution", "actions"},
    "actions": {"store", "api", "dispatch", "execution"},
    "execution": {"api", "dispatch"},
    "dispatch": {"api"},
    # The use cases serve both front ends and know neither (nor HTTP: see its docstring).
    "service": {"api", "dashboard"},
    # The API's routes call the use cases; the dashboard is mounted beside them, not by them.
    "api": {"dashboard"},
    # The dashboard reads and writes through the use cases only (`DASHBOARD_API` aside).
    "dashboard": {"dispatch", "actions", "store", "execution"},
    # The metrics read events and storage; the API serves them, the runtime feeds them.
    "metrics": {"api", "dispatch", "actions", "dashboard"},
    # Notifications read events and storage and send through the actions; the API arms
    # deadlines, the runtime feeds events.
    "notify": {"api", "dispatch", "execution", "dashboard"},
    # The import writes through the HTTP API like any client: never the store or the services.
    "migrate": {"store", "api", "dispatch", "execution", "dashboard", "service"},
}
#: The one API module the dashboard may import: how errors look (status, ARM error object).
DASHBOARD_API = {"scheduler_lib.api.errors"}

#: The layers, lowest first; a package (or top-level module) per name. A new package must be
#: placed here: the test below names it until it is.
LAYERS: tuple[tuple[str, ...], ...] = (
    # Settings, errors and time: what everything may use.
    ("errors", "timeutil", "storage_patience", "storage_calls", "metrics_settings",
     "identity_audiences", "app_settings", "precision", "watchdog_choice", "transport_choice",
     "key_vault_references", "config", "logs",
     "shared_reads", "group_commit", "storage_account", "storage_transport", "response_head",
     "concurrent_calls", "later_calls", "beats", "heap"),
    ("domain", "schedule"),  # the rules, pure
    ("wire",),  # the JSON in and out
    ("store", "actions"),  # the adapters: storage, and the calls a job makes
    ("execution", "dispatch", "health"),  # running jobs and finding them due
    ("metrics", "housekeeping", "notify"),  # watching the work: counts, notices
    # The import tool: reading sources and converting them is pure (it imports only the
    # layers below), so the import use case (`service/imports.py`) reuses it; its CLI is an
    # HTTP client of the API (`migrate/client.py`), never of the store or the services.
    ("migrate",),
    ("service", "front_end"),  # the use cases; who the client is (both front ends ask)
    ("api",),  # the REST API
    ("dashboard",),  # the web dashboard (imports only `api.errors` of the API)
    ("runtime", "__main__"),  # the composition root and the command line
)  # fmt: skip


def _level(unit: str) -> int:
    for level, units in enumerate(LAYERS):
        if unit in units:
            return level
    raise AssertionError(f"{unit} is in no layer: place it in tests/test_architecture.LAYERS")


def _unit_graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, deps in import_graph().items():
        for dep in deps:
            source, target = _unit(name), _unit(dep)
            if source != target and "(package)" not in (source, target):
                edges.setdefault(source, set()).add(target)
    return edges


def test_the_package_graph_has_no_cycle() -> None:
    try:
        tuple(TopologicalSorter(_unit_graph()).static_order())
    except CycleError as exc:
        pytest.fail(f"packages import each other: {exc.args[1]}")


def test_the_module_graph_has_no_cycle() -> None:
    """Of the imports that run: a module may name another that imports it for type hints
    only (`if TYPE_CHECKING:`, e.g. `execution.outcomes` the reports of `execute`), which
    never runs and cannot leave a module half-imported."""
    graph = {name: deps - {name} for name, deps in import_graph(typing_only=False).items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"modules import each other: {exc.args[1]}")


def test_no_arrow_points_up() -> None:
    upward = sorted(
        f"{name} -> {dep}"
        for name, deps in import_graph().items()
        for dep in deps
        if "(package)" not in (_unit(name), _unit(dep)) and _level(_unit(dep)) > _level(_unit(name))
    )
    assert upward == []


def test_every_module_has_a_layer() -> None:
    units = {_unit(name) for name in import_graph()} - {"(package)"}
    assert all(_level(unit) >= 0 for unit in units)
    assert {"service", "api", "dashboard", "runtime"} <= units  # the graph was read at all


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package: str) -> None:
    assert package_graph().get(package, set()) & FORBIDDEN[package] == set()


def test_the_dashboard_imports_the_use_cases_not_the_api() -> None:
    graph = import_graph()
    reached = {dep for name, deps in graph.items() if _unit(name) == "dashboard" for dep in deps}
    assert {dep for dep in reached if _unit(dep) == "api"} <= DASHBOARD_API
    assert any(_unit(dep) == "service" for dep in reached)
    # Nor by another road the graph does not see (a module named in a string).
    named = re.compile(r"scheduler_lib[./](store|api(?![./]errors\b)|dispatch|execution)\b")
    found = [
        f"{path.name}: {match.group(0)}"
        for path in (ROOT / "scheduler_lib" / "dashboard").rglob("*.py")
        for match in named.finditer(path.read_text())
    ]
    assert found == []


def test_the_composition_root_mounts_the_dashboard() -> None:
    importers = {
        name
        for name, deps in import_graph().items()
        if _unit(name) != "dashboard" and any(_unit(dep) == "dashboard" for dep in deps)
    }
    assert importers == {"scheduler_lib.runtime"}


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
