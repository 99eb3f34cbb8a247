"""The notification and dead-man properties over the real API (2026-12-01): validated with a
400 naming the field, bounded, refused by 2016-03-01, shown without secrets."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests import test_end_to_end as e2e
from tests.notify.helpers import NEW, every_five_minutes, new_secret
from tests.test_end_to_end import COLLECTION, T0, System

system = e2e.system
JOB = f"{COLLECTION}/jobs/Checked"


def put(running: System, extra: dict[str, Any], params: dict[str, str] = NEW) -> Any:
    body = {"properties": every_five_minutes("https://example.com/x", T0 + timedelta(hours=1),
                                             **extra)}  # fmt: skip
    return running.client.put(JOB, json=body, params=params)


@pytest.mark.parametrize(
    ("extra", "target", "words"),
    [
        ({"notifications": {}}, "properties.notifications", "must be a list"),
        ({"notifications": [{"events": ["Failed"]}]}, "properties.notifications[0].url",
         "is required"),
        ({"notifications": [{"url": "ftp://x/y", "events": ["Failed"]}]},
         "properties.notifications[0].url", "http(s)"),
        ({"notifications": [{"url": "https://u:p@x/y", "events": ["Failed"]}]},
         "properties.notifications[0].url", "user name"),
        ({"notifications": [{"url": "https://x/y", "events": []}]},
         "properties.notifications[0].events", "non-empty"),
        ({"notifications": [{"url": "https://x/y", "events": ["Failed", "Faild"]}]},
         "properties.notifications[0].events[1]", "must be one of"),
        ({"notifications": [{"url": "https://x/y", "events": ["Failed", "failed"]}]},
         "properties.notifications[0].events[1]", "twice"),
        ({"notifications": [{"url": "https://x/y", "events": ["Failed"], "format": "Email"}]},
         "properties.notifications[0].format", "Json, Teams, Slack"),
        ({"notifications": [{"url": "https://x/y", "events": ["Failed"], "secret": "s3"}]},
         "properties.notifications[0].secret", "whsec_"),
        ({"notifications": [{"url": "https://x/y", "events": ["Failed"], "colour": 1}]},
         "properties.notifications[0].colour", "not a known property"),
        ({"notifications": [{"url": f"https://x/{i}", "events": ["Failed"]} for i in range(6)]},
         "properties.notifications", "at most 5"),
        ({"alertIfNoSuccessWithin": "PT30S"}, "properties.alertIfNoSuccessWithin", "PT1M"),
        ({"alertIfNoSuccessWithin": "P400D"}, "properties.alertIfNoSuccessWithin", "P366D"),
        ({"alertIfNoSuccessWithin": "soon"}, "properties.alertIfNoSuccessWithin", "duration"),
    ],
)  # fmt: skip
def test_bad_input_is_a_400_naming_the_field(
    system: System, extra: dict[str, Any], target: str, words: str
) -> None:
    response = put(system, extra)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["target"] == target and words in error["message"], error


def test_2016_03_01_refuses_them_and_does_not_show_them(system: System) -> None:
    response = put(system, {"alertIfNoSuccessWithin": "PT1H"}, params={"api-version": "2016-03-01"})
    assert response.status_code == 400
    assert "alertIfNoSuccessWithin" in response.json()["error"]["target"]
    assert put(system, {"alertIfNoSuccessWithin": "PT1H"}).status_code == 201
    old = system.client.get(JOB, params={"api-version": "2016-03-01"}).json()["properties"]
    assert "alertIfNoSuccessWithin" not in old and "health" not in old["status"]
    new = system.client.get(JOB, params=NEW).json()["properties"]
    assert new["alertIfNoSuccessWithin"] == "PT1H" and new["status"]["health"] == "Healthy"


def test_a_collection_shows_its_subscriptions_without_secrets(system: System) -> None:
    secret = new_secret()
    response = system.client.patch(COLLECTION, params=NEW, json={"properties": {
        "alertIfNoSuccessWithin": "P1D",
        "notifications": [{"url": "https://hooks.example.com/x", "events": ["missed"],
                           "format": "TEAMS", "secret": secret}],
    }})  # fmt: skip
    assert response.status_code == 200, response.text
    assert secret not in response.text
    shown = system.client.get(COLLECTION, params=NEW).json()["properties"]
    assert shown["notifications"] == [{
        "url": "https://hooks.example.com/***", "events": ["Missed"], "format": "Teams",
        "hasSecret": True,
    }]  # fmt: skip
    assert shown["alertIfNoSuccessWithin"] == "P1D"
    # Sent back as shown: the secret stays; `""` removes it.
    back = system.client.patch(COLLECTION, params=NEW, json={"properties": shown})
    assert back.json()["properties"]["notifications"][0]["hasSecret"] is True
    shown["notifications"][0]["secret"] = ""
    cleared = system.client.patch(COLLECTION, params=NEW, json={"properties": shown})
    assert "hasSecret" not in cleared.json()["properties"]["notifications"][0]


def test_a_refused_destination_is_a_400_when_stored(system: System) -> None:
    """The egress policy judges a literal address or metadata name when it is stored, as an
    action's URI (host names: at each delivery, on what they resolve to)."""
    hook = [{"url": "http://169.254.169.254/latest", "events": ["Failed"]}]
    response = put(system, {"notifications": hook})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["target"] == "properties.notifications[0].url"
    assert "link-local" in error["message"]
    hook = [{"url": "http://metadata.google.internal/x", "events": ["Failed"]}]
    response = system.client.patch(COLLECTION, params=NEW, json={
        "properties": {"notifications": hook}})  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"]["target"] == "properties.notifications[0].url"
