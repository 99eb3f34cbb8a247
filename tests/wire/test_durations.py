"""Service Bus timeToLive parsing: ISO 8601 durations and .NET TimeSpan strings."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.durations import parse_time_to_live, read_iso_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("PT10M", timedelta(minutes=10), id="iso-minutes"),
        pytest.param("P1DT2H", timedelta(days=1, hours=2), id="iso-days-hours"),
        pytest.param("PT0.5S", timedelta(milliseconds=500), id="iso-fraction"),
        pytest.param("00:05:00", timedelta(minutes=5), id="timespan"),
        pytest.param("01:30", timedelta(hours=1, minutes=30), id="timespan-no-seconds"),
        pytest.param("14.00:00:00", timedelta(days=14), id="timespan-days"),
        pytest.param(
            "1.02:03:04.5000000",
            timedelta(days=1, hours=2, minutes=3, seconds=4.5),
            id="timespan-seven-digit-fraction",
        ),
        pytest.param("00:00:00.001", timedelta(milliseconds=1), id="timespan-short-fraction"),
        pytest.param("3", timedelta(days=3), id="bare-days"),
        pytest.param(" PT1H ", timedelta(hours=1), id="surrounding-space"),
    ],
)
def test_parses(text: str, expected: timedelta) -> None:
    assert parse_time_to_live(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("soon", "neither", id="words"),
        pytest.param("P1M", "not years or months", id="iso-months"),
        pytest.param("PT0S", "positive", id="zero"),
        pytest.param("0", "positive", id="zero-days"),
        pytest.param("00:60:00", "not a valid TimeSpan", id="sixty-minutes"),
        pytest.param("24:00:00", "not a valid TimeSpan", id="twenty-four-hours"),
        pytest.param("-00:05:00", "neither", id="negative-timespan"),
        pytest.param("-PT5M", "negative", id="negative-iso"),
        pytest.param("PT99999999999999999999S", "too long", id="iso-overflow"),
        pytest.param("99999999999.00:00:00", "too long", id="timespan-overflow"),
        pytest.param("99999999999", "too long", id="days-overflow"),
    ],
)
def test_rejects(text: str, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason) as info:
        parse_time_to_live(text, field="action.x.timeToLive")
    assert info.value.field == "action.x.timeToLive"


@pytest.mark.parametrize("text", ["-PT1S", "-P1D", "-P1M", "-P1Y", "-pt30m", "-PT1D"])
def test_the_one_reader_refuses_negative_durations(text: str) -> None:
    """Every duration field reads through it (`readers.duration`, the executor's retry policy)."""
    with pytest.raises(ValidationError, match="negative") as info:
        read_iso_duration(text, "properties.maxJitter")
    assert info.value.field == "properties.maxJitter"


def test_minus_zero_is_zero() -> None:
    assert read_iso_duration("-PT0S", "x") == timedelta(0)
