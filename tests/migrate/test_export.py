"""Export and restore (docs/export.md) against two real deployments: two API servers over
two sets of Azurite tables, the CLIs run in-process against them over HTTP.

A collection with a job of every action type and every kind of secret (and a signing
secret) is exported from the first deployment with `python -m scheduler_lib export`,
restored into another subscription and resource group of the second with `import` (some
secrets given in a side file, others left missing), and read back through the second's API.
Service Bus jobs are only stored here, never sent (no emulator): the restore is up to the
API's PUT, which is as far as a Service Bus job's secret goes in these tests.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from scheduler_lib.__main__ import main
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.store import HistoryEntry, TableStore, add_history
from scheduler_lib.store import get_collection as stored_collection
from scheduler_lib.store import jobs as job_store
from tests.api.conftest import api_client
from tests.migrate.conftest import NOW, SUB, Imported
from tests.support.api_server import ApiServer, ManualClock, serve
from tests.support.certs import make_pki

NEW = "2026-12-01"
SUB_B = "00000000-0000-0000-0000-0000000000b2"
SIGNING = "whsec_" + "c2lnbmluZy1zZWNyZXQtb2YtdGhlLWV4cG9ydC10ZXN0IQ=="
SECRETS = ("basic-pw", "oauth-secret", "err-pw", "?sv=1&sig=queue-sas", "sb-key", "pfx-pw")


def _http(uri: str = "http://example.com/ping", **request: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "GET", **request}}


def _jobs(pfx: str) -> dict[str, dict[str, Any]]:
    """A job of each action type, each secret kind; recurrences and extensions (maxJitter)."""
    hourly = {"frequency": "Hour", "interval": 1}
    return {
        "plain": {"action": _http(), "recurrence": {"frequency": "Day", "schedule": {"hours": [9]}},
                  "state": "Disabled"},
        "basic": {"action": _http(authentication={"type": "Basic", "username": "u",
                                                   "password": "basic-pw"}),
                  "recurrence": hourly, "maxJitter": "PT1M"},
        "cert": {"action": _http("https://example.com/c", authentication={
            "type": "ClientCertificate", "pfx": pfx, "password": "pfx-pw"}), "recurrence": hourly},
        "oauth": {"action": {**_http("https://example.com/o", authentication={
            "type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c",
            "secret": "oauth-secret"}),
            "errorAction": _http(authentication={"type": "Basic", "username": "e",
                                                 "password": "err-pw"})},
            "recurrence": hourly},
        "queue": {"action": {"type": "StorageQueue", "queueMessage": {
            "storageAccount": "acct", "queueName": "q", "sasToken": "?sv=1&sig=queue-sas",
            "message": "hi"}}, "recurrence": hourly},
        "bus": {"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {
            "queueName": "q", "namespace": "contoso-ns", "message": "m",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "sb-key"}}},
            "recurrence": hourly},
        "topic": {"action": {"type": "ServiceBusTopic", "serviceBusTopicMessage": {
            "topicPath": "t", "namespace": "contoso-ns", "message": "m",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "sb-key"}}},
            "recurrence": hourly},
    }  # fmt: skip


def _collection(group: str, name: str, subscription: str = SUB) -> str:
    provider = f"/subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.Scheduler"
    return f"{provider}/jobCollections/{name}"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def first(settings: Settings, clock: ManualClock) -> Iterator[ApiServer]:
    with serve(create_app(settings, clock=clock)) as running:
        yield running


@pytest.fixture
def second_settings(azurite: Any) -> Settings:
    """A second deployment: its own tables (another prefix) in the same Azurite."""
    return Settings(
        storage_connection_string=azurite.connection_string,
        api_keys=("test-key",),
        storage_prefix="t" + uuid.uuid4().hex[:12],
        storage_queue_endpoint=azurite.queue_endpoint_template,
    )


@pytest.fixture
def second(second_settings: Settings, clock: ManualClock) -> Iterator[ApiServer]:
    with serve(create_app(second_settings, clock=clock)) as running:
        yield running


@pytest.fixture
def a(first: ApiServer) -> Iterator[httpx.Client]:
    with api_client(first, version=NEW) as http:
        yield http


@pytest.fixture
def b(second: ApiServer) -> Iterator[httpx.Client]:
    with api_client(second, version=NEW) as http:
        yield http


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Imported]:
    monkeypatch.setenv("SCHEDULER_API_KEY", "test-key")

    def run(*args: str) -> Imported:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Imported(code, captured.out, captured.err)

    return run


@pytest.fixture
def source(a: httpx.Client, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The first deployment's collection `rg-a/coll` with every job; their GET answers."""
    body = {"location": "West Europe", "tags": {"team": "ops"}, "properties": {
        "sku": {"name": "P10Premium"}, "quota": {"maxJobCount": 20},
        "signingSecrets": [{"name": "current", "value": SIGNING}]}}  # fmt: skip
    assert a.put(_collection("rg-a", "coll"), json=body).status_code == 201
    pfx = make_pki(tmp_path, client_common_name="export-job").client_pfx_b64("pfx-pw")
    answers = {}
    for name, properties in _jobs(pfx).items():
        put = a.put(f"{_collection('rg-a', 'coll')}/jobs/{name}", json={"properties": properties})
        assert put.status_code == 201, put.text
        answers[name] = a.get(f"{_collection('rg-a', 'coll')}/jobs/{name}").json()
    answers["(pfx)"] = {"value": pfx}
    return answers


