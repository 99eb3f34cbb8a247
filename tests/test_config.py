"""Settings from app settings: defaults, identity mode, and refusals of unsafe values."""

from datetime import timedelta

import pytest

from scheduler_lib.config import AZURITE_CONNECTION_STRING, Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.transport_choice import TransportChoice
from scheduler_lib.watchdog_choice import WatchdogChoice

#: The queue names the triggers bind to: required, as on the Functions host.
QUEUES = {"SCHEDULER_EXECUTION_QUEUE": "exec-q", "SCHEDULER_DISPATCH_QUEUE": "dispatch-q"}


def test_defaults_point_at_local_azurite() -> None:
    settings = Settings.from_env(QUEUES)
    assert settings.storage_connection_string == AZURITE_CONNECTION_STRING
    assert settings.execution_queue_name == "exec-q"
    assert settings.poison_queue_name == "exec-q-poison"
    assert settings.dispatch_queue_name == "dispatch-q"
    assert settings.grace_period == timedelta(minutes=5)
    assert settings.api_keys == ()
    assert settings.executor_concurrency == 28


def test_the_local_hosts_executor_slots_are_a_setting() -> None:
    settings = Settings.from_env({**QUEUES, "SCHEDULER_EXECUTOR_CONCURRENCY": "40"})
    assert settings.executor_concurrency == 40


def test_identity_mode_has_no_connection_string() -> None:
    settings = Settings.from_env(
        {
            **QUEUES,
            "AzureWebJobsStorage__accountName": "acct",
            "AzureWebJobsStorage__clientId": "cid",
        }
    )
    assert settings.storage_connection_string is None
    assert (settings.storage_account_name, settings.storage_client_id) == ("acct", "cid")
    assert settings.table_endpoint == "https://acct.table.core.windows.net"
    sovereign = Settings.from_env(
        {
            **QUEUES,
            "AzureWebJobsStorage__accountName": "acct",
            "AzureWebJobsStorage__tableServiceUri": "https://acct.table.core.chinacloudapi.cn",
            "AzureWebJobsStorage__queueServiceUri": "https://acct.queue.core.chinacloudapi.cn",
        }
    )
    assert sovereign.table_endpoint == "https://acct.table.core.chinacloudapi.cn"
    assert sovereign.queue_endpoint == "https://acct.queue.core.chinacloudapi.cn"


def test_what_stands_in_front_of_the_app_is_read_from_the_environment() -> None:
    assert (Settings().trusted_proxies, Settings().public_url, Settings().platform_hostname) == (
        (), None, None)  # fmt: skip
    settings = Settings.from_env(
        {
            **QUEUES,
            "SCHEDULER_TRUSTED_PROXIES": "10.0.0.0/8, 2001:db8::/32",
            "SCHEDULER_PUBLIC_URL": " https://scheduler.example.com ",
            "WEBSITE_HOSTNAME": "func-api-x.azurewebsites.net",
        }
    )
    assert settings.trusted_proxies == ("10.0.0.0/8", "2001:db8::/32")
    assert settings.public_url == "https://scheduler.example.com"
    assert settings.platform_hostname == "func-api-x.azurewebsites.net"


def test_prefix_applies_to_tables_and_the_queues_are_named_by_their_settings() -> None:
    settings = Settings.from_env(
        {**QUEUES, "SCHEDULER_STORAGE_PREFIX": "staging1", "SCHEDULER_API_KEYS": " a , b ,,"}
    )
    assert settings.table_name("Jobs") == "staging1Jobs"
    assert settings.execution_queue_name == "exec-q"  # the name the trigger binds to
    assert settings.api_keys == ("a", "b")


@pytest.mark.parametrize("missing", sorted(QUEUES))
def test_a_queue_setting_the_triggers_bind_to_is_required(missing: str) -> None:
    """`%SCHEDULER_EXECUTION_QUEUE%` that resolves to nothing stops the Functions host; a
    default here would let the local host run on a queue Azure never reads."""
    for env in ({k: v for k, v in QUEUES.items() if k != missing}, {**QUEUES, missing: " "}):
        with pytest.raises(ValidationError) as err:
            Settings.from_env(env)
        assert err.value.field == missing
        assert "not set" in str(err.value)


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
        ({"SCHEDULER_WATCHDOG": "never"}, "SCHEDULER_WATCHDOG"),
        ({"SCHEDULER_STORAGE_TRANSPORT": "curl"}, "SCHEDULER_STORAGE_TRANSPORT"),
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
        "unknown-watchdog-choice",
        "unknown-storage-transport",
    ],
)
def test_unsafe_or_malformed_settings_are_refused(env: dict[str, str], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings.from_env({**QUEUES, **env})
    assert err.value.field == field


def test_unresolved_api_keys_reference_is_no_key_and_a_stated_problem() -> None:
    """The worker still loads (its triggers need no API key); the reference text is never a
    key, and the problem names the setting but not the vault or the secret."""
    reference = "@Microsoft.KeyVault(SecretUri=https://vault1.vault.azure.net/secrets/keys/)"
    settings = Settings.from_env({**QUEUES, "SCHEDULER_API_KEYS": reference})
    assert settings.api_keys == ()
    assert settings.unresolved_references == ("SCHEDULER_API_KEYS",)
    problem = settings.configuration_problem
    assert problem and "SCHEDULER_API_KEYS" in problem and "vault1" not in problem
    assert Settings.from_env({**QUEUES, "SCHEDULER_API_KEYS": "k"}).configuration_problem is None


def test_an_unresolved_metrics_token_closes_only_the_metrics_endpoint() -> None:
    """The API and health keep serving; the reference text never opens /api/metrics."""
    reference = "@Microsoft.KeyVault(SecretUri=https://vault1.vault.azure.net/secrets/m/)"
    settings = Settings.from_env(
        {**QUEUES, "SCHEDULER_API_KEYS": "k", "SCHEDULER_METRICS_TOKEN": reference}
    )
    assert settings.unresolved_references == ("SCHEDULER_METRICS_TOKEN",)
    assert settings.configuration_problem is None
    assert reference not in settings.metrics.tokens


@pytest.mark.parametrize(
    ("value", "choice"),
    [(None, TransportChoice.POOLED), (" Requests ", TransportChoice.REQUESTS)],
)
def test_the_storage_transport_is_read_by_name(value: str | None, choice: str) -> None:
    env = QUEUES if value is None else {**QUEUES, "SCHEDULER_STORAGE_TRANSPORT": value}
    assert Settings.from_env(env).storage_transport == choice


@pytest.mark.parametrize(
    ("value", "choice"),
    [(None, WatchdogChoice.CLAIM), (" Heartbeat ", WatchdogChoice.HEARTBEAT), ("claim", "claim")],
)
def test_the_watchdog_choice_is_read_by_name(value: str | None, choice: str) -> None:
    """Unset, an attempt sends its watchdog with its claim, as before the setting existed."""
    env = QUEUES if value is None else {**QUEUES, "SCHEDULER_WATCHDOG": value}
    assert Settings.from_env(env).watchdog == choice
