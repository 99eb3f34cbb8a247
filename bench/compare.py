"""Run one benchmark on two checkouts, alternately, and tabulate both medians and their ratio.

    .venv/bin/python bench/compare.py A_ROOT B_ROOT bench/recurrence.py [--pairs 3]
                                      [--match REGEX] [--via-root] [--out DIR] [-- ARGS...]

Why: a benchmark run on one tree at 04:00 and on the other at 04:20 measures the machine's
load as much as the code (its 2 cores are shared). Alternating A B A B ... in the same run
lets the load hit both trees alike; the project's standard is a table of medians with the
ratio against a baseline measured in the same run.

Each run is `python <root>/<script> ARGS` in `<root>` (each tree runs its own copy of the
benchmark), or with `--via-root` the script from B_ROOT with `--root <root>` appended, for
benchmarks that take `--root` (bench/cost.py, bench/lateness.py, bench/transport.py) or
that A's tree does not have. The root's path in the output reads `<root>`, so that rows
naming their tree match.

Benchmarks print tables in their own formats, so parsing is generic: every output line
holding numbers is one row, keyed by its text with the numbers masked (and by how many
times that masked text came before, so two tables with the same row names stay apart);
each number in it is one cell. A cell's value in each tree is the median over its runs;
printed per cell: median A, median B, B/A, and the lowest and highest B/A of the pairs
(run i of A with run i of B: a ratio that is consistent across pairs is a real change, one
that swings is noise). `--match` keeps the rows whose text matches (e.g. the table rows,
not the setup lines); the 1-minute load average before each run is printed with the table.
Every run's output is kept in `--out` to read the tables themselves. A run that exits
with a code not in `--ok` is run again (`--retries`); its pair keeps its place.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: A number in a benchmark's output: "12", "-0.5", "1,000", "3.1e-05"; a unit glued to it
#: ("ms", "x", "%") is part of the row's text, not of the number.
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Row:
    """One line of a benchmark's output that holds numbers."""

    key: tuple[str, int]  # (text with numbers masked as '#', occurrence of that text)
    label: str  # the text before the first number, to name the row in the table
    values: tuple[float, ...]


def parse(output: str) -> dict[tuple[str, int], Row]:
    """Every line of `output` that holds a number, by key."""
    rows: dict[tuple[str, int], Row] = {}
    seen: Counter[str] = Counter()
    for line in output.splitlines():
        numbers = NUMBER.findall(line)
        if not numbers:
            continue
        masked = " ".join(NUMBER.sub("#", line).split())
        key = (masked, seen[masked])
        seen[masked] += 1
        first = NUMBER.search(line)
        label = line[: first.start()].strip() if first else line.strip()
        values = tuple(float(n.replace(",", "")) for n in numbers)
        rows[key] = Row(key, label or masked, values)
    return rows


@dataclass(frozen=True)
class Cell:
    """One number of one row, in both trees."""

    label: str
    column: int
    a: list[float]
    b: list[float]

    def median_ratio(self) -> float:
        a = statistics.median(self.a)
        return statistics.median(self.b) / a if a else float("nan")

    def pair_ratios(self) -> list[float]:
        return [b / a for a, b in zip(self.a, self.b, strict=False) if a]


def cells(runs_a: list[str], runs_b: list[str], match: str | None = None) -> list[Cell]:
    """The cells of every row that all runs of both trees printed, in output order."""
    parsed_a = [parse(output) for output in runs_a]
    parsed_b = [parse(output) for output in runs_b]
    result: list[Cell] = []
    for key, row in parsed_b[0].items():
        if match and not re.search(match, key[0]):
            continue
        rows = [p.get(key) for p in parsed_a + parsed_b]
        if any(r is None or len(r.values) != len(row.values) for r in rows):
            continue  # a row only some runs printed (e.g. a warning): nothing to compare
        for column in range(len(row.values)):
            values = [r.values[column] for r in rows if r is not None]
            result.append(
                Cell(row.label, column + 1, values[: len(parsed_a)], values[len(parsed_a) :])
            )
    return result


