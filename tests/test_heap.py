"""The entry points freeze the startup's objects (`heap.freeze_startup_objects`): they leave
every later full collection's scan, and what is made afterwards is still collected.

In a process of its own (freezing this one would freeze every test's objects): the
runtime's modules imported, then frozen."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import gc
import scheduler_lib.runtime  # the app's modules, the SDKs among them
from scheduler_lib.heap import freeze_startup_objects

class Node:
    pass

def garbage_cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a

startup = len(gc.get_objects())
frozen = freeze_startup_objects()
after = len(gc.get_objects())
garbage_cycle()
collected = gc.collect()
print(startup, frozen, after, collected)
"""


def test_the_startup_objects_are_frozen_and_later_garbage_still_collected() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    startup, frozen, after, collected = map(int, out.stdout.split())
    assert frozen > 50_000 and frozen >= startup * 0.9  # the imports' objects, nearly all
    assert after < 1_000  # what a collection still walks: only what came since
    assert collected >= 2  # a cycle made afterwards is collected as before


def test_both_entry_points_freeze_once_their_runtime_is_built() -> None:
    for path in (ROOT / "function_app.py", ROOT / "devtools" / "devhost.py"):
        calls = [
            node.func.id
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        ]
        assert calls.count("freeze_startup_objects") == 1, path.name
        assert calls.index("Runtime") < calls.index("freeze_startup_objects"), path.name
