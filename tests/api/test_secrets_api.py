"""Secrets are write-only over HTTP: never in any response; kept across the SDK's
GET-modify-PUT; derived certificate details are returned instead of the pfx."""

import json
from pathlib import Path

from scheduler_lib.store.jobs import get_job
from tests.api.conftest import RG, SUB, arm_error, http_action, job_body, job_path, make_collection
from tests.support.certs import make_pki

SECRETS = ("basic-pw", "oauth-secret", "?sv=1&sig=queue-sas", "sb-key", "err-pw")


def _all_secret_actions():
    return {
        "basic": http_action(
            authentication={"type": "Basic", "username": "u", "password": "basic-pw"}
        ),
        "oauth": {
            **http_action(
                authentication={
                    "type": "ActiveDirectoryOAuth",
                    "tenant": "t",
                    "audience": "a",
                    "clientId": "c",
                    "secret": "oauth-secret",
                }
            ),
            "errorAction": http_action(
                authentication={"type": "Basic", "username": "e", "password": "err-pw"}
            ),
        },
        "queue": {
            "type": "StorageQueue",
            "queueMessage": {
                "storageAccount": "acct",
                "queueName": "q",
                "sasToken": "?sv=1&sig=queue-sas",
                "message": "hi",
            },
        },
        "bus": {
            "type": "ServiceBusQueue",
            "serviceBusQueueMessage": {
                "queueName": "q",
                "namespace": "contoso-ns",
                "authentication": {"sasKeyName": "k", "sasKey": "sb-key"},
            },
        },
    }


def test_no_response_ever_contains_a_secret(client, caplog):
    make_collection(client)
    texts = []
    for name, action in _all_secret_actions().items():
        texts.append(client.put(job_path(name), json=job_body(action=action)).text)
        texts.append(client.get(job_path(name)).text)
        texts.append(client.patch(job_path(name), json={"properties": {"state": "Disabled"}}).text)
    texts.append(client.get(job_path().rsplit("/", 1)[0]).text)  # the list
    texts.append(caplog.text)
    for text in texts:
        for secret in SECRETS:
            assert secret not in text
    auth = json.loads(texts[0])["properties"]["action"]["request"]["authentication"]
    assert auth == {"type": "Basic", "username": "u"}


def test_get_then_put_keeps_the_stored_secrets(client, store):
    make_collection(client)
    for name, action in _all_secret_actions().items():
        client.put(job_path(name), json=job_body(action=action))
        before = get_job(store, SUB, RG, "coll", name).definition.document
        read = client.get(job_path(name)).json()  # secrets stripped, as the SDK would see it
        read["properties"]["recurrence"] = {"frequency": "Day"}
        assert client.put(job_path(name), json=read).status_code == 200
        after = get_job(store, SUB, RG, "coll", name).definition.document
        assert after["action"] == before["action"], name


def test_changing_the_principal_without_its_secret_is_a_400(client):
    make_collection(client)
    action = http_action(authentication={"type": "Basic", "username": "u", "password": "basic-pw"})
    client.put(job_path(), json=job_body(action=action))
    patch = {
        "properties": {"action": {"request": {"authentication": {"username": "someone-else"}}}}
    }
    error = arm_error(client.patch(job_path(), json=patch), 400)
    assert error["target"] == "properties.action.request.authentication.password"
    patch["properties"]["action"]["request"]["authentication"]["password"] = "new-pw"
    assert client.patch(job_path(), json=patch).status_code == 200


def test_client_certificate_details_are_derived(client, tmp_path: Path, store):
    pki = make_pki(tmp_path, client_common_name="cert-job")
    make_collection(client)
    pfx = pki.client_pfx_b64("pfx-pw")
    action = http_action(
        uri="https://example.com/",
        authentication={"type": "ClientCertificate", "pfx": pfx, "password": "pfx-pw"},
    )
    created = client.put(job_path(), json=job_body(action=action))
    assert created.status_code == 201, created.text
    auth = created.json()["properties"]["action"]["request"]["authentication"]
    assert set(auth) == {
        "type",
        "certificateThumbprint",
        "certificateSubjectName",
        "certificateExpirationDate",
        "certificateExpiration",  # 2016-03-01 answered this name; the SDKs read the other
    }
    assert auth["certificateSubjectName"].startswith("CN=cert-job")
    assert auth["certificateExpirationDate"] == "2099-12-31T23:59:59Z"
    assert pfx not in created.text and "pfx-pw" not in created.text
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document
    assert stored["action"]["request"]["authentication"]["pfx"] == pfx
    bad = dict(
        action,
        request={
            **action["request"],
            "authentication": {"type": "ClientCertificate", "pfx": pfx, "password": "wrong"},
        },
    )
    error = arm_error(client.put(job_path("bad"), json=job_body(action=bad)), 400)
    assert error["target"] == "properties.action.request.authentication.pfx"
    assert "wrong" not in error["message"]


