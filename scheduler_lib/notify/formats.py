"""The body each format sends (pure): the event as JSON, or the message shape the receiving
service documents for its incoming webhooks.

- `Json`: Standard Webhooks' recommended envelope, `{type, timestamp, data}`, with `type`
  `scheduler.job.<event>` (lower case) and `data` the notice and the job's ARM identity.
- `Slack`: an incoming-webhook message (api.slack.com/messaging/webhooks): `text` (the
  notification's fallback) and Block Kit `blocks` (a `header` of plain text, at most 150
  characters; a `section` of `mrkdwn`, at most 3000; a `context`). `&`, `<` and `>` are
  escaped as Slack asks, so a job name cannot mention `<!channel>`.
- `Teams`: a message with one Adaptive Card attachment (`type: message`, `attachments[0]`
  with `contentType: application/vnd.microsoft.card.adaptive`, `content` an `AdaptiveCard`
  of version 1.4 with `TextBlock`s and a `FactSet`): what a Teams Workflows webhook
  ("post to a channel when a webhook request is received") and the older Incoming Webhook
  connector both take. Teams renders no HTML and Adaptive Cards take a subset of Markdown:
  names go in as facts, not in Markdown.
"""

from __future__ import annotations

import json
from typing import TypedDict

from scheduler_lib.domain.keys import split_job_key
from scheduler_lib.notify.notice import Notice
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import arm
from scheduler_lib.wire.notifications import NotificationFormat
from scheduler_lib.wire.shapes import JSONObject

SLACK_HEADER_MAX, SLACK_SECTION_MAX = 150, 3000
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"


#: (subscription, resource group, collection, job) as the job was named (not lower-cased).
Names = tuple[str, str, str, str]


class EventJob(TypedDict):
    id: str
    name: str
    jobCollection: str
    resourceGroup: str
    subscriptionId: str


class EventData(TypedDict, total=False):
    id: str
    event: str
    time: str
    detail: str
    job: EventJob
    health: str  # the dead-man switch's verdict, when the job has one


class Event(TypedDict):
    """The `Json` format's body: Standard Webhooks' envelope (our contract with receivers)."""

    type: str
    timestamp: str
    data: EventData


def body(notice: Notice, kind: str, names: Names | None = None, health: str | None = None) -> bytes:
    """The bytes sent for `notice` in format `kind` (a `NotificationFormat`); `names` as
    the job record spells them (else the lower-cased key's)."""
    named = names or split_job_key(notice.job_key)
    if kind == NotificationFormat.SLACK:
        payload: Event | JSONObject = slack(notice, named)
    elif kind == NotificationFormat.TEAMS:
        payload = teams(notice, named)
    else:
        payload = plain(notice, named, health)
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def title(notice: Notice, names: Names) -> str:
    return f"{notice.event}: job {names[2]}/{names[3]}"


def plain(notice: Notice, names: Names, health: str | None = None) -> Event:
    subscription, group, collection, job = names
    data: EventData = {
        "id": notice.notice_id,
        "event": notice.event,
        "time": iso_z(notice.time),
        "detail": notice.detail,
        "job": {
            "id": arm.job_id(subscription, group, collection, job),
            "name": job,
            "jobCollection": collection,
            "resourceGroup": group,
            "subscriptionId": subscription,
        },
    }
    if health is not None:
        data["health"] = health
    return {
        "type": f"scheduler.job.{notice.event.lower()}",
        "timestamp": iso_z(notice.time),
        "data": data,
    }


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack(notice: Notice, names: Names) -> JSONObject:
    _, group, collection, job = names
    heading = title(notice, names)
    section = (
        f"*{_slack_escape(notice.event)}* — {_slack_escape(notice.detail)}\n"
        f"Job `{_slack_escape(job)}` in collection `{_slack_escape(collection)}` "
        f"(resource group `{_slack_escape(group)}`)"
    )
    return {
        "text": _slack_escape(f"{heading}: {notice.detail}"),
        "blocks": [
            {
                "type": "header",
                "text": {"type": "plain_text", "text": heading[:SLACK_HEADER_MAX]},
            },
            {"type": "section", "text": {"type": "mrkdwn", "text": section[:SLACK_SECTION_MAX]}},
            {
                "type": "context",
                "elements": [
                    {"type": "mrkdwn", "text": f"{iso_z(notice.time)} · {notice.notice_id}"}
                ],
            },
        ],
    }


def teams(notice: Notice, names: Names) -> JSONObject:
    _, group, collection, job = names
    card: JSONObject = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {
                "type": "TextBlock",
                "text": title(notice, names),
                "weight": "Bolder",
                "size": "Medium",
                "wrap": True,
            },
            {"type": "TextBlock", "text": notice.detail, "wrap": True},
            {
                "type": "FactSet",
                "facts": [
                    {"title": "Event", "value": notice.event},
                    {"title": "Job", "value": job},
                    {"title": "Collection", "value": collection},
                    {"title": "Resource group", "value": group},
                    {"title": "Time", "value": iso_z(notice.time)},
                    {"title": "Notice", "value": notice.notice_id},
                ],
            },
        ],
    }
    return {
        "type": "message",
        "attachments": [{"contentType": ADAPTIVE_CARD, "contentUrl": None, "content": card}],
    }
