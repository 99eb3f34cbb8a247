"""Extension 6 end to end (api-version 2026-12-01): a collection's signing secrets and the
Standard Webhooks headers on its HTTP actions, through the real API, dispatcher tick and
executor, against Azurite and a real local HTTP target; what the target received is checked
with the maintained `standardwebhooks` library, as a receiver would.

The library refuses timestamps more than 5 minutes from its own (real) clock, so these tests
set the hand-moved clock to the real current second first; nothing waits on it."""

from __future__ import annotations

import base64
import logging
import secrets
from datetime import UTC, datetime
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget, RecordedRequest
from tests.test_end_to_end import COLLECTION, System

system, target = e2e.system, e2e.target
NEW = {"api-version": "2026-12-01"}
OTHER = COLLECTION.rsplit("/", 1)[0] + "/Unsigned"


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def secrets_of(running: System, properties: list[dict[str, Any]], method: str = "patch") -> Any:
    response = running.client.request(
        method, COLLECTION, params=NEW,
        json={"location": "westeurope", "properties": {"signingSecrets": properties}},
    )  # fmt: skip
    assert response.status_code in (200, 201), response.text
    return response.json()["properties"]["signingSecrets"]


def fire(running: System, uri: str, body: str = '{"report": "daily"}', where: str = COLLECTION,
         retry: dict[str, Any] | None = None, name: str = "Hook") -> list[Any]:  # fmt: skip
    """A run-once job `name` now (real second), dispatched and executed."""
    running.clock.now = datetime.now(UTC).replace(microsecond=0)
    action: dict[str, Any] = {
        "type": "Http", "request": {"uri": uri, "method": "POST", "body": body},
    }  # fmt: skip
    if retry:
        action["retryPolicy"] = retry
    response = running.client.put(
        f"{where}/jobs/{name}", json={"properties": {"action": action}}, params=NEW
    )
    assert response.status_code in (200, 201), response.text
    return running.tick_and_execute()


def verifies(secret: str, request: RecordedRequest) -> bool:
    try:
        Webhook(secret).verify(request.body, dict(request.headers), json_parse=False)
    except WebhookVerificationError:
        return False
    return True


def test_a_target_verifies_the_signature_with_the_library(
    system: System, target: HttpTarget
) -> None:
    secret = new_secret()
    shown = secrets_of(system, [{"name": "primary", "value": secret}])
    assert shown == [{"name": "primary", "createdTime": shown[0]["createdTime"]}]  # no value

    fire(system, target.url)

    [request] = target.requests
    assert verifies(secret, request)
    assert not verifies(new_secret(), request)
    assert request.header("webhook-id") == f"msg_{request.header('x-ms-execution-tag')}"
    assert request.header("webhook-timestamp") == str(int(system.clock.now.timestamp()))
    got = system.client.get(COLLECTION, params=NEW).json()["properties"]["signingSecrets"]
    assert got == shown
    listed = system.client.get(COLLECTION.rsplit("/", 1)[0], params=NEW).text
    assert secret not in listed and secret.removeprefix("whsec_") not in listed


def test_rotation_signs_with_both_then_only_the_new_secret(
    system: System, target: HttpTarget
) -> None:
    old, new = new_secret(), new_secret()
    [first] = secrets_of(system, [{"name": "old", "value": old}])
    both = secrets_of(system, [{"name": "old"}, {"name": "new", "value": new}])
    assert [s["name"] for s in both] == ["old", "new"]
    assert both[0]["createdTime"] == first["createdTime"]  # kept, not rewritten

    fire(system, target.url)
    secrets_of(system, [{"name": "new"}])  # the old one retired
    fire(system, target.url, body="second", name="Hook2")

    during, after = target.requests
    assert len(during.header("webhook-signature").split(" ")) == 2
    assert verifies(old, during) and verifies(new, during)
    assert verifies(new, after) and not verifies(old, after)