def test_free_collections_cannot_authenticate_outbound(client):
    make_collection(client, sku={"name": "Free"})
    action = http_action(authentication={"type": "Basic", "username": "u", "password": "p"})
    error = arm_error(client.put(job_path(), json=job_body(action=action)), 409)
    assert error["code"] == "QuotaExceeded"


def test_a_stored_password_does_not_follow_a_patched_uri(client, store):
    """PUT a Basic job to host A, PATCH only the URI to host B: without the password again
    this is a 400 naming it (before, B would have received A's password on the next run)."""
    make_collection(client)
    auth = {"type": "Basic", "username": "u", "password": "basic-pw"}
    action = http_action(uri="http://a.example/", authentication=auth)
    action["errorAction"] = http_action(uri="http://e.example/", authentication=auth)
    assert client.put(job_path(), json=job_body(action=action)).status_code == 201
    for where, patch_action in (
        ("action.request", {"request": {"uri": "http://b.example/"}}),
        ("action.errorAction.request", {"errorAction": {"request": {"uri": "http://b.example/"}}}),
        ("action.request", {"request": {"uri": "http://a.example:8080/"}}),
    ):
        error = arm_error(
            client.patch(job_path(), json={"properties": {"action": patch_action}}), 400
        )
        assert error["target"] == f"properties.{where}.authentication.password"
        assert "basic-pw" not in error["message"]
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document["action"]
    assert stored["request"]["uri"] == "http://a.example/"
    # The same host, another path: the password stays (the SDK's GET-modify-PUT).
    same_host = {"properties": {"action": {"request": {"uri": "http://A.example:80/v2"}}}}
    assert client.patch(job_path(), json=same_host).status_code == 200
    read = client.get(job_path()).json()
    read["properties"]["action"]["request"]["uri"] = "http://b.example/"
    error = arm_error(client.put(job_path(), json=read), 400)
    assert error["target"] == "properties.action.request.authentication.password"
    read["properties"]["action"]["request"]["authentication"]["password"] = "b-pw"
    assert client.put(job_path(), json=read).status_code == 200
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document["action"]
    assert stored["request"]["authentication"]["password"] == "b-pw"
    assert stored["errorAction"]["request"]["authentication"]["password"] == "basic-pw"


def test_a_stored_oauth_secret_does_not_follow_a_patched_uri(client, store):
    """PUT an OAuth job to host A, PATCH only the URI to host B: a 400 naming the secret
    (before: 200, and B received a token minted with A's stored secret on the next run)."""
    make_collection(client)
    auth = {
        "type": "ActiveDirectoryOAuth",
        "tenant": "t",
        "audience": "api://a",
        "clientId": "c",
        "secret": "oauth-secret",
    }
    action = http_action(uri="https://a.example/run", authentication=auth)
    assert client.put(job_path(), json=job_body(action=action)).status_code == 201
    moved = {"properties": {"action": {"request": {"uri": "https://b.example/run"}}}}
    error = arm_error(client.patch(job_path(), json=moved), 400)
    assert error["target"] == "properties.action.request.authentication.secret"
    assert "oauth-secret" not in error["message"]
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document["action"]["request"]
    assert stored["uri"] == "https://a.example/run"
    # The same host, another path: the secret stays.
    same_host = {"properties": {"action": {"request": {"uri": "https://a.example/v2/run"}}}}
    assert client.patch(job_path(), json=same_host).status_code == 200
    # The secret given again: the job may move.
    moved["properties"]["action"]["request"]["authentication"] = {"secret": "b-secret"}
    assert client.patch(job_path(), json=moved).status_code == 200
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document["action"]["request"]
    assert (stored["uri"], stored["authentication"]["secret"]) == (
        "https://b.example/run",
        "b-secret",
    )
