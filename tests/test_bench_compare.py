"""bench/compare.py on a trivial benchmark: what it parses and tabulates, not how fast
anything runs.

The benchmark prints fixed numbers read from its own checkout (a file `value` in each of
two temporary roots, and a count of its runs kept there), so every median and ratio is
known in advance and the test cannot flake on the machine's load.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Two tables with the same row name (told apart by their order), a number inside a name
#: ("p99"), a thousands separator, a unit glued to a number, and a row only the first run of
#: each tree prints (compared in no table). The first table's second column grows with the
#: run, so its median is the middle run's value.
BENCH = """
import sys
from pathlib import Path

here = Path(__file__).resolve().parents[1]
scale = float(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else 1
value = float((here / "value").read_text()) * scale
runs = here / "runs"
run = len(runs.read_text()) if runs.exists() else 0
runs.write_text("x" * (run + 1))
if run == 0:
    print("warming up 1 2 3")
print("first table (median ms)")
print(f"read p99       {value:.1f}  {value * (1 + run):.1f}")
print("second table (median ms)")
print(f"read p99       {2 * value:,.0f}  {value:.1f}x")
"""


def tree(parent: Path, name: str, value: float) -> Path:
    root = parent / name
    (root / "bench").mkdir(parents=True)
    (root / "bench" / "toy.py").write_text(BENCH)
    (root / "value").write_text(str(value))
    return root


def compare(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "compare.py"), *args],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return done.stdout


def rows(output: str) -> list[list[str]]:
    """The table's rows split on runs of spaces; the heading lines left out."""
    return [line.split() for line in output.splitlines()[2:]]


def test_medians_and_ratio_of_every_cell_in_order(tmp_path: Path) -> None:
    a, b = tree(tmp_path, "a", 1000.0), tree(tmp_path, "b", 1500.0)
    out = compare(str(a), str(b), "bench/toy.py", "--pairs", "3", "--out", str(tmp_path / "o"))

    assert "A=a, B=b" in out.splitlines()[0]
    # The first table's row, then the second's; "warming up" (only in run 1) in neither, and
    # the 99 of "p99" is part of the name, not a cell.
    assert rows(out) == [
        ["read", "p99", "[1]", "1000", "1500", "1.50", "1.50-1.50"],
        # runs 1, 2, 3 print value x 1, 2, 3: the median is run 2's
        ["read", "p99", "[2]", "2000", "3000", "1.50", "1.50-1.50"],
        ["read", "p99", "[1]", "2000", "3000", "1.50", "1.50-1.50"],
        ["read", "p99", "[2]", "1000", "1500", "1.50", "1.50-1.50"],
    ]
    assert len(list((tmp_path / "o").glob("toy-*.txt"))) == 6


def test_a_failed_run_is_run_again(tmp_path: Path) -> None:
    """As bench/cost.py gives up ("rerun") when a loaded machine made it too slow."""
    a, b = tree(tmp_path, "a", 1.0), tree(tmp_path, "b", 2.0)
    give_up_once = (
        "import sys; from pathlib import Path\n"
        "flag = Path(__file__).parent / 'failed'\n"
        "if not flag.exists(): flag.touch(); sys.exit('took too long; rerun')\n"
    )
    (b / "bench" / "toy.py").write_text(give_up_once + BENCH)

    out = compare(str(a), str(b), "bench/toy.py", "--pairs", "1", "--match", r"#x$")

    assert rows(out)[0] == ["read", "p99", "[1]", "2", "4", "2.00", "2.00-2.00"]


def test_match_and_the_benchmarks_own_arguments(tmp_path: Path) -> None:
    a, b = tree(tmp_path, "a", 2.0), tree(tmp_path, "b", 1.0)
    out = compare(
        str(a), str(b), "bench/toy.py", "--pairs", "1", "--match", r"#x$", "--", "--scale", "10"
    )

    assert rows(out) == [
        ["read", "p99", "[1]", "40", "20", "0.50", "0.50-0.50"],
        ["read", "p99", "[2]", "20", "10", "0.50", "0.50-0.50"],
    ]


def test_via_root_runs_b_script_with_each_root(tmp_path: Path) -> None:
    """With --via-root both runs use B's script, told which tree to measure by --root; the
    row names its root, as bench/transport.py's does, and still matches across trees."""
    script = "import sys; print(sys.argv[-1], 'value', open(sys.argv[-1] + '/value').read())"
    a, b = tree(tmp_path, "a", 3.0), tree(tmp_path, "b", 6.0)
    (b / "bench" / "toy.py").write_text(script)
    (a / "bench" / "toy.py").write_text("raise SystemExit(3)")  # never run

    out = compare(str(a), str(b), "bench/toy.py", "--pairs", "2", "--via-root")

    assert rows(out) == [["<root>", "value", "[1]", "3", "6", "2.00", "2.00-2.00"]]
