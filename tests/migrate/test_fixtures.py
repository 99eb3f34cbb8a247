"""Every public fixture (tests/migrate/fixtures/README.md) imported against the real API over
HTTP (Azurite behind it), read back through the API, and its schedule previewed: the next
runs asserted are computed by hand from the source, as of Monday 2026-03-02 09:00 UTC
(`NOW`, the server's clock). Refusals are asserted with their message, and that nothing
was written."""

from __future__ import annotations

import httpx

from tests.migrate.conftest import FIXTURES, next_runs, path

ARM = FIXTURES / "arm"
BICEP = FIXTURES / "bicep"
TERRAFORM = FIXTURES / "terraform"
WEBAPP_URI = "resources[2].resources[0].properties.action.request.uri"
SB_KEY_NAME = (
    "resources[1].resources[0].properties.action.serviceBusQueueMessage.authentication.sasKeyName"
)
#: The quickstart's job (no startTime): created at 09:00:00, it runs then, and then on
#: weekdays at 10:00, 10:30, 12:00 and 12:30 UTC.
WEBAPP_RUNS = [
    "2026-03-02T09:00:00Z",
    "2026-03-02T10:00:00Z",
    "2026-03-02T10:30:00Z",
    "2026-03-02T12:00:00Z",
    "2026-03-02T12:30:00Z",
]
#: The Service Bus quickstart's default recurrence, every minute from its creation.
EVERY_MINUTE = [f"2026-03-02T09:0{m}:00Z" for m in range(5)]


def test_arm_scheduler_webapp_is_refused_until_the_web_apps_address_is_given(
    run_import, client: httpx.Client
) -> None:
    args = [
        str(ARM / "scheduler-webapp" / "azuredeploy.json"),
        "--resource-group",
        "rg1",
        "--location",
        "westus",
        "--set",
        "jobCollectionName=webjobs",
        "--set",
        "jobName=ping",
    ]
    refused = run_import(*args)
    assert refused.code == 2
    assert refused.err.strip() == (
        f"error: {WEBAPP_URI}: reference(resourceId('Microsoft.Web/sites', "
        f"parameters('webAppName'))) "
        "cannot be evaluated here: it reads the deployed state of another resource "
        f"(give its value with --set '{WEBAPP_URI}=VALUE')"
    )
    assert client.get(path("rg1", "webjobs")).status_code == 404  # nothing written

    imported = run_import(*args, "--set", f"{WEBAPP_URI}=http://ping.example.com")
    assert imported.code == 0, imported.out + imported.err
    assert "job collection rg1/webjobs: created" in imported.out
    assert "job rg1/webjobs/ping: created" in imported.out
    collection = client.get(path("rg1", "webjobs")).json()
    assert collection["location"] == "westus"
    assert collection["properties"]["sku"] == {"name": "Standard"}
    job = client.get(path("rg1", "webjobs", "ping")).json()
    assert job["properties"]["action"] == {
        "type": "Http",
        "request": {"uri": "http://ping.example.com", "method": "GET"},
        "retryPolicy": {"retryType": "None"},
    }
    assert job["properties"]["state"] == "Enabled"
    assert next_runs(client, job) == WEBAPP_RUNS

    again = run_import(*args, "--set", f"{WEBAPP_URI}=http://ping.example.com")
    assert again.code == 0
    assert "job collection rg1/webjobs: unchanged" in again.out
    assert "job rg1/webjobs/ping: unchanged" in again.out
    assert client.get(path("rg1", "webjobs", "ping")).json() == job