def _export(cli: Callable[..., Imported], server: ApiServer, *args: str) -> Imported:
    return cli("export", "--subscription", SUB, "--url", server.api_url, *args)


def _restore(cli: Callable[..., Imported], server: ApiServer, *args: str) -> Imported:
    return cli("import", "--subscription", SUB_B, "--url", server.api_url, *args)


def _side_file(path: Path, bundle: dict[str, Any], values: dict[str, str]) -> Path:
    """The bundle's secrets list with the values the test gives (by job/path suffix)."""
    entries = []
    for entry in bundle["secrets"]:
        key = f"{entry['job']}:{entry['path'].rsplit('.', 1)[-1]}"
        if key in values:
            entries.append({**entry, "value": values[key]})
    path.write_text(json.dumps({"secrets": entries}))
    return path


def test_a_collection_exported_and_restored_into_another_deployment(
    cli, first, second, a, b, source, second_settings, tmp_path, clock
):
    out = tmp_path / "coll.json"
    exported = _export(cli, first, "--resource-group", "rg-a", "--collection", "coll",
                       "--out", str(out))  # fmt: skip
    assert exported.code == 0, exported.err
    assert "7 jobs, 9 secrets left out" in exported.err
    text = out.read_text()
    for secret in (*SECRETS, SIGNING, source["(pfx)"]["value"]):
        assert secret not in text  # the secrets never appear in the bundle
    bundle = json.loads(text)
    assert (bundle["kind"], bundle["bundleVersion"], bundle["apiVersion"]) == (
        "SchedulerExportBundle", 1, NEW
    )  # fmt: skip
    assert bundle["exportedAt"] == "2026-03-02T09:00:00Z" and bundle["complete"] is True
    assert bundle["collection"] == a.get(_collection("rg-a", "coll")).json()
    jobs = {j["name"].split("/")[1]: j for j in bundle["jobs"]}
    for name, job in jobs.items():  # each as GET returns it, its schedule's start pinned
        assert job["properties"].pop("startTime") == "2026-03-02T09:00:00Z"
        assert job == source[name]
        job["properties"]["startTime"] = "2026-03-02T09:00:00Z"
    assert len(jobs) == 7
    listed = {(s["job"], s["path"]) for s in bundle["secrets"]}
    assert (None, "properties.signingSecrets[0].value") in listed
    assert ("oauth", "properties.action.errorAction.request.authentication.password") in listed
    assert ("topic", "properties.action.serviceBusTopicMessage.authentication.sasKey") in listed

    given = {"None:value": SIGNING, "basic:password": "basic-pw", "cert:pfx":
             source["(pfx)"]["value"], "cert:password": "pfx-pw", "queue:sasToken":
             "?sv=1&sig=queue-sas", "topic:sasKey": "sb-key"}  # fmt: skip
    side = _side_file(tmp_path / "secrets.json", bundle, given)
    clock.advance(timedelta(minutes=20))  # restored later: the hourly jobs keep their :00
    restored = _restore(cli, second, str(out), "--secrets", str(side), "--resource-group", "rg-b")
    assert restored.code == 0, restored.out + restored.err
    assert restored.out.splitlines()[-1] == "8 created", restored.out
    assert "history" not in restored.out  # none was exported

    target = _collection("rg-b", "coll", SUB_B)
    collection = b.get(target).json()
    original = bundle["collection"]
    assert collection["location"] == original["location"] and collection["tags"] == {"team": "ops"}
    restored_secret = collection["properties"]["signingSecrets"][0]
    assert restored_secret.pop("createdTime") == "2026-03-02T09:20:00Z"  # stored anew here
    original["properties"]["signingSecrets"][0].pop("createdTime")
    assert collection["properties"] == original["properties"]  # signing secret given: Enabled
    for name, job in jobs.items():
        back = b.get(f"{target}/jobs/{name}").json()["properties"]
        before = dict(job["properties"])
        if name == "queue":
            assert back["status"]["nextExecutionTime"] == "2026-03-02T10:00:00Z"
        for read in (back, before):
            read.pop("status")
        if name in ("oauth", "bus"):  # their secrets were not given: Disabled, saying which
            assert back.pop("state") == "Disabled"
            note = back.pop("pauseNote")
            assert "Imported Disabled" in note and "authentication" in note
            before.pop("state")
            if name == "oauth":
                assert "errorAction.request.authentication.password" in note
        assert back == before, name
    stored = TableStore(second_settings)
    basic = job_store.get_job(stored, SUB_B, "rg-b", "coll", "basic").definition.document
    assert basic["action"]["request"]["authentication"]["password"] == "basic-pw"
    bus = job_store.get_job(stored, SUB_B, "rg-b", "coll", "bus").definition.document
    assert bus["action"]["serviceBusQueueMessage"]["authentication"]["sasKey"] != "sb-key"

    again = _restore(cli, second, str(out), "--secrets", str(side), "--resource-group", "rg-b")
    assert again.code == 0, again.out
    assert again.out.splitlines()[-1] == "8 unchanged"  # idempotent: nothing written


