"""Where a source may read other files from (`file()` in Terraform, `loadTextContent()` and
modules in Bicep): anywhere for the CLI, whose user names files on their own machine; only
inside the upload's own folder for the import use case (`service/imports.py`), whose files
come from an HTTP request and must not read the server's files (`../../etc/...`), nor print
where the server keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

_ROOT: ContextVar[Path | None] = ContextVar("import_root", default=None)


@contextmanager
def confined_to(root: Path) -> Iterator[None]:
    """Within this block (this thread's context), reads stay inside `root`."""
    token = _ROOT.set(root.resolve())
    try:
        yield
    finally:
        _ROOT.reset(token)


def readable(target: Path) -> bool:
    """Whether `target` is a file the source may read."""
    root = _ROOT.get()
    if root is not None and not target.resolve().is_relative_to(root):
        return False
    return target.is_file()


def shown(path: Path) -> str:
    """`path` as messages print it: relative to the upload's folder when confined."""
    root = _ROOT.get()
    if root is not None and path.resolve().is_relative_to(root):
        return str(path.resolve().relative_to(root)) or "."
    return str(path)