def test_arm_scheduler_service_bus_imports_disabled_for_its_listkeys_secret(
    run_import, client: httpx.Client
) -> None:
    folder = ARM / "scheduler-service-bus"
    args = [
        str(folder / "azuredeploy.json"),
        "--parameters",
        str(folder / "azuredeploy.parameters.json"),
        "--resource-group",
        "rg2",
        "--location",
        "westus",
    ]
    refused = run_import(*args)
    assert refused.code == 2
    assert (
        f"error: {SB_KEY_NAME}: listKeys(variables('queueSendOnlyKeyName'), '2018-01-01-preview') "
        "cannot be evaluated here: it lists keys that only Azure holds" in refused.err
    )
    assert client.get(path("rg2", "QueuePoster")).status_code == 404

    imported = run_import(*args, "--set", f"{SB_KEY_NAME}=Scheduler")
    assert imported.code == 0, imported.out + imported.err
    assert (
        "missing secret: properties.action.serviceBusQueueMessage.authentication.sasKey: the "
        "source's "
        "listKeys(variables('queueSendOnlyKeyName'), '2018-01-01-preview')"
    ) in imported.out
    job = client.get(
        path("rg2", "QueuePoster", "PostMessage"), params={"api-version": "2026-12-01"}
    ).json()
    properties = job["properties"]
    assert properties["state"] == "Disabled"
    assert properties["pauseNote"].startswith(
        "Imported Disabled: the source does not hold "
        "properties.action.serviceBusQueueMessage.authentication.sasKey"
    )
    message = properties["action"]["serviceBusQueueMessage"]
    assert message["namespace"] == "GEN-UNIQUE"  # from the parameters file
    assert message["queueName"] == "autoposted"
    assert message["authentication"] == {
        "type": "SharedAccessKey",
        "sasKeyName": "Scheduler",
    }  # no secret shown
    assert next_runs(client, job) == EVERY_MINUTE

    # The operator sets the key and enables the job; importing the source again leaves it so.
    patched = client.patch(
        path("rg2", "QueuePoster", "PostMessage"),
        json={
            "properties": {
                "state": "Enabled",
                "action": {"serviceBusQueueMessage": {"authentication": {"sasKey": "real-key"}}},
            }
        },
    )
    assert patched.status_code == 200, patched.text
    again = run_import(*args, "--set", f"{SB_KEY_NAME}=Scheduler")
    assert again.code == 0
    assert "job rg2/QueuePoster/PostMessage: unchanged" in again.out
    assert (
        client.get(path("rg2", "QueuePoster", "PostMessage")).json()["properties"]["state"]
        == "Enabled"
    )


def test_bicep_fixtures_import_as_their_arm_templates_do(run_import, client: httpx.Client) -> None:
    webapp = run_import(
        str(BICEP / "scheduler-webapp.bicep"),
        "--resource-group",
        "rg3",
        "--location",
        "westus",
        "--set",
        "jobCollectionName=webjobs",
        "--set",
        "jobName=ping",
    )
    assert webapp.code == 2
    assert (
        "error: job.properties.action.request.uri: webApp.properties cannot be evaluated here: "
        "it reads the deployed state of the resource webApp"
    ) in webapp.err
    webapp = run_import(
        str(BICEP / "scheduler-webapp.bicep"),
        "--resource-group",
        "rg3",
        "--location",
        "westus",
        "--set",
        "jobCollectionName=webjobs",
        "--set",
        "jobName=ping",
        "--set",
        "job.properties.action.request.uri=http://ping.example.com",
    )
    assert webapp.code == 0, webapp.out + webapp.err
    job = client.get(path("rg3", "webjobs", "ping")).json()
    assert next_runs(client, job) == WEBAPP_RUNS

    bus = run_import(
        str(BICEP / "scheduler-service-bus.bicep"),
        "--resource-group",
        "rg3",
        "--location",
        "westus",
        "--parameters",
        str(ARM / "scheduler-service-bus" / "azuredeploy.parameters.json"),
        "--set",
        "schedulerJob.properties.action.serviceBusQueueMessage.authentication.sasKeyName=Scheduler",
    )
    assert bus.code == 0, bus.out + bus.err
    job = client.get(path("rg3", "QueuePoster", "PostMessage")).json()
    assert job["properties"]["state"] == "Disabled"
    assert next_runs(client, job) == EVERY_MINUTE


