"""Each 2026-12-01 extension property's wire name is spelled in at most three files of
`scheduler_lib/` (issue 21): its field declaration, its validator with its catalog entry, and
its one place of behaviour. Everything else (the OpenAPI document, the dashboard's words and
templates, report strings, docstrings) takes the name from the declaration or says the
concept, so renaming or documenting a property means reading three files, not fifteen.

The count is `devtools/wire_names.py`'s, over the catalog's own list, so a new property is
held to the same bound without editing this test.
"""

from __future__ import annotations

from pathlib import Path

from devtools import wire_names
from scheduler_lib.wire.extension_catalog import CATALOG

LIMIT = 3


def test_every_extension_property_is_named_in_at_most_three_files() -> None:
    crowded = {name: files for name, files in wire_names.counts().items() if len(files) > LIMIT}
    assert not crowded, (
        f"wire names spelled in more than {LIMIT} files of scheduler_lib/ (take the name "
        f"from its declaration, e.g. `dashboard.words.FIELD`, or say the concept): {crowded}"
    )


def test_every_catalog_property_is_counted_and_found_in_its_declaration() -> None:
    """The count covers the whole catalog and finds each name where it is declared (a
    pattern that found nothing would pass the bound above without measuring anything)."""
    found = wire_names.counts()
    declared = [*CATALOG.properties, *CATALOG.statuses]
    assert set(found) == {entry.name for entry in declared}
    assert all(found.values()), [name for name, files in found.items() if not files]


def test_a_name_spelled_in_a_fourth_file_is_counted(tmp_path: Path) -> None:
    """The counter sees a camelCase name in a comment and a lowercase one only quoted."""
    package = tmp_path / "scheduler_lib"
    package.mkdir()
    (package / "a.py").write_text("# the job's concurrencyPolicy\n")
    (package / "b.html").write_text("<p>{{ x }} concurrencyPolicy</p>\n")
    (package / "c.py").write_text('x = document.get("tags")\n')
    (package / "d.py").write_text("tags = [tag for tag in tags]  # plain Python, not the wire\n")
    (package / "e.py").write_text("concurrencyPolicyX = 1  # another word\n")
    assert wire_names.files_mentioning("concurrencyPolicy", package) == ["a.py", "b.html"]
    assert wire_names.files_mentioning("tags", package) == ["c.py"]
