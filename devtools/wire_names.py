"""How many files under `scheduler_lib/` mention each 2026-12-01 extension property's wire
name (issue 21): at most three should, its field declaration (`domain/definition.py`,
`domain/actions.py`), its validator with its catalog entry (`wire/`), and its one place of
behaviour; everything else (the OpenAPI document, the dashboard's words, report strings,
docstrings) takes the name from the entry or says the concept. The names are the catalog's
(`wire.extension_catalog.CATALOG`), so a new property is counted without editing this file.

A camelCase name is counted wherever it occurs as a word. A one-word lowercase name
(`tags`, `timeout`, ...) is an English word and a Python name too, so only its quoted or
backticked form (`"tags"`, `` `timeout` ``) or its JSON path
(`properties.tags`, `status.health`) counts, and a few files that quote the same word
for another thing (`HOMONYMS`) are left out, each with its reason.

    python -m devtools.wire_names            # the table
    python -m devtools.wire_names --files    # and the files of each
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from scheduler_lib.wire.extension_catalog import CATALOG

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scheduler_lib"
#: The text files of the package (code, templates, scripts, the JSON schemas).
SUFFIXES = {".py", ".html", ".js", ".css", ".json", ".svg"}
#: Files (relative to `scheduler_lib/`, a trailing `/` for a folder) that quote a lowercase
#: wire name for something else than the extension property.
HOMONYMS: dict[str, dict[str, str]] = {
    "tags": {
        "migrate/": "ARM templates' resource tags (a collection's), not a job's",
        "wire/collections.py": "a job collection's ARM tags (2016-03-01)",
        "wire/dialect.py": "a job collection's ARM tags, as 2016-03-01 answered them",
        "api/schemas.json": "the 2016-03-01 job collection's ARM tags",
        "dashboard/templates/collection.html": "a CSS class of the collection page's table",
    },
    "health": {
        "notify/formats.py": "the `health` key of a notification's own JSON body",
        "metrics/scrape.py": "the module `scheduler_lib/health.py`",
        "service/__init__.py": "the module `scheduler_lib/health.py`",
    },
    "timeout": {
        "actions/__init__.py": "the `timeout` keyword argument of every action executor",
        "actions/pinned.py": "urllib3's `timeout` argument",
        "actions/checked_socket.py": "urllib3's `timeout` argument, shortened to the deadline",
        "store/storage_retries.py": "the key of azure-core's retry settings for the total time",
        "storage_account.py": "requests' `timeout` keyword argument",
    },
}


def property_names() -> list[str]:
    """Every extension property's wire name (the read-only ones under a job's `status`
    too), once each, in the catalog's order."""
    names = [prop.name for prop in CATALOG.properties] + [s.name for s in CATALOG.statuses]
    return list(dict.fromkeys(names))


def _pattern(name: str) -> re.Pattern[str]:
    if name.islower():
        return re.compile(rf"([\"'`]){re.escape(name)}\1|(properties|status)\.{re.escape(name)}\b")
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def _excused(name: str, relative: str) -> bool:
    return any(
        relative.startswith(where) if where.endswith("/") else relative == where
        for where in HOMONYMS.get(name, {})
    )


def files_mentioning(name: str, package: Path = PACKAGE) -> list[str]:
    """The files (relative to `package`) that mention `name` as a wire name."""
    pattern = _pattern(name)
    found = []
    for path in sorted(package.rglob("*")):
        if path.suffix not in SUFFIXES or "__pycache__" in path.parts or not path.is_file():
            continue
        relative = path.relative_to(package).as_posix()
        if not _excused(name, relative) and pattern.search(path.read_text(errors="replace")):
            found.append(relative)
    return found


def counts(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Each property's wire name -> the files mentioning it."""
    return {name: files_mentioning(name, package) for name in property_names()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list the files of each")
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout to count")
    args = parser.parse_args(argv)
    print("| property | files |\n|---|---|")
    for name, files in counts(args.root / "scheduler_lib").items():
        listed = f" ({', '.join(files)})" if args.files else ""
        print(f"| `{name}` | {len(files)}{listed} |")


if __name__ == "__main__":
    main()
