"""A subscription URL's path and query are write-only (docs/notifications.md): a Slack,
Teams or Power Automate webhook's path (or `sig=` query) is its credential. Over the real
API, Azurite and a real local receiver: answers mask it, a GET-modify-PUT keeps delivering to
the full stored URL, a masked URL naming nothing stored is a 400 naming the field. (Delivery
records keep a digest and the origin only, `notify.subscriptions.key` and `target`, and an
action's failure message names the host, not the URL.)"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from scheduler_lib.store import get_job
from tests import test_end_to_end as e2e
from tests.notify.helpers import NEW, every_five_minutes, minute, put_job
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, T0, System

system, target = e2e.system, e2e.target
HOOK = "/services/T0SECRET/B0SECRET/XXXXKEY"
QUERY = "sig=SIGSECRET"


@pytest.fixture
def receiver() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


def _stored_urls(running: System, job: str) -> list[str]:
    sub, group = COLLECTION.split("/")[2], COLLECTION.split("/")[4]
    record = get_job(running.store, sub, group, "Nightly", job)
    return [entry["url"] for entry in record.definition.document["notifications"]]


def test_get_masks_the_url_and_get_modify_put_keeps_delivering_to_it(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    full = receiver.url_for(f"{HOOK}?{QUERY}")
    other = receiver.url_for("/other/KEY2")
    target.reply(500, path="/job")
    url = f"{COLLECTION}/jobs/Hooked"
    created = put_job(system, "Hooked", every_five_minutes(
        target.url_for("/job"), T0 + timedelta(minutes=5),
        notifications=[{"url": other, "events": ["Recovered"]},
                       {"url": full, "events": ["Failed"], "format": "Slack"}],
    ))  # fmt: skip
    answer = system.client.get(url, params=NEW)
    for text in (answer.text, str(created)):
        assert "SECRET" not in text and "KEY" not in text
    shown = answer.json()["properties"]
    assert [n["url"] for n in shown["notifications"]] == [f"{receiver.url}/***"] * 2

    # GET-modify-PUT, with the list reordered: each masked URL keeps its own stored one
    # (the same events tell the two apart when the positions moved).
    shown.pop("status")
    shown["notifications"].reverse()
    response = system.client.put(url, json={"properties": shown}, params=NEW)
    assert response.status_code == 200, response.text
    assert _stored_urls(system, "Hooked") == [full, other]
    # A PATCH of something else keeps them too.
    patched = system.client.patch(url, json={"properties": {"state": "Enabled"}}, params=NEW)
    assert patched.status_code == 200, patched.text
    minute(system, T0 + timedelta(minutes=5))
    [request] = receiver.requests
    assert request.path == f"{HOOK}?{QUERY}"  # delivered to the full stored URL

    # A full URL replaces the stored one.
    shown["notifications"][0]["url"] = receiver.url_for("/new")
    response = system.client.put(url, json={"properties": shown}, params=NEW)
    assert response.status_code == 200, response.text
    assert _stored_urls(system, "Hooked") == [receiver.url_for("/new"), other]


@pytest.mark.parametrize(
    "hooks",
    [
        # No stored subscription at all (a create).
        [{"url": "HTTPS://Hooks.Slack.com/***", "events": ["Failed"]}],
        # Another host than the one stored at that position.
        [{"url": "https://other.example.com/***", "events": ["Failed"]}],
        # Two stored with that origin and those events, none at that position: which one
        # is meant is unknown.
        [{"url": "https://x.invalid/x", "events": ["Missed"]},
         {"url": "https://x.invalid/y", "events": ["Missed"]},
         {"url": "https://hooks.slack.com/***", "events": ["Failed"]}],
    ],
)  # fmt: skip
def test_a_masked_url_naming_no_stored_subscription_is_a_400(
    system: System, hooks: list[dict[str, object]]
) -> None:
    url = f"{COLLECTION}/jobs/Masked"
    body = every_five_minutes("https://example.com/job", T0 + timedelta(hours=1))
    if len(hooks) > 1 or "other" in str(hooks[0]["url"]):
        put_job(system, "Masked", {**body, "notifications": [
            {"url": "https://hooks.slack.com/services/A", "events": ["Failed"]},
            {"url": "https://hooks.slack.com/services/B", "events": ["Failed"]}]})  # fmt: skip
    response = system.client.put(url, json={"properties": {**body, "notifications": hooks}},
                                 params=NEW)  # fmt: skip
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    index = len(hooks) - 1
    assert error["target"] == f"properties.notifications[{index}].url", error
    assert "send the full URL" in error["message"]
    # The same rule on a collection.
    patch = {"properties": {"notifications": [{"url": "https://nowhere.example/***",
                                               "events": ["Failed"]}]}}  # fmt: skip
    refused = system.client.patch(COLLECTION, params=NEW, json=patch)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["target"] == "properties.notifications[0].url"
