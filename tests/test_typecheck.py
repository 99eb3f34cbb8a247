"""`make lint` type-checks the deployed code and the development tools (mypy, configured in
pyproject.toml) and `.ci/run` does too; every `# type: ignore` says why on its own line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: Only bounds a hang: a full mypy run took over 240 s on a loaded 2-core machine.
MYPY_TIMEOUT = 900


@pytest.mark.slow
@pytest.mark.timeout(MYPY_TIMEOUT + 60)  # the suite's 300 s per test would cut it first
def test_mypy_is_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=MYPY_TIMEOUT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_and_ci_run_the_type_checker() -> None:
    lint = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "mypy" in lint
    assert "mypy" in (ROOT / ".ci" / "run").read_text()


def test_every_type_ignore_gives_its_reason() -> None:
    bare = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in [*ROOT.glob("scheduler_lib/**/*.py"), *ROOT.glob("devtools/*.py")]
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"# type: ignore(\[[\w,-]+\])?\s*$", line)
    ]
    assert bare == []