def test_terraform_scheduler_jobs_example(run_import, client: httpx.Client) -> None:
    imported = run_import(str(TERRAFORM / "scheduler-jobs"))
    assert imported.code == 0, imported.out + imported.err
    group, coll = (
        "tfex-job_collection",
        "tfex-scheduler-job-collection",
    )  # from the variables' defaults
    collection = client.get(path(group, coll)).json()
    assert collection["location"] == "westus"
    assert collection["properties"] == {
        "sku": {"name": "Standard"},
        "state": "Enabled",
        "quota": {"maxJobCount": 10, "maxRecurrence": {"frequency": "Minute", "interval": 10}},
    }

    def job(name: str) -> dict:
        answer = client.get(path(group, coll, name))
        assert answer.status_code == 200, answer.text
        return answer.json()

    # start_time in 1987, no recurrence: it runs once, when it is stored.
    once = job("tfex-web-once-now")
    assert once["properties"]["action"]["retryPolicy"] == {
        "retryType": "Fixed",
        "retryInterval": "PT5M",
        "retryCount": 4,
    }
    assert next_runs(client, once) == ["2026-03-02T09:00:00Z"]
    # Every 10 minutes from 2019-07-07T14:07:07Z: at 7 minutes 7 seconds past each ten.
    recurring = job("tfex-web-recurring")
    assert recurring["properties"]["action"]["request"]["headers"] == {"Content-Type": "text"}
    assert next_runs(client, recurring) == [f"2026-03-02T09:{m}7:07Z" for m in "01234"]
    # Daily at 00 and 12 h, minutes 0/15/30/45, the start's second (07), UTC.
    daily = job("tfex-web-recurring_daily-auth_basic")
    assert daily["properties"]["action"]["type"] == "Https"
    assert daily["properties"]["action"]["retryPolicy"] == {"retryType": "None"}
    assert next_runs(client, daily) == [
        "2026-03-02T12:00:07Z",
        "2026-03-02T12:15:07Z",
        "2026-03-02T12:30:07Z",
        "2026-03-02T12:45:07Z",
        "2026-03-03T00:00:07Z",
    ]
    # Its pfx is a file that is not in the example: imported Disabled, a placeholder pfx.
    weekly = job("tfex-web-recurring_weekly-auth_cert")
    assert weekly["properties"]["state"] == "Disabled"
    assert weekly["properties"]["action"]["request"]["authentication"][
        "certificateSubjectName"
    ] == ("CN=placeholder: the imported job's certificate is missing")
    assert next_runs(client, weekly) == [
        "2026-03-07T14:07:07Z",
        "2026-03-08T14:07:07Z",
        "2026-03-14T14:07:07Z",
        "2026-03-15T14:07:07Z",
        "2026-03-21T14:07:07Z",
    ]
    # The SAS token is the storage account's key, which only Azure knows: Disabled too.
    queue = job("tfex-schedulerjob-storage_queue")
    assert queue["properties"]["state"] == "Disabled"
    assert queue["properties"]["action"]["queueMessage"] == {
        "storageAccount": "tfexstorageaccount",
        "queueName": "tfex-schedulerjob-storagequeue",
        "message": "storage message",
    }
    assert next_runs(client, queue) == [
        "2026-03-08T14:07:07Z",
        "2026-03-15T14:07:07Z",
        "2026-03-22T14:07:07Z",
        "2026-03-29T14:07:07Z",
        "2026-04-05T14:07:07Z",
    ]
    # First, third and last Sunday of the month at the start's 14:07:07 UTC.
    monthly = job("tfex-web-recurring_monthly-auth_ad")
    assert monthly["properties"]["action"]["errorAction"]["request"]["authentication"] == {
        "type": "Basic",
        "username": "login",
    }
    assert next_runs(client, monthly) == [
        "2026-03-15T14:07:07Z",
        "2026-03-29T14:07:07Z",
        "2026-04-05T14:07:07Z",
        "2026-04-19T14:07:07Z",
        "2026-04-26T14:07:07Z",
    ]

    again = run_import(str(TERRAFORM / "scheduler-jobs"))
    assert again.code == 0
    assert again.out.count(": unchanged") == 7, again.out


