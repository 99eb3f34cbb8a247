"""The store's reading of the Table service's time text (`entity_answer.stored_datetime`),
against the SDK's own deserialiser: the same instant for each form the service writes (0
to 7 decimals), the text kept, and a text in any other form refused, not guessed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from azure.data.tables._deserialize import _from_entity_datetime  # the SDK's own reading

from scheduler_lib.store.entity_answer import stored_datetime

SERVICE_FORMS = [
    "2026-11-27T06:53:12Z",
    "2026-11-27T06:53:12.5Z",
    "2026-11-27T06:53:12.123456Z",
    "2026-11-27T06:53:12.1234567Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.9999999Z",
    "2024-02-29T00:00:00.0000001Z",
]


@pytest.mark.parametrize("text", SERVICE_FORMS)
def test_each_form_the_service_writes_reads_as_the_sdk_reads_it(text: str) -> None:
    ours = stored_datetime(text)
    assert ours == _from_entity_datetime(text)
    assert ours.utcoffset() == timedelta(0)
    assert ours.tables_service_value == text


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-27T06:53:12+01:00",  # an offset: not the service's
        "2026-11-27 06:53:12Z",  # another separator
        "20261127T065312Z",  # the basic form
        "2026-11-27T06:53Z",  # no seconds
        "2026-02-30T00:00:00Z",  # no such day
    ],
)
def test_any_other_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        stored_datetime(text)
