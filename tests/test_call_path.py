"""The executor's shape (issue 21): one state machine whose rules are pure and whose modules
import each other one way, and the path of one message through it kept short; the
dispatcher's decisions pure as well. The path of one PUT of a job kept short too: the
middleware's one pass, one reading step, the use case, the route's rendering.

The graph checks read the source (`devtools.measure.import_graph`, annotations-only imports
included, so a circle hidden behind `TYPE_CHECKING` counts too). The path check runs one
scheduled occurrence through the worker's real composition root against the session's
Azurite and a local HTTP target (`devtools/call_path.py`, whose docstring states the
counting rule): it fails when a change sends the message back and forth between the
executor's modules again.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import sys
from graphlib import CycleError, TopologicalSorter
from types import FrameType
from typing import Any

import pytest

from devtools.call_path import (
    SCOPES,
    in_scope,
    resumed,
    returns,
    stops,
    trace_message,
    trace_put,
)
from devtools.measure import ROOT, import_graph
from scheduler_lib.config import Settings

EXECUTION = "scheduler_lib.execution."
#: The executor's decisions, and the dispatcher's. (`execution/lifecycle.py`, the
#: bookkeeping's changes, is pure too, but reaches storage's `HistoryEntry` through
#: `pause.pause_entry`.)
DECIDE = "scheduler_lib.execution.decide"
DECISIONS = (DECIDE, "scheduler_lib.dispatch.decide")
#: What a pure module's imports (and theirs, transitively) must not reach.
IO_PACKAGES = ("scheduler_lib.store", "scheduler_lib.api", "scheduler_lib.dispatch")
IO_LIBRARIES = {"azure", "httpx", "requests", "socket", "threading", "http"}
#: Bounds of the message path, (stops, returns) for a message delivered on time and one
#: delivered early, which waits for its second and checks the job again (issue 21: 24 / 13
#: before -> 12 / 4). 24 / 12 and 25 / 13 when this test was written; 13 / 4 and 15 / 6 with
#: the state machine; 12 / 4 and 14 / 6 since the retry policy is looked up only for a
#: failed attempt (`decide.follow_up`), not by the driver for every attempt; 13 / 5 and
#: 15 / 7 since the heartbeat is stopped before the attempt's update, which starts from its
#: last renewal (`Heartbeat.stop`): one visit more, two storage requests fewer per renewed
#: attempt (a write failing on the renewal's ETag and a read), and no race with a renewal.
BOUNDS = {False: (13, 5), True: (15, 7)}
#: Bounds of a PUT that creates a job, (stops, returns) in `api/` and `service/` (issue 21:
#: at most 10 / 3). 43 / 33 before (30 / 20 once a resumed coroutine no longer counted as
#: a call); 10 / 3 since the middleware runs once, the request is read in one step and the
#: use case calls the context and the job's plan once each.
PUT_BOUNDS = (10, 3)


def _closure(start: str) -> set[str]:
    graph = import_graph()
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def _libraries(module: str) -> set[str]:
    """The top-level names of what `module`'s source imports from outside the package."""
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = ROOT / module.replace(".", "/") / "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_executors_modules_import_each_other_one_way() -> None:
    """No circle among `execution/`'s modules: `finish` does not come back to `execute`,
    the reports' modules do not need the events that read them."""
    graph = {
        name: {dep for dep in deps if dep.startswith(EXECUTION)}
        for name, deps in import_graph().items()
        if name.startswith(EXECUTION)
    }
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"execution modules import each other: {exc.args[1]}")
    assert DECIDE in graph  # the graph was read at all


@pytest.mark.parametrize("module", DECISIONS)
def test_the_decisions_do_no_io(module: str) -> None:
    """The executor's and the dispatcher's decisions reach no storage, queue, network or
    thread, however far their imports go: they are functions of what they are given."""
    reached = _closure(module)
    assert {m for m in reached - {module} if m.startswith(IO_PACKAGES)} == set()
    libraries = {name: _libraries(name) & IO_LIBRARIES for name in reached}
    assert {name: libs for name, libs in libraries.items() if libs} == {}


def test_the_counting_rule() -> None:
    """Consecutive calls in one module are one stop; a stop in a module already left is a
    return (`devtools/call_path.py`)."""
    path = stops(["a", "a", "b", "c", "c", "b", "a"])
    assert path == ["a", "b", "c", "b", "a"] and returns(path) == 2
    assert in_scope(["execution.x", "store.y", "execution.x"], ("execution",)) == [
        "execution.x",
        "execution.x",
    ]


def test_a_coroutine_taken_up_again_is_not_called_again() -> None:
    """The profiler reports a coroutine resumed after an `await` as a "call"; the count
    leaves those out (as it leaves out a function returning to its caller), so an ASGI
    middleware awaiting the app is one stop, not one per suspension of the request."""
    events: list[tuple[str, bool]] = []

    async def inner() -> None:
        await asyncio.sleep(0)

    async def outer() -> None:
        await inner()
        await asyncio.sleep(0)

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_name in ("inner", "outer"):
            events.append((frame.f_code.co_name, resumed(frame)))

    sys.setprofile(profile)
    try:
        asyncio.run(outer())
    finally:
        sys.setprofile(None)
    assert [name for name, again in events if not again] == ["outer", "inner"]
    assert [name for name, again in events if again] == ["outer", "inner", "outer"]


@pytest.mark.parametrize("early", [False, True], ids=["on-time", "early"])
def test_one_message_goes_through_the_executor_without_going_back_and_forth(
    settings: Settings, early: bool
) -> None:
    path = stops(in_scope(trace_message(settings, early=early), SCOPES["message"]))

    assert path[0] == "execution.execute"
    assert "execution.execute" not in path[1:]  # nothing calls back into the driver
    max_stops, max_returns = BOUNDS[early]
    assert len(path) <= max_stops and returns(path) <= max_returns, " > ".join(path)


def test_one_put_goes_from_the_route_to_the_use_case_and_back_once(settings: Settings) -> None:
    """The middleware (its key check in `auth_limit`), one reading step (`requests`), the
    route, the use case (`service.jobs` with the context and the job's plan), and out
    through the middleware: no module of the API visited twice before the answer."""
    keyed = dataclasses.replace(settings, api_keys=("trace-key",))  # the key `trace_put` sends
    path = stops(in_scope(trace_put(keyed), SCOPES["put"]))

    assert path[0] == "api.middleware" and path[-1] == "api.middleware"
    api = [module for module in path[:-1] if module.startswith("api.")]
    assert len(api) == len(set(api)), " > ".join(path)
    max_stops, max_returns = PUT_BOUNDS
    assert len(path) <= max_stops and returns(path) <= max_returns, " > ".join(path)