def test_a_missing_signing_secret_restores_the_collection_disabled(
    cli, first, second, b, source, tmp_path
):
    out = tmp_path / "coll.json"
    _export(cli, first, "--resource-group", "rg-a", "--collection", "coll", "--out", str(out))
    restored = _restore(cli, second, str(out), "--dry-run")
    assert restored.code == 0, restored.out
    assert "missing secret: properties.signingSecrets[0].value" in restored.out
    assert "Enabled → Disabled (unsigned)" in restored.out
    for secret in (*SECRETS, SIGNING):
        assert secret not in restored.out
    restored = _restore(cli, second, str(out))
    assert restored.code == 0, restored.out
    back = b.get(_collection("rg-a", "coll", SUB_B)).json()["properties"]
    assert back["state"] == "Disabled" and "signingSecrets" not in back


def test_a_dry_run_with_the_secrets_never_prints_them(cli, first, second, b, source, tmp_path):
    exported = _export(cli, first, "--resource-group", "rg-a", "--collection", "coll")
    assert exported.code == 0 and json.loads(exported.out)["jobCount"] == 7  # to stdout
    out = tmp_path / "coll.json"
    out.write_text(exported.out)
    given = {"None:value": SIGNING, "basic:password": "basic-pw", "oauth:secret": "oauth-secret",
             "oauth:password": "err-pw", "cert:pfx": source["(pfx)"]["value"],
             "cert:password": "pfx-pw", "queue:sasToken": "?sv=1&sig=queue-sas",
             "bus:sasKey": "sb-key", "topic:sasKey": "sb-key"}  # fmt: skip
    side = _side_file(tmp_path / "secrets.json", json.loads(exported.out), given)
    dry = _restore(cli, second, str(out), "--secrets", str(side), "--dry-run")
    assert dry.code == 0 and "would create" in dry.out and "missing" not in dry.out, dry.out
    for secret in (*SECRETS, SIGNING, source["(pfx)"]["value"]):
        assert secret not in dry.out
    assert b.get(_collection("rg-a", "coll", SUB_B)).status_code == 404  # nothing written


def test_secrets_given_after_a_first_restore_need_replace(
    cli, first, second, b, source, second_settings, tmp_path
):
    out = tmp_path / "coll.json"
    _export(cli, first, "--resource-group", "rg-a", "--collection", "coll", "--out", str(out))
    assert _restore(cli, second, str(out)).code == 0  # no secrets: those jobs Disabled
    job = _collection("rg-a", "coll", SUB_B) + "/jobs/basic"
    assert b.get(job).json()["properties"]["state"] == "Disabled"
    side = _side_file(tmp_path / "s.json", json.loads(out.read_text()), {
        "None:value": SIGNING, "basic:password": "basic-pw"})  # fmt: skip
    later = _restore(cli, second, str(out), "--secrets", str(side))
    assert later.code == 1 and "job rg-a/coll/basic: conflict" in later.out
    replaced = _restore(cli, second, str(out), "--secrets", str(side), "--replace")
    assert "job rg-a/coll/basic: replaced" in replaced.out, replaced.out
    back = b.get(job).json()["properties"]
    assert back["state"] == "Enabled" and "pauseNote" not in back
    stored = job_store.get_job(TableStore(second_settings), SUB_B, "rg-a", "coll", "basic")
    auth = stored.definition.document["action"]["request"]["authentication"]
    assert auth["password"] == "basic-pw"


