"""The dashboard and the API import each other's modules (the dashboard the API's services,
the app factory the dashboard): each must import on its own, first, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

from devtools.azurite import ROOT


@pytest.mark.parametrize(
    "module",
    ["scheduler_lib.dashboard", "scheduler_lib.dashboard.words", "scheduler_lib.api"],
)
def test_imports_first(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
