"""The jobs' `$filter` grammar (`wire/job_filter`) and the job tags it reads, as pure rules;
through the API: tests/api/test_job_tags_api.py and test_bulk_api.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.job_filter import JobFilter, parse_job_filter
from scheduler_lib.wire.job_tags import has_tag
from scheduler_lib.wire.versions import ApiVersion

NEW, OLD = ApiVersion.V2026_12_01, ApiVersion.V2016_03_01


@pytest.mark.parametrize(
    "text, expected",
    [
        (None, JobFilter()),
        ("  ", JobFilter()),
        ("state eq Disabled", JobFilter(state="Disabled")),
        ("tagName eq 'env'", JobFilter(tag_name="env")),
        ("TAGNAME eq 'env' AND tagvalue eq 'it''s and more'",
         JobFilter(tag_name="env", tag_value="it's and more")),
        ("state eq 'enabled' and tagName eq \"a b\"", JobFilter("Enabled", "a b")),
        ("tagName eq 'env' and tagValue eq ''", JobFilter(tag_name="env", tag_value="")),
    ],
)  # fmt: skip
def test_forms(text, expected):
    assert parse_job_filter(text, NEW) == expected


@pytest.mark.parametrize(
    "text, words",
    [
        ("state eq 'Enabled' or state eq 'Disabled'", "must have the form"),
        ("state eq 'Enabled' and", "must have the form"),
        ("tagName eq 'a' and tagName eq 'b'", "twice"),
        ("tagValue eq 'x'", "needs tagName"),
        ("name eq 'x'", "state, tagName and tagValue"),
        ("tagName ne 'x'", "must have the form"),
    ],
)
def test_refusals_name_the_field(text, words):
    with pytest.raises(ValidationError) as caught:
        parse_job_filter(text, NEW, field="filter")
    assert caught.value.field == "filter" and words in caught.value.message


def test_the_old_version_knows_only_state():
    assert parse_job_filter("state eq 'Enabled'", OLD) == JobFilter(state="Enabled")
    with pytest.raises(ValidationError, match=r"can only filter on state$"):
        parse_job_filter("tagName eq 'env'", OLD)
    with pytest.raises(ValidationError, match=r"form: state eq '<value>'$"):
        parse_job_filter("state", OLD)


def test_tag_names_match_in_any_case_values_exactly():
    definition = {"tags": {"Env": "Prod"}}
    assert has_tag(definition, "env") and has_tag(definition, "ENV", "Prod")
    assert not has_tag(definition, "env", "prod") and not has_tag({}, "env")


def test_the_tags_module_imports_first_without_a_cycle():
    """`job_tags` is both a catalog entry and a user of the tag reader: importing it before
    anything else must work (it once met the catalog half-built)."""
    for module in ("scheduler_lib.wire.job_tags", "scheduler_lib.wire.job_filter"):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