def table(title: str, found: list[Cell], loads: list[float]) -> str:
    """One table: a row per cell, medians of A and B, B/A, and the range of B/A by pair."""
    lines = [
        f"{title}  (load 1-min before runs: {min(loads):.1f}-{max(loads):.1f}, "
        f"median {statistics.median(loads):.1f})",
        f"{'row [column]':<52} {'A median':>10} {'B median':>10} {'B/A':>6} {'pairs B/A':>13}",
    ]
    for cell in found:
        pairs = cell.pair_ratios()
        spread = f"{min(pairs):.2f}-{max(pairs):.2f}" if pairs else "-"
        name = f"{cell.label[:46]} [{cell.column}]"
        lines.append(
            f"{name:<52} {statistics.median(cell.a):>10.4g} {statistics.median(cell.b):>10.4g} "
            f"{cell.median_ratio():>6.2f} {spread:>13}"
        )
    return "\n".join(lines)


def command(root: Path, script: str, args: list[str], b_root: Path, via_root: bool) -> list[str]:
    if via_root:
        return [sys.executable, str(b_root / script), *args, "--root", str(root)]
    return [sys.executable, str(root / script), *args]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a_root", type=Path, help="the baseline checkout (A)")
    parser.add_argument("b_root", type=Path, help="the checkout compared with it (B)")
    parser.add_argument("script", help="the benchmark, relative to a root: bench/api.py")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--match", help="keep only rows whose masked text matches this regex")
    parser.add_argument(
        "--via-root", action="store_true", help="run B's script with --root <root> in both"
    )
    parser.add_argument("--retries", type=int, default=2,
                        help="run a failed run again this many times (a loaded machine can "
                        "make a benchmark give up, e.g. bench/cost.py's 'rerun')")  # fmt: skip
    parser.add_argument("--ok", type=lambda text: {int(c) for c in text.split(",")},
                        default={0}, help="exit codes of a run that counts (e.g. 0,1 for "
                        "bench/recurrence.py, which exits 1 when a target is missed)")  # fmt: skip
    parser.add_argument("--out", type=Path, help="keep every run's output in this directory")
    argv = sys.argv[1:] if argv is None else argv
    # Everything after "--" is the benchmark's (argparse would take it only if the options
    # came before the script).
    ours, args = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    options = parser.parse_args(ours)
    a_root, b_root = options.a_root.resolve(), options.b_root.resolve()
    name = Path(options.script).stem
    outputs: dict[str, list[str]] = {"A": [], "B": []}
    loads: list[float] = []
    for pair in range(options.pairs):
        for side, root in (("A", a_root), ("B", b_root)):
            loads.append(os.getloadavg()[0])
            cmd = command(root, options.script, args, b_root, options.via_root)
            print(f"[{name} pair {pair + 1} {side}] load {loads[-1]:.1f}: {' '.join(cmd)}",
                  file=sys.stderr, flush=True)  # fmt: skip
            for attempt in range(1 + options.retries):
                done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
                if options.out:
                    options.out.mkdir(parents=True, exist_ok=True)
                    (options.out / f"{name}-{side}{pair + 1}-{attempt}.txt").write_text(
                        done.stdout + "\n--- stderr ---\n" + done.stderr
                    )
                if done.returncode in options.ok:
                    break
                print(f"  failed ({done.returncode}): {done.stderr.strip()[-300:]}",
                      file=sys.stderr, flush=True)  # fmt: skip
            else:
                sys.exit(f"{' '.join(cmd)} failed {1 + options.retries} times")
            # A benchmark that prints its root would give each tree's rows another key.
            outputs[side].append(done.stdout.replace(str(root), "<root>"))
    title = f"{options.script} {' '.join(args)}: A={a_root.name}, B={b_root.name}"
    print(table(title, cells(outputs["A"], outputs["B"], options.match), loads))


if __name__ == "__main__":
    main()
