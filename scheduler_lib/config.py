"""Settings read from the environment once per worker, then passed down explicitly.

Library code never reads `os.environ`: the entry points (`function_app.py`, `devhost.py`,
the CLI) call `Settings.from_env()` and hand the result to what they build. Every app
setting the code reads is named here, so the Bicep template and the docs can be checked
against this one list (see `APP_SETTINGS`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

import isodate

from scheduler_lib import key_vault_references
from scheduler_lib.app_settings import APP_SETTINGS as APP_SETTINGS
from scheduler_lib.errors import ValidationError
from scheduler_lib.identity_audiences import NO_AUDIENCES, IdentityAudiences
from scheduler_lib.metrics_settings import NO_METRICS, MetricsSettings
from scheduler_lib.precision import Precision, read_coalesce, read_precision
from scheduler_lib.transport_choice import TransportChoice, read_transport
from scheduler_lib.watchdog_choice import WatchdogChoice, read_watchdog

#: Azurite's well-known development account (public, documented by Microsoft).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
AZURITE_CONNECTION_STRING = (
    "DefaultEndpointsProtocol=http;"
    f"AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
    f"BlobEndpoint=http://127.0.0.1:10000/{AZURITE_ACCOUNT};"
    f"QueueEndpoint=http://127.0.0.1:10001/{AZURITE_ACCOUNT};"
    f"TableEndpoint=http://127.0.0.1:10002/{AZURITE_ACCOUNT};"
)

#: What a local scheduler allows actions to reach besides public addresses: loopback, so that
#: a job on a developer's machine can call a service on the same machine. "Local" is known by
#: the storage: the emulator's account (Azurite, `UseDevelopmentStorage=true`) is never what a
#: deployment uses. `Settings()` is that configuration; `from_env` applies the same rule when
#: `SCHEDULER_EGRESS_ALLOW` is not set, and allows nothing private otherwise.
LOCAL_EGRESS_ALLOW = ("127.0.0.0/8", "::1/128")

_PREFIX = re.compile(r"^[a-z][a-z0-9]{0,19}$|^$")

#: Logical table names; the stored name is `prefix + name` (tables allow letters and digits).
TABLES = (
    "JobCollections",
    "Jobs",
    "JobDueIndex",
    "JobHistory",
    "SchedulerState",
    "JobDeadlines",  # the dead-man switch's deadlines (store/deadlines.py)
    "NotificationDeliveries",  # what notifications were sent (store/notification_records.py)
)
EXECUTION_QUEUE = "scheduler-executions"
DISPATCH_QUEUE = "scheduler-dispatch"
#: Bound by the queue triggers (`%SCHEDULER_EXECUTION_QUEUE%`): the host does not start without
#: them, nor does `from_env` (only a `Settings` built in code derives names, from the above).
QUEUE_SETTINGS = ("SCHEDULER_EXECUTION_QUEUE", "SCHEDULER_DISPATCH_QUEUE")
#: Due-index shards: enough that one minute of 10,000 occurrences puts ~1,250 in a partition
#: (Azure Table's target: ~2,000 entities/s per partition) and gets up to 8 dispatch
#: instances; a minute with fewer rows is one pair of its shards (`dispatch/coordinator.py`),
#: so its seconds are batched as with one. Each costs one query a minute even when idle.
DEFAULT_DISPATCH_SHARDS = 8
MAX_DISPATCH_SHARDS = 64  # two digits in the PartitionKey


@dataclass(frozen=True)
class Settings:
    """Everything the scheduler needs from its host, as plain values."""

    storage_connection_string: str | None = AZURITE_CONNECTION_STRING
    storage_account_name: str | None = None
    storage_client_id: str | None = None
    storage_table_uri: str | None = None
    storage_queue_uri: str | None = None
    api_keys: tuple[str, ...] = ()
    storage_prefix: str = ""
    execution_queue_name: str = ""
    dispatch_queue_name: str = ""
    dispatch_shards: int = DEFAULT_DISPATCH_SHARDS
    dispatch_workers: int = 2
    #: Messages the local host runs at once (each from its early delivery to its end).
    executor_concurrency: int = 28
    grace_period: timedelta = timedelta(minutes=5)
    precision: Precision = Precision.SECOND
    #: With `minute`: the window whose occurrences start together (`precision.read_coalesce`).
    coalesce_seconds: int = 0
    watchdog: WatchdogChoice = WatchdogChoice.CLAIM  # when an attempt sends its watchdog
    storage_transport: TransportChoice = TransportChoice.POOLED  # what storage requests use
    storage_queue_endpoint: str = "https://{account}.queue.core.windows.net"
    servicebus_endpoint_suffix: str = "servicebus.windows.net"
    oauth_authority: str = "https://login.microsoftonline.com"
    appinsights_connection_string: str | None = None
    egress_allow: tuple[str, ...] = LOCAL_EGRESS_ALLOW
    #: Empty: the app's own account (`own_storage_account`).
    identity_storage_accounts: tuple[str, ...] = ()
    identity_servicebus_namespaces: tuple[str, ...] = ()
    identity_audiences: IdentityAudiences = NO_AUDIENCES  # ManagedServiceIdentity refused
    #: App settings whose Key Vault reference App Service could not resolve (see
    #: `key_vault_references`): what needs them answers 503 saying so, the rest keeps working.
    unresolved_references: tuple[str, ...] = ()
    #: Trust App Service authentication's `X-MS-CLIENT-PRINCIPAL*` headers in the dashboard
    #: (`SCHEDULER_DASHBOARD_EASY_AUTH=true`): only when Easy Auth is on, which strips them
    #: from what clients send; without it anyone could send them.
    dashboard_easy_auth: bool = False
    trusted_proxies: tuple[str, ...] = ()  # these three: see `front_end.py`
    public_url: str | None = None
    platform_hostname: str | None = None
    metrics: MetricsSettings = NO_METRICS  # GET /api/metrics (closed), label bounds

    def __post_init__(self) -> None:
        if not _PREFIX.match(self.storage_prefix):
            raise ValidationError(
                "SCHEDULER_STORAGE_PREFIX",
                "must be 1-20 lowercase letters and digits, starting with a letter",
            )
        prefix = f"{self.storage_prefix}-" if self.storage_prefix else ""
        if not self.execution_queue_name:
            object.__setattr__(self, "execution_queue_name", prefix + EXECUTION_QUEUE)
        if not self.dispatch_queue_name:
            object.__setattr__(self, "dispatch_queue_name", prefix + DISPATCH_QUEUE)
        if not 1 <= self.dispatch_shards <= MAX_DISPATCH_SHARDS:
            raise ValidationError(
                "SCHEDULER_DISPATCH_SHARDS", f"must be 1 to {MAX_DISPATCH_SHARDS}"
            )
        if self.dispatch_workers < 1 or self.executor_concurrency < 1:
            name = "DISPATCH_WORKERS" if self.dispatch_workers < 1 else "EXECUTOR_CONCURRENCY"
            raise ValidationError(f"SCHEDULER_{name}", "must be at least 1")

    @property
    def notify_queue_name(self) -> str:
        """The notifications' queue: beside the execution queue, like its poison queue, so
        its trigger binds `%SCHEDULER_EXECUTION_QUEUE%-notify` and needs no setting."""
        return f"{self.execution_queue_name}-notify"

    def table_name(self, logical: str) -> str:
        """The stored name of one of `TABLES`."""
        if logical not in TABLES:
            raise KeyError(logical)
        return f"{self.storage_prefix}{logical}"

    @property
    def table_endpoint(self) -> str:
        """Table service URL for identity-based access (public cloud unless configured)."""
        return (
            self.storage_table_uri or f"https://{self.storage_account_name}.table.core.windows.net"
        )

    @property
    def queue_endpoint(self) -> str:
        """Queue service URL for identity-based access (public cloud unless configured)."""
        return (
            self.storage_queue_uri or f"https://{self.storage_account_name}.queue.core.windows.net"
        )

    @property
    def own_storage_account(self) -> str | None:
        """The app's own storage account: the identity-based account name, or the
        connection string's `AccountName` (Azurite's for `UseDevelopmentStorage=true`)."""
        if self.storage_account_name:
            return self.storage_account_name.lower()
        parts = (self.storage_connection_string or "").split(";")
        fields = dict(part.split("=", 1) for part in parts if "=" in part)
        if fields.get("UseDevelopmentStorage", "").lower() == "true":
            return AZURITE_ACCOUNT
        account = fields.get("AccountName")
        return account.lower() if account else None

    @property
    def identity_storage_accounts_allowed(self) -> frozenset[str]:
        """Storage accounts a queue action without a SAS token may send to (lowercase)."""
        if self.identity_storage_accounts:
            return frozenset(a.lower() for a in self.identity_storage_accounts)
        own = self.own_storage_account
        return frozenset({own} if own else ())

    @property
    def configuration_problem(self) -> str | None:
        """Why the API cannot serve requests now (no secret in it), or None."""
        return key_vault_references.configuration_problem(self.unresolved_references)

    @property
    def poison_queue_name(self) -> str:
        """Where messages go after 5 failed dequeues, as the Functions runtime names it."""
        return f"{self.execution_queue_name}-poison"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build settings from app settings (`os.environ` unless given)."""
        env = os.environ if environ is None else environ
        if missing := [name for name in QUEUE_SETTINGS if not env.get(name, "").strip()]:
            raise ValidationError(missing[0], f"not set; the triggers bind to %{missing[0]}%")
        account = env.get("AzureWebJobsStorage__accountName") or None
        conn = env.get("AzureWebJobsStorage") or None
        if conn is None and account is None:
            conn = AZURITE_CONNECTION_STRING
        grace = env.get("SCHEDULER_GRACE_PERIOD", "PT5M")
        try:
            grace_period = isodate.parse_duration(grace)
        except (isodate.ISO8601Error, ValueError) as exc:
            raise ValidationError(
                "SCHEDULER_GRACE_PERIOD", f"not an ISO 8601 duration: {grace!r}"
            ) from exc
        if not isinstance(grace_period, timedelta) or grace_period < timedelta(0):
            raise ValidationError("SCHEDULER_GRACE_PERIOD", "days, hours, minutes or seconds, >= 0")
        unresolved = key_vault_references.unresolved(env)
        # App Service leaves the reference text in place when it cannot resolve it; accepting
        # that text as a key would let anyone who reads the template in.
        raw_keys = "" if "SCHEDULER_API_KEYS" in unresolved else env.get("SCHEDULER_API_KEYS", "")
        keys = tuple(k.strip() for k in raw_keys.split(",") if k.strip())
        precision = read_precision(env)
        return cls(
            storage_connection_string=conn,
            storage_account_name=account,
            storage_client_id=env.get("AzureWebJobsStorage__clientId") or None,
            storage_table_uri=env.get("AzureWebJobsStorage__tableServiceUri") or None,
            storage_queue_uri=env.get("AzureWebJobsStorage__queueServiceUri") or None,
            api_keys=keys,
            storage_prefix=env.get("SCHEDULER_STORAGE_PREFIX", ""),
            execution_queue_name=env.get("SCHEDULER_EXECUTION_QUEUE", ""),
            dispatch_queue_name=env.get("SCHEDULER_DISPATCH_QUEUE", ""),
            dispatch_shards=_int(env, "SCHEDULER_DISPATCH_SHARDS", DEFAULT_DISPATCH_SHARDS),
            dispatch_workers=_int(env, "SCHEDULER_DISPATCH_WORKERS", 2),
            executor_concurrency=_int(env, "SCHEDULER_EXECUTOR_CONCURRENCY", 28),
            grace_period=grace_period,
            precision=precision,
            coalesce_seconds=read_coalesce(env, precision, grace_period),
            watchdog=read_watchdog(env),
            storage_transport=read_transport(env),
            storage_queue_endpoint=env.get(
                "SCHEDULER_STORAGE_QUEUE_ENDPOINT", "https://{account}.queue.core.windows.net"
            ),
            servicebus_endpoint_suffix=env.get(
                "SCHEDULER_SERVICEBUS_ENDPOINT_SUFFIX", "servicebus.windows.net"
            ),
            oauth_authority=env.get(
                "SCHEDULER_OAUTH_AUTHORITY", "https://login.microsoftonline.com"
            ).rstrip("/"),
            appinsights_connection_string=env.get("APPLICATIONINSIGHTS_CONNECTION_STRING") or None,
            egress_allow=_egress_allow(env.get("SCHEDULER_EGRESS_ALLOW"), conn, account),
            identity_storage_accounts=_list(env.get("SCHEDULER_IDENTITY_STORAGE_ACCOUNTS")),
            identity_servicebus_namespaces=_list(
                env.get("SCHEDULER_IDENTITY_SERVICEBUS_NAMESPACES")
            ),
            identity_audiences=IdentityAudiences.parse(env.get("SCHEDULER_IDENTITY_AUDIENCES")),
            unresolved_references=unresolved,
            dashboard_easy_auth=env.get("SCHEDULER_DASHBOARD_EASY_AUTH", "").strip().lower()
            in ("1", "true", "yes"),
            trusted_proxies=_list(env.get("SCHEDULER_TRUSTED_PROXIES")),
            public_url=env.get("SCHEDULER_PUBLIC_URL", "").strip() or None,
            platform_hostname=env.get("WEBSITE_HOSTNAME", "").strip() or None,
            metrics=MetricsSettings.from_env(env, unresolved),
        )


def _egress_allow(value: str | None, conn: str | None, account: str | None) -> tuple[str, ...]:
    """The setting's entries or, when it is not set, loopback for a scheduler on the storage
    emulator (see LOCAL_EGRESS_ALLOW) and nothing for any other."""
    if value is not None:
        return _list(value)
    storage = Settings(storage_connection_string=conn, storage_account_name=account)
    local = account is None and storage.own_storage_account == AZURITE_ACCOUNT
    return LOCAL_EGRESS_ALLOW if local else ()


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole-number app setting (`default` when unset), refused by name when malformed."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValidationError(name, f"not a whole number: {raw!r}") from exc


def _list(value: str | None) -> tuple[str, ...]:
    """A comma-separated app setting as a tuple of its non-empty entries."""
    return tuple(item.strip() for item in (value or "").split(",") if item.strip())
