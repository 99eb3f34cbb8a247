"""The README and docs/ stand alone: every document they link or name is in the repository
(a reader has no access to the team's notes), and every repository path they name exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Files a reader creates or a tool generates, and placeholders (`JOB.json`).
GENERATED = {"local.settings.json", "job.json"}


def _exists(name: str, document: Path) -> bool:
    bases = (ROOT, document.parent, ROOT / "scheduler_lib", ROOT / "infra")
    return name.lower() in GENERATED or any((base / name).exists() for base in bases)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_referenced_file_is_in_the_repository(document: Path) -> None:
    text = document.read_text()
    links = re.findall(r"\]\(([^)#\s]+)\)", text)
    named = re.findall(r"`([\w./-]+\.(?:md|py|json|bicep|yaml|txt|toml))`", text)
    missing = [
        name
        for name in [*links, *named]
        if "://" not in name and "<" not in name and not _exists(name.lstrip("./"), document)
    ]
    assert missing == []


def test_every_app_setting_is_documented_in_the_settings_page() -> None:
    """docs/settings.md lists every setting the code reads (the catalog in
    `scheduler_lib/app_settings.py`), so a new setting cannot ship undocumented."""
    from scheduler_lib.app_settings import APP_SETTINGS

    text = (ROOT / "docs" / "settings.md").read_text()
    assert [name for name in APP_SETTINGS if f"`{name}`" not in text] == []