def test_exporting_a_missing_collection_says_so(cli, first, tmp_path):
    out = tmp_path / "none.json"
    refused = _export(cli, first, "--resource-group", "rg-a", "--collection", "none",
                      "--out", str(out))  # fmt: skip
    assert refused.code == 1 and "404 ResourceNotFound" in refused.err
    assert list(tmp_path.iterdir()) == []  # no bundle, no partial file left


def test_a_side_file_naming_no_secret_of_the_bundle_is_refused(
    cli, first, second, source, tmp_path
):
    out = tmp_path / "coll.json"
    _export(cli, first, "--resource-group", "rg-a", "--collection", "coll", "--out", str(out))
    side = tmp_path / "secrets.json"
    typo = {"collection": "coll", "job": "basci", "path": "properties.x", "value": "v"}
    side.write_text(json.dumps({"secrets": [typo]}))
    refused = _restore(cli, second, str(out), "--secrets", str(side))
    assert refused.code == 2
    assert "secrets.json" in refused.err and "coll/basci properties.x" in refused.err


def test_an_ended_job_comes_in_disabled(cli, first, second, b, source, tmp_path):
    out = tmp_path / "coll.json"
    _export(cli, first, "--resource-group", "rg-a", "--collection", "coll", "--out", str(out))
    bundle = json.loads(out.read_text())
    ended = next(job for job in bundle["jobs"] if job["name"] == "coll/queue")
    ended["properties"]["state"] = "Completed"  # as a job whose count ran out is
    out.write_text(json.dumps(bundle))
    side = _side_file(tmp_path / "s.json", bundle, {"queue:sasToken": "?sv=1&sig=queue-sas"})
    restored = _restore(cli, second, str(out), "--secrets", str(side))
    assert "Completed → Disabled (it had ended)" in restored.out
    job = b.get(_collection("rg-a", "coll", SUB_B) + "/jobs/queue").json()
    assert job["properties"]["state"] == "Disabled"


def test_history_is_exported_to_read_and_not_restored(
    cli, first, second, b, source, store, tmp_path
):
    record = job_store.get_job(store, SUB, "rg-a", "coll", "plain")
    for minutes in (10, 70):
        start = NOW - timedelta(minutes=minutes)
        entry = (start, start, start, "MainAction", "Completed", "Http Status Code: OK")
        add_history(store, HistoryEntry(record.history_key, *entry))
    out = tmp_path / "coll.json"
    _export(cli, first, "--resource-group", "rg-a", "--collection", "coll", "--out", str(out),
            "--include-history")  # fmt: skip
    history = {h["job"]: h["entries"] for h in json.loads(out.read_text())["history"]}
    assert [e["startTime"] for e in history["plain"]] == [
        "2026-03-02T08:50:00Z",
        "2026-03-02T07:50:00Z",
    ]
    restored = _restore(cli, second, str(out))
    assert "dropped: history: 2 entries stay in the bundle: only runs write history" in restored.out
    path = _collection("rg-a", "coll", SUB_B) + "/jobs/plain/history"
    assert b.get(path).json()["value"] == []


GOOD_ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"


@pytest.mark.parametrize(
    "change, words",
    [
        ({"complete": None}, "cut.json: is cut short"),
        ({"bundleVersion": 2}, "cut.json: bundleVersion: is 2; this scheduler reads 1"),
        ({"collection": {"id": "/nonsense"}}, "cut.json: collection.id: is not a job collection"),
        ({"jobs": [{"name": "c/j"}]}, "cut.json: jobs[0]: is not a job as GET returns it"),
    ],
)
def test_a_bundle_that_is_not_whole_is_refused(cli, second, tmp_path, change, words):
    document = {"kind": "SchedulerExportBundle", "bundleVersion": 1, "complete": True,
                "collection": {"id": GOOD_ID, "name": "c"}, "jobs": [], **change}  # fmt: skip
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps({k: v for k, v in document.items() if v is not None}))
    refused = _restore(cli, second, str(cut))
    assert refused.code == 2 and words in refused.err, refused.err