def test_retries_keep_the_webhook_id_and_sign_each_attempt(
    system: System, target: HttpTarget
) -> None:
    secret = new_secret()
    secrets_of(system, [{"name": "k", "value": secret}])
    target.reply(503, "busy", times=1)
    [first] = fire(system, target.url, retry={
        "retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 1})  # fmt: skip
    system.clock.now = first.follow_up_at
    system.runtime.execute(first.follow_up.to_json(), message_id="retry", dequeue_count=1)

    one, two = target.requests
    assert one.header("webhook-id") == two.header("webhook-id")
    assert int(two.header("webhook-timestamp")) - int(one.header("webhook-timestamp")) == 20
    assert verifies(secret, one) and verifies(secret, two)


def test_a_generated_secret_is_shown_once(system: System, target: HttpTarget) -> None:
    [made] = secrets_of(system, [{"name": "gen", "value": "generate"}], method="put")
    assert made["value"].startswith("whsec_") and len(base64.b64decode(made["value"][6:])) == 32
    got = system.client.get(COLLECTION, params=NEW).json()["properties"]["signingSecrets"]
    assert got == [{"name": "gen", "createdTime": made["createdTime"]}]
    assert secrets_of(system, [{"name": "gen"}]) == got  # kept, not shown again

    fire(system, target.url)

    assert verifies(made["value"], target.requests[0])


def test_secrets_stay_with_their_collection(system: System, target: HttpTarget) -> None:
    """A job of another collection (same subscription, same resource group) is not signed;
    a 2016-03-01 answer never shows the property, and its PATCH keeps it."""
    secret = new_secret()
    secrets_of(system, [{"name": "k", "value": secret}])
    system.put(OTHER, {"location": "westeurope", "properties": {}})

    fire(system, target.url_for("/other"), where=OTHER)
    assert target.requests[0].header("webhook-signature") is None

    old = system.get(COLLECTION)["properties"]
    assert "signingSecrets" not in old
    patched = system.client.patch(COLLECTION, json={"tags": {"team": "ops"}})
    assert patched.status_code == 200 and "signingSecrets" not in patched.json()["properties"]
    fire(system, target.url_for("/mine"), name="Mine")
    assert verifies(secret, target.requests_to("/mine")[0])


def test_2016_refuses_signing_secrets(system: System) -> None:
    response = system.client.patch(
        COLLECTION, json={"properties": {"signingSecrets": [{"name": "k", "value": new_secret()}]}}
    )
    assert response.status_code == 400
    assert response.json()["error"]["target"] == "properties.signingSecrets"


@pytest.mark.parametrize(("entries", "field"), [
    ([{"name": f"k{i}", "value": new_secret()} for i in range(3)], "properties.signingSecrets"),
    ([{"name": "k", "value": "c2VjcmV0"}], "properties.signingSecrets[0].value"),
    ([{"name": "k", "value": "whsec_" + base64.b64encode(b"short").decode()}],
     "properties.signingSecrets[0].value"),
    ([{"name": "k", "value": "whsec_not base64!"}], "properties.signingSecrets[0].value"),
    ([{"name": "unknown"}], "properties.signingSecrets[0].value"),
    ([{"value": new_secret()}], "properties.signingSecrets[0].name"),
    ([{"name": "k", "value": new_secret()}, {"name": "K", "value": new_secret()}],
     "properties.signingSecrets[1].name"),
    ({"name": "k"}, "properties.signingSecrets"),
])  # fmt: skip
def test_bad_secrets_are_refused_naming_the_field(system: System, entries: Any, field: str) -> None:
    response = system.client.patch(
        COLLECTION, json={"properties": {"signingSecrets": entries}}, params=NEW
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["target"] == field
    given = [e.get("value") for e in entries if e.get("value")] if isinstance(entries, list) else []
    assert not any(value[6:] in response.text for value in given)  # never echoed


def test_a_secret_is_never_logged(
    system: System, target: HttpTarget, caplog: pytest.LogCaptureFixture
) -> None:
    secret = new_secret()
    with caplog.at_level(logging.DEBUG):
        secrets_of(system, [{"name": "k", "value": secret}])
        fire(system, target.url)
    assert target.requests and secret.removeprefix("whsec_") not in caplog.text


def test_the_readme_receiver_accepts_signed_requests_and_refuses_others(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's receiver, run as written (its `py` block) as the jobs' target."""
    import re
    import textwrap
    import threading
    from http.server import ThreadingHTTPServer

    from tests.test_readme import README

    [code] = re.findall(r"```py\n(.*?)```", README.read_text(), flags=re.S)
    secret = new_secret()
    monkeypatch.setenv("SIGNING_SECRET", secret)
    namespace: dict[str, Any] = {"__name__": "readme_receiver"}
    exec(compile(textwrap.dedent(code), "readme-receiver", "exec"), namespace)
    server = ThreadingHTTPServer(("127.0.0.1", 0), namespace["Receiver"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    uri = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        secrets_of(system, [{"name": "k", "value": secret}])
        [signed] = fire(system, uri, name="Signed")
        secrets_of(system, [{"name": "other", "value": new_secret()}])
        [wrong] = fire(system, uri, name="Wrong")
    finally:
        server.shutdown()
        thread.join()
    assert signed.history.status == "Completed" and "'204'" in signed.history.message
    assert wrong.history.status == "Failed" and "'401'" in wrong.history.message


def test_a_2016_put_of_the_collection_removes_its_secrets(
    system: System, target: HttpTarget
) -> None:
    secrets_of(system, [{"name": "k", "value": new_secret()}])
    system.put(COLLECTION, {"location": "westeurope", "properties": {}})  # 2016-03-01

    fire(system, target.url)

    assert target.requests[0].header("webhook-signature") is None
    shown = system.client.get(COLLECTION, params=NEW).json()["properties"]
    assert "signingSecrets" not in shown
