"""Settings from app settings: defaults, identity mode, and refusals of unsafe values."""

from datetime import timedelta

import pytest

from scheduler_lib.config import AZURITE_CONNECTION_STRING, Settings
from scheduler_lib.errors import ValidationError


def test_defaults_point_at_local_azurite() -> None:
    settings = Settings.from_env({})
    assert settings.storage_connection_string == AZURITE_CONNECTION_STRING
    assert settings.execution_queue_name == "scheduler-executions"
    assert settings.poison_queue_name == "scheduler-executions-poison"
    assert settings.grace_period == timedelta(minutes=5)
    assert settings.api_keys == ()
    assert settings.executor_concurrency == 28


def test_the_local_hosts_executor_slots_are_a_setting() -> None:
    settings = Settings.from_env({"SCHEDULER_EXECUTOR_CONCURRENCY": "40"})
    assert settings.executor_concurrency == 40


def test_identity_mode_has_no_connection_string() -> None:
    settings = Settings.from_env(
        {"AzureWebJobsStorage__accountName": "acct", "AzureWebJobsStorage__clientId": "cid"}
    )
    assert settings.storage_connection_string is None
    assert (settings.storage_account_name, settings.storage_client_id) == ("acct", "cid")
    assert settings.table_endpoint == "https://acct.table.core.windows.net"
    sovereign = Settings.from_env(
        {
            "AzureWebJobsStorage__accountName": "acct",
            "AzureWebJobsStorage__tableServiceUri": "https://acct.table.core.chinacloudapi.cn",
            "AzureWebJobsStorage__queueServiceUri": "https://acct.queue.core.chinacloudapi.cn",
        }
    )
    assert sovereign.table_endpoint == "https://acct.table.core.chinacloudapi.cn"
    assert sovereign.queue_endpoint == "https://acct.queue.core.chinacloudapi.cn"


def test_prefix_applies_to_tables_and_queue() -> None:
    settings = Settings.from_env(
        {"SCHEDULER_STORAGE_PREFIX": "staging1", "SCHEDULER_API_KEYS": " a , b ,,"}
    )
    assert settings.table_name("Jobs") == "staging1Jobs"
    assert settings.execution_queue_name == "staging1-scheduler-executions"
    assert settings.api_keys == ("a", "b")


@pytest.mark.parametrize(
    ("env", "field"),
    [
        (
            {"AzureWebJobsStorage": "@Microsoft.KeyVault(SecretUri=https://v/secrets/k)"},
            "AzureWebJobsStorage",
        ),
        ({"SCHEDULER_GRACE_PERIOD": "five minutes"}, "SCHEDULER_GRACE_PERIOD"),
        ({"SCHEDULER_GRACE_PERIOD": "P1M"}, "SCHEDULER_GRACE_PERIOD"),
        ({"SCHEDULER_GRACE_PERIOD": "-PT5M"}, "SCHEDULER_GRACE_PERIOD"),
        ({"SCHEDULER_STORAGE_PREFIX": "Bad-Prefix"}, "SCHEDULER_STORAGE_PREFIX"),
        ({"SCHEDULER_EXECUTOR_CONCURRENCY": "0"}, "SCHEDULER_EXECUTOR_CONCURRENCY"),
        ({"SCHEDULER_EXECUTOR_CONCURRENCY": "many"}, "SCHEDULER_EXECUTOR_CONCURRENCY"),
        ({"SCHEDULER_DISPATCH_WORKERS": "0"}, "SCHEDULER_DISPATCH_WORKERS"),
    ],
    ids=[
        "unresolved-storage-reference",
        "grace-not-iso",
        "grace-in-months",
        "grace-negative",
        "bad-prefix",
        "no-executor-slot",
        "executor-slots-not-a-number",
        "no-dispatch-worker",
    ],
)
def test_unsafe_or_malformed_settings_are_refused(env: dict[str, str], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings.from_env(env)
    assert err.value.field == field


def test_unresolved_api_keys_reference_is_no_key_and_a_stated_problem() -> None:
    """The worker still loads (its triggers need no API key); the reference text is never a
    key, and the problem names the setting but not the vault or the secret."""
    reference = "@Microsoft.KeyVault(SecretUri=https://vault1.vault.azure.net/secrets/keys/)"
    settings = Settings.from_env({"SCHEDULER_API_KEYS": reference})
    assert settings.api_keys == ()
    assert settings.unresolved_references == ("SCHEDULER_API_KEYS",)
    problem = settings.configuration_problem
    assert problem and "SCHEDULER_API_KEYS" in problem and "vault1" not in problem
    assert Settings.from_env({"SCHEDULER_API_KEYS": "k"}).configuration_problem is None
