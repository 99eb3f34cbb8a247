"""The one place that decides how answers look per api-version, and the original form a
job keeps beside its canonical definition (their API behaviour: tests/api/test_wire_*)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduler_lib.domain import JobDefinition, JobRecord
from scheduler_lib.wire import dialect, original_form
from scheduler_lib.wire.actions import DEFAULT_RETRY
from scheduler_lib.wire.versions import ApiVersion

OLD, NEW = ApiVersion.V2016_03_01, ApiVersion.V2026_12_01


@pytest.mark.parametrize(
    ("value", "camel"),
    [
        ("Enabled", "enabled"),
        ("NetMessaging", "netMessaging"),
        ("AMQP", "amqp"),
        ("SharedAccessKey", "sharedAccessKey"),
        ("NotSpecified", "notSpecified"),
        ("None", "none"),
        ("monday", "monday"),
        ("", ""),
    ],
)
def test_camel_case_is_json_nets(value: str, camel: str) -> None:
    assert dialect.camel_case(value) == camel


def test_every_version_has_a_dialect() -> None:
    assert set(dialect.DIALECTS) == set(ApiVersion)


def test_lists_end_as_each_version_wrote_them() -> None:
    assert dialect.list_body([], None, OLD) == {"value": [], "nextLink": None}
    assert dialect.list_body([], None, NEW) == {"value": []}
    assert dialect.list_body([1], "http://n", NEW) == {"value": [1], "nextLink": "http://n"}


def _definition(interval: str = "PT1M") -> dict:
    return {
        "action": {
            "type": "Http",
            "request": {"uri": "http://x/", "method": "GET"},
            "retryPolicy": {"retryType": "Fixed", "retryInterval": interval, "retryCount": 2},
        }
    }


def test_the_original_form_of_a_request() -> None:
    sent = {
        "Action": {
            "type": "http",
            "request": {
                "uri": "http://x/",
                "method": "GET",
                "RetryPolicy": {"retryInterval": "00:01:00"},
            },
        }
    }
    assert original_form.of(sent, _definition()) == {
        "durations": {"action.retryPolicy.retryInterval": "00:01:00"}
    }
    defaults = {"action": {"retryPolicy": dict(DEFAULT_RETRY)}}
    assert original_form.of({"action": {"type": "Http"}}, defaults) == {
        "defaulted": ["action.retryPolicy"]
    }
    sent_empty = {"action": {"type": "Http", "retryPolicy": {}}}  # sent: all defaults
    assert original_form.of(sent_empty, defaults) == {}


def test_an_original_form_applies_only_while_the_value_is_what_it_stood_for() -> None:
    """A definition changed since (the dashboard saves the canonical form) shows its own."""
    form = {
        "durations": {"action.retryPolicy.retryInterval": "00:01:00"},
        "defaulted": ["action.retryPolicy"],
    }
    assert (
        original_form.restore(_definition(), form)["action"]["retryPolicy"]["retryInterval"]
        == "00:01:00"
    )
    changed = original_form.restore(_definition("PT2M"), form)
    assert changed["action"]["retryPolicy"]["retryInterval"] == "PT2M"
    defaulted = {"action": {"type": "Http", "retryPolicy": dict(DEFAULT_RETRY)}}
    assert "retryPolicy" not in original_form.restore(defaulted, form)["action"]


def test_job_properties_per_version() -> None:
    form = {"durations": {"action.retryPolicy.retryInterval": "00:01:00"}}
    created = datetime(2026, 1, 1, tzinfo=UTC)
    definition = JobDefinition(_definition())
    record = JobRecord("s", "rg", "c", "j", definition, created, original_form=form)
    old = dialect.job_properties(dict(record.definition.document), record, OLD)
    new = dialect.job_properties(dict(record.definition.document), record, NEW)
    assert old["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": "00:01:00",
        "retryCount": 2,
    }
    assert new["action"]["retryPolicy"] == record.definition.document["action"]["retryPolicy"]
    assert (old["state"], new["state"]) == ("enabled", "Enabled")
    assert record.definition.document == _definition()  # the stored definition is never changed