def test_a_whole_deployment_backup_restores_every_collection(cli, first, second, a, b, tmp_path):
    for group, name in (("rg-1", "one"), ("rg-2", "two")):
        assert a.put(_collection(group, name), json={"location": "westus"}).status_code == 201
        job = {"properties": {"action": _http(), "recurrence": {"frequency": "Hour"}}}
        assert a.put(f"{_collection(group, name)}/jobs/j", json=job).status_code == 201
    backup = tmp_path / "backup"
    exported = _export(cli, first, "--all", "--out", str(backup))
    assert exported.code == 0, exported.err
    files = sorted(p.relative_to(backup).as_posix() for p in backup.rglob("*.json"))
    assert files == [f"{SUB}/rg-1/one.json", f"{SUB}/rg-2/two.json"]
    restored = _restore(cli, second, *(str(backup / f) for f in files), "--location", "northeurope")
    assert restored.code == 0, restored.out
    for group, name in (("rg-1", "one"), ("rg-2", "two")):
        moved = b.get(_collection(group, name, SUB_B)).json()
        assert moved["location"] == "northeurope"  # moved to another region
        back = b.get(_collection(group, name, SUB_B) + "/jobs/j").json()["properties"]
        assert back["recurrence"] == {"frequency": "Hour", "interval": 1}


SLACK = "https://hooks.slack.com/services/T0SECRET/B0SECRET/XXXXKEY"
TEAMS = "https://prod.westeurope.logic.azure.com/workflows/w1/invoke?sp=x&sig=SIGSECRET"
LEFT_OUT = "https://hooks.example.com/KEY3SECRET"


def test_notification_urls_are_secrets_of_the_bundle(
    cli, first, second, a, b, second_settings, tmp_path
):
    """A subscription's URL (a webhook's path is its key) is in the bundle masked and listed
    in `secrets`; given in the side file it is restored whole, else the subscription is left
    out with a note and the job keeps its state."""
    body = {
        "location": "West Europe",
        "properties": {
            "sku": {"name": "P10Premium"},
            "notifications": [{"url": SLACK, "events": ["Failed"], "format": "Slack"}],
        },
    }
    assert a.put(_collection("rg-a", "hooks"), json=body).status_code == 201
    job = {"action": _http(), "recurrence": {"frequency": "Hour"}, "notifications": [
        {"url": TEAMS, "events": ["Failed"], "format": "Teams"},
        {"url": LEFT_OUT, "events": ["Missed"]}]}  # fmt: skip
    put = a.put(f"{_collection('rg-a', 'hooks')}/jobs/alert", json={"properties": job})
    assert put.status_code == 201, put.text
    out = tmp_path / "hooks.json"
    exported = _export(cli, first, "--resource-group", "rg-a", "--collection", "hooks",
                       "--out", str(out))  # fmt: skip
    assert exported.code == 0, exported.err
    text = out.read_text()
    assert "SECRET" not in text and "XXXXKEY" not in text
    bundle = json.loads(text)
    urls = [n["url"] for n in bundle["jobs"][0]["properties"]["notifications"]]
    assert urls == ["https://prod.westeurope.logic.azure.com/***", "https://hooks.example.com/***"]
    listed = {(s["job"], s["path"]) for s in bundle["secrets"]}
    assert listed == {(None, "properties.notifications[0].url"),
                      ("alert", "properties.notifications[0].url"),
                      ("alert", "properties.notifications[1].url")}  # fmt: skip

    side = tmp_path / "secrets.json"
    side.write_text(json.dumps({"secrets": [
        {"collection": "hooks", "job": None, "path": "properties.notifications[0].url",
         "value": SLACK},
        {"collection": "hooks", "job": "alert", "path": "properties.notifications[0].url",
         "value": TEAMS}]}))  # fmt: skip
    dry = _restore(cli, second, str(out), "--secrets", str(side), "--dry-run")
    assert "missing secret: properties.notifications[1].url" in dry.out, dry.out
    assert "SECRET" not in dry.out + dry.err
    restored = _restore(cli, second, str(out), "--secrets", str(side))
    assert restored.code == 0, restored.out + restored.err
    stored = TableStore(second_settings)
    collection = stored_collection(stored, SUB_B, "rg-a", "hooks")
    assert [n["url"] for n in collection.properties["notifications"]] == [SLACK]
    alert = job_store.get_job(stored, SUB_B, "rg-a", "hooks", "alert")
    assert [n["url"] for n in alert.definition.document["notifications"]] == [TEAMS]
    assert alert.state == "Enabled"  # what it runs is unchanged
    back = b.get(f"{_collection('rg-a', 'hooks', SUB_B)}/jobs/alert").text
    assert "SECRET" not in back