def test_conflicts_are_left_alone_unless_replace(run_import, client: httpx.Client) -> None:
    assert run_import(str(TERRAFORM / "scheduler-jobs")).code == 0
    group, coll = "tfex-job_collection", "tfex-scheduler-job-collection"
    address = path(group, coll, "tfex-web-recurring")
    changed = client.patch(
        address, json={"properties": {"action": {"request": {"uri": "http://other.example.com"}}}}
    )
    assert changed.status_code == 200, changed.text
    conflict = run_import(str(TERRAFORM / "scheduler-jobs"))
    assert conflict.code == 1
    assert (
        f"job {group}/{coll}/tfex-web-recurring: conflict, left alone (--replace replaces it)\n"
        "  from azurerm_scheduler_job.web-recurring\n"
        "  properties.action.request.uri: 'http://other.example.com' here, 'http://example.com' "
        "in the source"
    ) in conflict.out
    assert (
        client.get(address).json()["properties"]["action"]["request"]["uri"]
        == "http://other.example.com"
    )
    replaced = run_import(str(TERRAFORM / "scheduler-jobs"), "--replace")
    assert replaced.code == 0
    assert f"job {group}/{coll}/tfex-web-recurring: replaced" in replaced.out
    assert (
        client.get(address).json()["properties"]["action"]["request"]["uri"] == "http://example.com"
    )


def test_terraform_documentation_examples(run_import, client: httpx.Client) -> None:
    collection = run_import(str(TERRAFORM / "docs-job-collection"))
    assert collection.code == 0, collection.out + collection.err
    assert (
        "changed: azurerm_scheduler_job_collection.jobs.location: West US → westus"
        in collection.out
    )
    stored = client.get(path("tfex-job_collection", "example_job_collection")).json()
    assert stored["properties"] == {
        "sku": {"name": "Free"},
        "state": "Enabled",
        "quota": {"maxJobCount": 5, "maxRecurrence": {"frequency": "Hour", "interval": 24}},
    }

    daily = TERRAFORM / "docs-job-recurring-daily"
    refused = run_import(str(daily))
    assert refused.code == 2
    assert (
        "azurerm_scheduler_job.web-recurring-daily.job_collection_name: "
        "azurerm_scheduler_job_collection.example.name "
        "cannot be evaluated here: azurerm_scheduler_job_collection.example is not defined in "
        "the files given "
        "(give --collection"
    ) in refused.err
    made = client.put(
        path("docs", "standard"),
        json={"location": "westus", "properties": {"sku": {"name": "Standard"}}},
    )
    assert made.status_code in (200, 201)
    imported = run_import(str(daily), "--collection", "standard", "--resource-group", "docs")
    assert imported.code == 0, imported.out + imported.err
    job = client.get(path("docs", "standard", "tfex-web-recurring-daily")).json()
    assert job["properties"]["action"]["retryPolicy"] == {
        "retryType": "Fixed",
        "retryInterval": "PT5M",
        "retryCount": 10,
    }
    assert next_runs(client, job) == [
        "2026-03-02T12:00:07Z",
        "2026-03-02T12:15:07Z",
        "2026-03-02T12:30:07Z",
        "2026-03-02T12:45:07Z",
        "2026-03-03T00:00:07Z",
    ]

    monthly = run_import(
        str(TERRAFORM / "docs-job-monthly"), "--collection", "standard", "--resource-group", "docs"
    )
    assert monthly.code == 1
    assert (
        "400 BadRequest: properties.recurrence.frequency: 'monthly' is not one of Minute, Hour, "
        "Day, Week, "
        "Month, Year (did you mean 'Month'?)"
    ) in monthly.out
    assert (
        client.get(path("docs", "standard", "tfex-web-recurring-daily")).json() == job
    )  # untouched


def test_dry_run_writes_nothing_and_shows_runs_and_notes(run_import, client: httpx.Client) -> None:
    dry = run_import(
        str(TERRAFORM / "scheduler-jobs"), "--dry-run", "--import-time", "2026-03-02T09:00:00Z"
    )
    assert dry.code == 0, dry.out + dry.err
    assert "would create" in dry.out
    assert "    1  2026-03-02 12:00:07Z" in dry.out  # the daily job's first run
    assert '"password": "(secret, not shown)"' in dry.out
    assert "apassword" not in dry.out
    assert "defaulted: azurerm_scheduler_job.web-recurring_daily-auth_basic.retry" in dry.out
    assert dry.out.rstrip().endswith("dry run, nothing written: 7 would create")
    assert (
        client.get(path("tfex-job_collection", "tfex-scheduler-job-collection")).status_code == 404
    )
