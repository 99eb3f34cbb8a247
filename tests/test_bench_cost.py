"""bench/cost.py's report on counts as the local host writes them (`storage_calls`): its
storage request lines count storage requests only, not the invocations nor the milliseconds
they ran (`seconds: <function>`, `seconds: active`), which the idle line once added in.

The counts are made by `storage_calls` itself (its `invoked` with a clock handed in, and
`count`), not typed in, so the keys are the ones a real host writes."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from scheduler_lib import storage_calls

ROOT = Path(__file__).resolve().parents[1]


def _cost() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_cost", ROOT / "bench" / "cost.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _counted(receives: int, invocations: int, seconds_each: float) -> Counter[str]:
    """What the host's counts move by over a window: `receives` polls, and `invocations`
    of the executor lasting `seconds_each`, one after the other."""
    before = Counter(storage_calls.snapshot())
    for _ in range(receives):
        storage_calls.count("host.worker_loop: - [queue GET]")
    ticks = iter(range(0, 2 * invocations))
    for _ in range(invocations):
        with storage_calls.invoked(
            "scheduler-executions", clock=lambda: next(ticks) * seconds_each
        ):
            storage_calls.count("execute: execution.claims [table PUT]")
    return Counter(storage_calls.snapshot()) - before


def test_the_idle_line_counts_storage_requests_not_invocation_seconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cost = _cost()
    idle = _counted(receives=300, invocations=2, seconds_each=1.5)
    assert idle["seconds: active"] > 0 and idle["seconds: scheduler-executions"] > 0
    work = _counted(receives=60, invocations=10, seconds_each=1.0)
    result = {
        "count": 10, "bare": 0.01, "received": 10, "missing": 0, "doubled": 0,
        "p50": 0.05, "p99": 0.1,
        "idle": {"host": 6.0, "azurite": 3.0, "counts": idle, "seconds": 60.0},
        "work": {"host": 2.0, "azurite": 0.5, "counts": work, "seconds": 12.0},
        "from_created": {"host": 4.0, "azurite": 1.5, "counts": work, "seconds": 30.0},
    }  # fmt: skip
    cost.report(result, "test")
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if x.startswith("idle over")]
    assert line.endswith(" 302 storage requests"), line  # 300 receives, 2 claims
    # Per occurrence: (60 + 10) / 10 = 7 requests; idle scaled to the window (12 s of 60):
    # 302 / 5 = 60.4, so 0.96 above idle.
    assert "storage requests per occurrence: 7.00 (0.96 above idle)" in out
    # The window the report is made of (12 s): host (2.0 - 6.0 * 12 / 60) / 10 = 80 ms...
    assert "| host (our processes) | 80.00 |" in out
    # ... and the one opened at the jobs' creation, 30 s: (4.0 - 6.0 * 30 / 60) / 10 = 100 ms.
    assert "window opened at the jobs' creation (30 s, as until the eleventh step): 100.00" in out
    assert result["summary"]["host_ms_from_created"] == pytest.approx(100.0)