HOOK_SECRETS = tuple("whsec_" + base64.b64encode(f"hook-signing-{n}-".encode() * 2).decode()
                     for n in range(3))  # fmt: skip


def test_notification_signing_secrets_are_secrets_of_the_bundle(
    cli, first, second, a, b, second_settings, tmp_path
):
    """A subscription's signing secret is listed in `secrets` (never its value); given in the
    side file it is stored again, else the subscription is left out with a note: never kept
    unsigned, which a receiver verifying signatures would reject without anyone being told."""
    body = {
        "location": "West Europe",
        "properties": {
            "sku": {"name": "P10Premium"},
            "notifications": [{"url": SLACK, "events": ["Failed"], "secret": HOOK_SECRETS[0]}],
        },
    }
    assert a.put(_collection("rg-a", "signed"), json=body).status_code == 201
    job = {"action": _http(), "recurrence": {"frequency": "Hour"}, "notifications": [
        {"url": TEAMS, "events": ["Failed"], "secret": HOOK_SECRETS[1]},
        {"url": LEFT_OUT, "events": ["Missed"], "secret": HOOK_SECRETS[2]},
        {"url": SLACK, "events": ["Failed"], "format": "Slack"}]}  # fmt: skip
    put = a.put(f"{_collection('rg-a', 'signed')}/jobs/alert", json={"properties": job})
    assert put.status_code == 201, put.text
    out = tmp_path / "signed.json"
    exported = _export(cli, first, "--resource-group", "rg-a", "--collection", "signed",
                       "--out", str(out))  # fmt: skip
    assert exported.code == 0, exported.err
    text = out.read_text()
    assert not any(secret.removeprefix("whsec_") in text for secret in HOOK_SECRETS)
    bundle = json.loads(text)
    listed = {(s["job"], s["path"]) for s in bundle["secrets"]}
    assert {(None, "properties.notifications[0].secret"),
            ("alert", "properties.notifications[0].secret"),
            ("alert", "properties.notifications[1].secret")} <= listed  # fmt: skip
    assert ("alert", "properties.notifications[2].secret") not in listed  # it signs nothing

    urls = {(None, 0): SLACK, ("alert", 0): TEAMS, ("alert", 1): LEFT_OUT, ("alert", 2): SLACK}
    given = [{"collection": "signed", "job": j, "path": f"properties.notifications[{i}].url",
              "value": url} for (j, i), url in urls.items()]  # fmt: skip
    given += [{"collection": "signed", "job": j, "path": "properties.notifications[0].secret",
               "value": HOOK_SECRETS[n]} for n, j in enumerate((None, "alert"))]  # fmt: skip
    side = tmp_path / "secrets.json"
    side.write_text(json.dumps({"secrets": given}))
    dry = _restore(cli, second, str(out), "--secrets", str(side), "--dry-run")
    assert "missing secret: properties.notifications[1].secret" in dry.out, dry.out
    assert "missing secret: properties.notifications[0].secret" not in dry.out, dry.out
    assert not any(secret in dry.out + dry.err for secret in HOOK_SECRETS)
    restored = _restore(cli, second, str(out), "--secrets", str(side))
    assert restored.code == 0, restored.out + restored.err
    stored = TableStore(second_settings)
    collection = stored_collection(stored, SUB_B, "rg-a", "signed")
    signed = [(n["url"], n.get("secret")) for n in collection.properties["notifications"]]
    assert signed == [(SLACK, HOOK_SECRETS[0])]
    alert = job_store.get_job(stored, SUB_B, "rg-a", "signed", "alert")
    kept = [(n["url"], n.get("secret")) for n in alert.definition.document["notifications"]]
    assert kept == [(TEAMS, HOOK_SECRETS[1]), (SLACK, None)]  # the unsigned one left out
    assert alert.state == "Enabled"  # what it runs is unchanged
    back = b.get(f"{_collection('rg-a', 'signed', SUB_B)}/jobs/alert").text
    assert not any(secret in back for secret in HOOK_SECRETS)
    assert '"hasSecret":true' in back.replace(" ", "")
    again = _restore(cli, second, str(out), "--secrets", str(side))
    assert again.code == 0, again.out
    assert again.out.splitlines()[-1] == "2 unchanged"  # idempotent: nothing written
