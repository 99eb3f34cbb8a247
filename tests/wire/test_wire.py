"""The strict wire readers and ARM names."""

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import arm, readers


def test_keys_are_case_insensitive_but_not_duplicated():
    assert readers.keys({"TYPE": 1}, "a", ("type",)) == {"type": 1}
    with pytest.raises(ValidationError) as err:
        readers.keys({"type": 1, "Type": 2}, "a", ("type",))
    assert err.value.field == "a.Type"


@pytest.mark.parametrize(
    ("reader", "value"),
    [
        pytest.param(lambda v: readers.integer(v, "f"), True, id="bool-is-not-integer"),
        pytest.param(lambda v: readers.integer(v, "f"), 1.5, id="float-is-not-integer"),
        pytest.param(lambda v: readers.string(v, "f"), "", id="empty-string"),
        pytest.param(lambda v: readers.duration(v, "f"), "30 seconds", id="duration-not-iso"),
        pytest.param(lambda v: readers.datetime_string(v, "f"), "2026-13-01", id="bad-date"),
        pytest.param(lambda v: readers.enum(v, "f", ("A",)), 1, id="enum-not-string"),
    ],
)
def test_readers_reject_wrong_types(reader, value):
    with pytest.raises(ValidationError) as err:
        reader(value)
    assert err.value.field == "f"


def test_messages_never_quote_the_value():
    with pytest.raises(ValidationError) as err:
        readers.integer("hunter2", "password")
    assert "hunter2" not in err.value.message


def test_datetimes_and_durations():
    assert readers.datetime_string(" 2026-03-04T09:00:00.000Z", "f") == "2026-03-04T09:00:00.000Z"
    assert readers.datetime_string("2026-12-31", "f") == "2026-12-31"
    assert readers.duration("pt90s", "f") == "PT1M30S"


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        pytest.param("00:01:30", "PT1M30S", id="hh:mm:ss"),
        pytest.param("1.02:00:00", "P1DT2H", id="d.hh:mm:ss"),
        pytest.param("00:00:30.2500000", "PT30.25S", id="hh:mm:ss.fffffff"),
        pytest.param("01:30", "PT1H30M", id="hh:mm"),
    ],
)
def test_a_duration_may_be_a_timespan(text, meant):
    """What the .NET SDK 2.x sends (`TimeSpan.ToString()`), stored as what it means."""
    assert readers.duration(text, "f") == meant


@pytest.mark.parametrize(
    "text", ["-00:01:00", "-PT1M", "00:60:00", "1 minute", "90", "PXY", "1.2.3"]
)
def test_a_duration_of_neither_form_names_the_field(text):
    with pytest.raises(ValidationError) as err:
        readers.duration(text, "f")
    assert err.value.field == "f" and text not in err.value.message


@pytest.mark.parametrize(
    ("names", "field"),
    [
        pytest.param(("sub|x", "rg"), "subscriptionId", id="pipe-in-subscription"),
        pytest.param(("sub", "rg."), "resourceGroupName", id="rg-ending-with-dot"),
        pytest.param(("sub", "rg", "a b"), "jobCollectionName", id="space-in-collection"),
        pytest.param(("sub", "rg", "c", "j" * 65), "jobName", id="job-name-too-long"),
        pytest.param(("sub", "rg", "c", "-j"), "jobName", id="job-name-leading-hyphen"),
    ],
)
def test_bad_arm_names(names, field):
    with pytest.raises(ValidationError) as err:
        arm.check_names(*names)
    assert err.value.field == field


def test_good_arm_names():
    arm.check_names("00000000-0000-0000-0000-000000000000", "My_RG-(1).x", "coll_1", "job-1")
