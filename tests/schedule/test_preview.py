"""Previews: the list the API returns, and the `python -m scheduler_lib preview` command,
run for real in a subprocess with the project's interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule.preview import preview, preview_table

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 3, 1, tzinfo=UTC)
NEW_YORK_DAILY = {
    "startTime": "2026-03-06T09:30:00",
    "recurrence": {"frequency": "Day", "timeZone": "Eastern Standard Time", "count": 4},
}


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_preview_lists_the_next_executions_in_utc() -> None:
    got = preview(NEW_YORK_DAILY, now=NOW, count=3)
    assert got == [utc("2026-03-06 14:30"), utc("2026-03-07 14:30"), utc("2026-03-08 13:30")]
    assert preview(NEW_YORK_DAILY, now=NOW) == [*got, utc("2026-03-09 13:30")]  # count 4 ends it
    assert preview(NEW_YORK_DAILY, now=NOW, count=0) == []


def test_preview_counts_from_now() -> None:
    later = utc("2026-03-07 15:00")
    assert preview(NEW_YORK_DAILY, now=later, count=2) == [
        utc("2026-03-08 13:30"), utc("2026-03-09 13:30")]  # fmt: skip


@pytest.mark.parametrize(("job", "count", "field"), [
    pytest.param({"recurrence": {"frequency": "Daily"}}, 5, "recurrence.frequency", id="bad job"),
    pytest.param(NEW_YORK_DAILY, -1, "count", id="negative count"),
    pytest.param(NEW_YORK_DAILY, "5", "count", id="count not an integer"),
])  # fmt: skip
def test_preview_rejects_bad_input(job: dict[str, Any], count: Any, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        preview(job, now=NOW, count=count)
    assert caught.value.field == field


def test_table_shows_utc_and_the_jobs_zone_aligned() -> None:
    lines = preview_table(NEW_YORK_DAILY, now=NOW, count=10).splitlines()
    assert lines[0].split() == ["#", "UTC", "America/New_York", "day"]
    assert lines[1].split() == ["1", "2026-03-06", "14:30:00Z", "2026-03-06", "09:30:00", "EST",
                                "(UTC-0500)", "Fri"]  # fmt: skip
    assert lines[3].split()[2:6] == ["13:30:00Z", "2026-03-08", "09:30:00", "EDT"]
    column = lines[0].index("America/New_York")  # aligned: every local time starts there
    assert [line[column:column + 10] for line in lines[1:5]] == [
        "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09"]  # fmt: skip
    assert lines[-1] == "(no more: recurrence.count is 4)"


def test_table_says_when_nothing_is_left() -> None:
    job = {"startTime": "2026-01-01T00:00:00Z",
           "recurrence": {"frequency": "Day", "endTime": "2026-02-01T00:00:00Z"}}  # fmt: skip
    lines = preview_table(job, now=NOW).splitlines()
    assert lines == ["#  UTC  UTC  day", "(no more: recurrence.endTime is 2026-02-01 00:00:00Z)"]
    once = preview_table({}, now=NOW).splitlines()[-1]
    assert once == "(no more: without a recurrence the job runs once)"
    never = {"startTime": "2027-03-01T00:00:00Z",
             "recurrence": {"frequency": "Year", "interval": 4, "schedule": {"monthDays": [29], "months": [2]}}}  # fmt: skip  # noqa: E501
    assert preview_table(never, now=NOW).splitlines()[-1] == "(no more executions)"


# --------------------------------------------------------------------------- the command


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler_lib", "preview", *args],
        cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("document", [
    pytest.param({"properties": NEW_YORK_DAILY, "name": "daily"}, id="a whole job"),
    pytest.param(NEW_YORK_DAILY, id="just the properties"),
])  # fmt: skip
def test_command_prints_the_table(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    done = run_cli(str(path), "--count", "2", "--now", "2026-03-01T00:00:00Z")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == preview_table(NEW_YORK_DAILY, now=NOW, count=2).splitlines()
    assert len(done.stdout.splitlines()) == 3 and done.stderr == ""


def test_command_reads_stdin_and_takes_a_naive_now_as_utc() -> None:
    job = json.dumps({"recurrence": {"frequency": "Hour", "interval": 6}})
    done = run_cli("-", "--now", "2026-03-01T01:02:03", "--count", "3", stdin=job)
    assert done.returncode == 0, done.stderr
    rows = [line.split()[1:3] for line in done.stdout.splitlines()[1:]]
    assert rows == [["2026-03-01", "01:02:03Z"], ["2026-03-01", "07:02:03Z"],
                    ["2026-03-01", "13:02:03Z"]]  # fmt: skip


@pytest.mark.parametrize(("content", "expected"), [
    pytest.param(json.dumps({"properties": {"recurrence": {"frequency": "Week", "schedule": {
        "monthDays": [1]}}}}), "error: invalid job: recurrence.schedule.monthDays: ",
        id="an invalid job names the field"),
    pytest.param(json.dumps({"startTime": "tomorrow"}), "error: invalid job: startTime: ",
                 id="an invalid startTime"),
    pytest.param("{not json", "not valid JSON", id="not JSON"),
])  # fmt: skip
def test_command_rejects_a_bad_job_with_one_line_and_status_2(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "job.json"
    path.write_text(content)
    done = run_cli(str(path), "--now", "2026-03-01T00:00:00Z")
    assert done.returncode == 2
    assert done.stdout == ""
    assert expected in done.stderr and len(done.stderr.splitlines()) == 1


def test_command_rejects_a_missing_file_and_bad_options() -> None:
    missing = run_cli("/no/such/job.json")
    assert missing.returncode == 2 and "/no/such/job.json" in missing.stderr
    assert len(missing.stderr.splitlines()) == 1
    assert run_cli("-", "--count", "0", stdin="{}").returncode == 2
    assert run_cli("-", "--now", "yesterday", stdin="{}").returncode == 2
    off_the_calendar = run_cli("-", "--now", "0001-01-01T00:00:00+14:00", stdin="{}")
    assert off_the_calendar.returncode == 2 and "Traceback" not in off_the_calendar.stderr
