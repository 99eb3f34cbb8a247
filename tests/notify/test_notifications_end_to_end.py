"""Notifications end to end (api-version 2026-12-01): subscriptions set through the real
API, events from the real executor and dispatcher, the notifications function delivering
to a real local HTTP receiver that checks each format's documented shape and the Standard
Webhooks signature, over Azurite on a hand-moved clock (tests/notify/helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.notify import Notice
from scheduler_lib.notify.worker import BACKOFF, MAX_ROUNDS, NotificationWorker
from scheduler_lib.store import list_notices
from tests import test_end_to_end as e2e
from tests.notify.helpers import (
    NEW,
    every_five_minutes,
    minute,
    new_secret,
    put_job,
    signature_ok,
)
from tests.support.http_target import HttpTarget, RecordedRequest
from tests.test_end_to_end import COLLECTION, T0, System

system, target = e2e.system, e2e.target


@pytest.fixture
def receiver() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


def check_slack(request: RecordedRequest) -> None:
    """Slack's incoming-webhook message: `text` (the fallback) and Block Kit blocks within
    their documented limits, `&<>` escaped."""
    body = request.json()
    assert isinstance(body["text"], str) and body["text"]
    header, section, context = body["blocks"]
    assert header["type"] == "header" and header["text"]["type"] == "plain_text"
    assert len(header["text"]["text"]) <= 150
    assert section["type"] == "section" and section["text"]["type"] == "mrkdwn"
    assert len(section["text"]["text"]) <= 3000
    assert context["type"] == "context" and context["elements"][0]["type"] == "mrkdwn"


def check_teams(request: RecordedRequest) -> dict[str, Any]:
    """A Teams message with one Adaptive Card attachment, as Workflows' webhook and the
    Incoming Webhook connector take it."""
    body = request.json()
    assert body["type"] == "message"
    [attachment] = body["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert attachment["contentUrl"] is None
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    assert [b["type"] for b in card["body"]] == ["TextBlock", "TextBlock", "FactSet"]
    return {f["title"]: f["value"] for f in card["body"][2]["facts"]}


def test_a_failure_reaches_json_slack_and_teams_once_per_streak(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    secret = new_secret()
    target.reply(500, "boom", path="/job", times=3)  # 09:05, 09:10, 09:15 fail
    put_job(system, "Report-Daily", every_five_minutes(
        target.url_for("/job"), T0 + timedelta(minutes=5),
        notifications=[
            {"url": receiver.url_for("/json"), "events": ["Failed", "Recovered"],
             "secret": secret},
            {"url": receiver.url_for("/slack"), "events": ["Failed"], "format": "slack"},
            {"url": receiver.url_for("/teams"), "events": ["Failed"], "format": "Teams"},
            {"url": receiver.url_for("/every"), "events": ["Failed"], "everyFailure": True},
        ],
    ))  # fmt: skip
    for m in range(5, 21, 5):
        minute(system, T0 + timedelta(minutes=m))

    paths = [r.path for r in receiver.requests]
    assert sorted(paths) == sorted(["/json", "/slack", "/teams", "/every", "/every", "/every",
                                    "/json"])  # fmt: skip
    failed, recovered = receiver.requests_to("/json")
    assert signature_ok(secret, failed) and signature_ok(secret, recovered)
    assert failed.json()["type"] == "scheduler.job.failed"
    assert failed.json()["data"]["job"]["id"].endswith("/jobs/Report-Daily")
    assert failed.json()["data"]["health"] == "Failing"
    assert recovered.json()["data"]["event"] == "Recovered"
    assert recovered.json()["data"]["health"] == "Healthy"
    [slack] = receiver.requests_to("/slack")
    check_slack(slack)
    assert "`Report-Daily`" in slack.json()["blocks"][1]["text"]["text"]
    assert slack.header("webhook-signature") is None  # no secret: not signed
    [teams] = receiver.requests_to("/teams")
    assert check_teams(teams)["Job"] == "Report-Daily"
    every = [r.json()["data"]["id"] for r in receiver.requests_to("/every")]
    assert len(set(every)) == 3  # one notice per failed occurrence, each its own id

    # The record the dashboard shows: newest first, one delivery per subscription.
    [job_key] = {n.job_key for n in list_notices(system.store, _key(system, "Report-Daily"))}
    records = list_notices(system.store, job_key)
    assert [r.event for r in records] == ["Recovered", "Failed", "Failed", "Failed"]
    first = records[-1]
    assert {d.status for d in first.deliveries} == {"Delivered"}
    assert all("/json" not in d.target for d in first.deliveries)  # origin only


def _key(running: System, job: str) -> str:
    from scheduler_lib.domain.keys import job_key  # the job's storage key

    sub, group = COLLECTION.split("/")[2], COLLECTION.split("/")[4]
    return job_key(sub, group, "Nightly", job)


def test_a_failing_receiver_is_retried_with_backoff_then_given_up(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    receiver.reply(502, "bad gateway", path="/flaky", times=1)  # once, then 200
    receiver.reply(500, "down", path="/dead")  # always
    target.reply(500, path="/job")
    put_job(system, "Noisy", every_five_minutes(
        target.url_for("/job"), T0 + timedelta(minutes=5),
        notifications=[
            {"url": receiver.url_for("/flaky"), "events": ["Failed"]},
            {"url": receiver.url_for("/dead"), "events": ["Failed"]},
        ],
    ))  # fmt: skip
    [report] = minute(system, T0 + timedelta(minutes=5))
    assert (report.disposition, report.delivered, report.failed) == ("Retrying", 0, 2)

    # The retry waits on the queue (BACKOFF[0], real visibility): handed over as the
    # trigger would once it is visible, with its round counted.
    worker = system.runtime.notifier.worker
    notice = Notice.from_json(_first_notice_body(system, receiver))
    for round_ in range(1, MAX_ROUNDS):
        system.clock.advance(BACKOFF[round_ - 1])
        worker.handle(_with_round(notice, round_), now=system.clock.now)
    assert len(receiver.requests_to("/flaky")) == 2  # failed once, delivered once, left alone
    assert len(receiver.requests_to("/dead")) == MAX_ROUNDS
    ids = {(r.header("x-ms-execution-tag"), r.json()["data"]["id"]) for r in receiver.requests}
    assert ids == {(notice.notice_id, notice.notice_id)}  # the same id on every retry
    [record] = list_notices(system.store, notice.job_key)
    assert sorted(d.status for d in record.deliveries) == ["Delivered", "GaveUp"]
    gave_up = next(d for d in record.deliveries if d.status == "GaveUp")
    assert gave_up.attempts == MAX_ROUNDS and gave_up.status_code == 500


def _first_notice_body(running: System, receiver: HttpTarget) -> str:
    """The notice as the worker got it, rebuilt from what the receiver saw and the record."""
    first = receiver.requests[0].json()["data"]
    [record] = list_notices(running.store, _key(running, "Noisy"))
    return Notice(
        first["id"], "Failed", record.job_key, record.time, record.summary, streak_before=0
    ).to_json()


def _with_round(notice: Notice, round_: int) -> str:
    for _ in range(round_):
        notice = notice.next_round()
    return notice.to_json()


def test_a_private_receiver_is_refused_unless_the_egress_policy_allows_it(
    system: System, receiver: HttpTarget, settings: Settings
) -> None:
    """The same egress policy as actions: the local host allows loopback; a deployment
    without SCHEDULER_EGRESS_ALLOW does not, and the refusal is in the record."""
    put_job(system, "Guarded", every_five_minutes(
        receiver.url_for("/job"), T0 + timedelta(minutes=5),
        notifications=[{"url": receiver.url_for("/hook"), "events": ["Failed"]}],
    ))  # fmt: skip
    closed = NotificationWorker(
        system.store, system.runtime.notifier.queue, Settings(
            storage_connection_string=settings.storage_connection_string,
            storage_prefix=settings.storage_prefix, egress_allow=(),
        ), {},
    )  # fmt: skip
    notice = Notice("ntf_guarded", "Failed", _key(system, "Guarded"), T0, "x", streak_before=0)
    report = closed.handle(notice.to_json(), now=T0)
    assert report.disposition == "Retrying"
    assert receiver.requests_to("/hook") == []
    [record] = list_notices(system.store, notice.job_key)
    [delivery] = record.deliveries
    assert "not publicly routable" in delivery.message


def test_a_downtime_makes_one_postponed_notice_per_job(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    """Postponed occurrences after a downtime tell each job's subscribers once, however
    many occurrences were missed and however the dispatcher and the executor report them."""
    for name in ("A", "B"):
        put_job(system, name, every_five_minutes(
            target.url, T0 + timedelta(minutes=5),
            notifications=[{"url": receiver.url_for(f"/{name}"), "events": ["Postponed"]}],
        ))  # fmt: skip
    # Down from 09:01 to 10:00: the first tick after it finds 11 missed occurrences each.
    minute(system, T0 + timedelta(hours=1))
    minute(system, T0 + timedelta(hours=1, minutes=5))
    assert sorted(r.path for r in receiver.requests) == ["/A", "/B"]
    assert {r.json()["data"]["event"] for r in receiver.requests} == {"Postponed"}


def test_secrets_are_write_only_and_kept_through_get_modify_put(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    secret = new_secret()
    target.reply(500, path="/job")
    url = f"{COLLECTION}/jobs/Kept"
    put_job(system, "Kept", every_five_minutes(
        target.url_for("/job"), T0 + timedelta(minutes=5),
        notifications=[{"url": receiver.url, "events": ["Failed"], "secret": secret}],
    ))  # fmt: skip
    shown = system.client.get(url, params=NEW).json()["properties"]
    assert shown["notifications"] == [
        {"url": f"{receiver.url}/***", "events": ["Failed"], "format": "Json", "hasSecret": True}
    ]
    assert secret not in system.client.get(url, params=NEW).text
    shown.pop("status")
    response = system.client.put(url, json={"properties": shown}, params=NEW)  # GET-modify-PUT
    assert response.status_code == 200, response.text
    minute(system, T0 + timedelta(minutes=5))
    [request] = receiver.requests
    assert signature_ok(secret, request)  # still signed with the stored secret


def test_a_pause_after_failures_is_told_once(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    target.reply(500, path="/job")
    put_job(system, "Pausing", every_five_minutes(
        target.url_for("/job"), T0 + timedelta(minutes=5), pauseAfterConsecutiveFailures=2,
        notifications=[{"url": receiver.url, "events": ["Paused", "Failed"], "format": "Teams"}],
    ))  # fmt: skip
    for m in range(5, 21, 5):
        minute(system, T0 + timedelta(minutes=m))
    facts = [check_teams(r) for r in receiver.requests]
    assert [f["Event"] for f in facts] == ["Failed", "Paused"]  # the streak's first, the pause
    state = system.client.get(f"{COLLECTION}/jobs/Pausing", params=NEW).json()["properties"]
    assert state["state"] == "Disabled" and state["status"]["health"] == "Failing"


def test_a_malformed_notice_or_a_deleted_job_is_dropped(system: System) -> None:
    assert system.runtime.notify("not a notice").disposition == "Dropped"
    gone = Notice("ntf_gone", "Failed", _key(system, "Gone"), T0, "x")
    assert system.runtime.notify(gone.to_json()).disposition == "Dropped"
