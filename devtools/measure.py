"""Shape of `scheduler_lib`: module count, lines per package, longest import chain.

Issue 12 asks for these numbers before and after the reshaping; this script is how they were
taken, so the next reshaping can take them the same way: `python devtools/measure.py`.
It reads source text only (the `ast` of each module), so it imports nothing and needs no
settings or storage.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "scheduler_lib"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(
    path: Path,
    modules: set[str],
    reexports: dict[str, str] | None = None,
    *,
    typing_only: bool = True,
) -> set[str]:
    """The `scheduler_lib` modules `path` imports (an `__init__` counts as its package);
    without `typing_only`, not those imported only for type checking (`if TYPE_CHECKING:`),
    which never run."""
    reexports = reexports or {}
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    skipped = set() if typing_only else _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            # A name a package re-exports (its public face) counts as the module defining it.
            target = reexports.get(target, target)
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _package(name: str) -> str:
    """`scheduler_lib.dispatch.tick` -> `dispatch`; a top-level module is its own package."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside `if TYPE_CHECKING:` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return inside


def import_graph(*, typing_only: bool = True) -> dict[str, set[str]]:
    """Each `scheduler_lib` module and the `scheduler_lib` modules it imports (without
    `typing_only`: only the imports that run, not those for type checking)."""
    names = {module_name(f): f for f in sorted((ROOT / PACKAGE).rglob("*.py"))}
    reexports: dict[str, str] = {}
    for name, path in names.items():
        if path.name == "__init__.py":
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.ImportFrom) and node.module in names and not node.level:
                    for alias in node.names:
                        reexports[f"{name}.{alias.asname or alias.name}"] = node.module
    return {
        name: imports_of(path, set(names), reexports, typing_only=typing_only)
        for name, path in names.items()
    }


def package_graph() -> dict[str, set[str]]:
    """The same one level up: each package (or top-level module) and those it imports."""
    edges: dict[str, set[str]] = defaultdict(set)
    for name, deps in import_graph().items():
        for dep in deps:
            source, target = _package(name), _package(dep)
            if source != target:
                edges[source].add(target)
    return edges


def main() -> None:
    files = sorted((ROOT / PACKAGE).rglob("*.py"))
    names = {module_name(f): f for f in files}
    graph = import_graph()

    @cache
    def depth(name: str, seen: frozenset[str] = frozenset()) -> tuple[str, ...]:
        best: tuple[str, ...] = (name,)
        for dep in sorted(graph[name]):
            if dep in seen:
                continue  # an import cycle: the chain stops where it would repeat
            chain = (name, *depth(dep, seen | {name}))
            if len(chain) > len(best):
                best = chain
        return best

    lines: dict[str, int] = defaultdict(int)
    counts: dict[str, int] = defaultdict(int)
    largest = max(files, key=lambda f: len(f.read_text().splitlines()))
    for path in names.values():
        rel = path.relative_to(ROOT / PACKAGE).parts
        package = rel[0] if len(rel) > 1 else "(top level)"
        lines[package] += len(path.read_text().splitlines())
        counts[package] += 1
    longest = max((depth(name) for name in sorted(names)), key=len)
    print(f"modules: {len(files)}")
    print(f"lines: {sum(lines.values())}")
    print(
        f"largest module: {largest.relative_to(ROOT)} "
        f"({len(largest.read_text().splitlines())} lines)"
    )
    print(f"import depth: {len(longest)} modules")
    print("  " + " -> ".join(n.removeprefix(PACKAGE + ".") for n in longest))
    edges = package_graph()
    print("package imports:")
    for source in sorted(edges):
        print(f"  {source} -> {', '.join(sorted(edges[source]))}")
    print("| package | modules | lines |")
    print("| --- | ---: | ---: |")
    for package in sorted(lines):
        print(f"| {package} | {counts[package]} | {lines[package]} |")


if __name__ == "__main__":
    main()
