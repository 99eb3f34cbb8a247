"""Which dead-man window watches a job (`domain.deadman`), the one rule the judge
(`notify/deadman.py`) and the job page (`service/deadman.py`) share: the job's own, else its
collection's default, else none; the collection is not even looked at when the job has its
own. Pure: records built here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scheduler_lib.domain import CollectionRecord, JobDefinition, JobRecord
from scheduler_lib.domain.deadman import DeadmanSetting, deadman_setting

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
HTTP = {"type": "Http", "request": {"uri": "https://example.com/x", "method": "POST"}}


def job(**document: Any) -> JobRecord:
    return JobRecord("s", "rg", "c", "j", JobDefinition({"action": HTTP, **document}), T0)


def collection(**properties: Any) -> CollectionRecord:
    return CollectionRecord("s", "rg", "c", properties=properties)


def never() -> CollectionRecord | None:
    raise AssertionError("the collection was read although the job has its own window")


@pytest.mark.parametrize("own", ["PT5M", "P2D"])  # shorter and longer than the default
def test_the_jobs_own_window_replaces_the_collections_without_reading_it(own):
    setting = deadman_setting(job(alertIfNoSuccessWithin=own), never)
    assert setting == DeadmanSetting(own, True)


def test_without_its_own_the_collections_default_watches_it():
    setting = deadman_setting(job(), lambda: collection(alertIfNoSuccessWithin="PT1H"))
    assert setting == DeadmanSetting("PT1H", False)
    assert setting.duration == timedelta(hours=1)


@pytest.mark.parametrize(
    "the_collection",
    [None, collection(), collection(alertIfNoSuccessWithin=None)],
    ids=["no collection", "no default", "a null default"],
)
def test_without_either_the_job_is_not_watched(the_collection):
    setting = deadman_setting(job(), lambda: the_collection)
    assert setting == DeadmanSetting(None, False) and setting.duration is None


def test_a_stored_value_that_is_not_text_is_no_window():
    """Only a duration's text is a window (as stored by the validator): anything else a hand
    edit left is none, on the job (the collection's applies) and on the collection."""
    assert deadman_setting(job(alertIfNoSuccessWithin=60), lambda: collection()).window is None
    default = collection(alertIfNoSuccessWithin="PT10M")
    assert deadman_setting(job(alertIfNoSuccessWithin=60), lambda: default).window == "PT10M"
    assert deadman_setting(job(), lambda: collection(alertIfNoSuccessWithin=5)).window is None


def test_the_length_is_the_stored_durations():
    assert DeadmanSetting("P1DT2H", True).duration == timedelta(days=1, hours=2)
    assert DeadmanSetting("PT90S", False).duration == timedelta(seconds=90)
