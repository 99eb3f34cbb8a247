"""The catalog of every app setting the code reads, with what it is for.

Its own module so that `config.py` keeps to reading them: the Bicep template, the README's
settings table and the docs are checked against this one list (tests/test_infra.py), and
`config.APP_SETTINGS` is this same dict.
"""

from __future__ import annotations

from scheduler_lib.metrics_settings import METRICS_APP_SETTINGS

#: Every app setting the code reads, with what it is for.
APP_SETTINGS: dict[str, str] = {
    "AzureWebJobsStorage": "storage connection string (Azurite locally)",
    "AzureWebJobsStorage__accountName": "storage account name for identity-based access",
    "AzureWebJobsStorage__clientId": "client id of the user-assigned identity",
    "AzureWebJobsStorage__tableServiceUri": "table endpoint for identity-based access",
    "AzureWebJobsStorage__queueServiceUri": "queue endpoint for identity-based access",
    "SCHEDULER_API_KEYS": "comma-separated API keys accepted as `Authorization: Bearer`",
    "SCHEDULER_STORAGE_PREFIX": "prefix of every table and queue name (lowercase letters/digits)",
    "SCHEDULER_EXECUTION_QUEUE": "name of the execution queue the executor function listens on",
    "SCHEDULER_DISPATCH_QUEUE": "name of the dispatch queue: one control message per pair (a "
    "minute and its shards with work), handled by the dispatch function",
    "SCHEDULER_DISPATCH_SHARDS": "shards of the due index (1-64, default 8): at most this many "
    "pairs dispatched in parallel; shards with few rows share a pair",
    "SCHEDULER_DISPATCH_WORKERS": "dispatch workers the local host runs (default 2; in Azure "
    "the Functions host scales the dispatch function)",
    "SCHEDULER_EXECUTOR_CONCURRENCY": "messages the local host executes at once (default 28)",
    "SCHEDULER_GRACE_PERIOD": "ISO 8601 duration a missed occurrence may still run late",
    "SCHEDULER_PRECISION": "second (default): an occurrence starts at its second, its message "
    "delivered 1-2 s early and held; minute: delivered at its second, no hold (cheaper, starts "
    "up to a few seconds late)",
    "SCHEDULER_COALESCE_SECONDS": "with SCHEDULER_PRECISION=minute, 1-60: the occurrences due "
    "within each window of that many seconds start together at its end (one queue message and "
    "one execution; each up to that many seconds late); 0 (default): off",
    "SCHEDULER_WATCHDOG": "claim (default): every attempt sends its watchdog with its claim and "
    "deletes it at its end (a dead worker is taken over within ~20 s); heartbeat: only an "
    "attempt still running at its first heartbeat (3 s) does, two queue operations fewer for "
    "the others, whose dead worker is left to the host's redelivery (~10 minutes)",
    "SCHEDULER_STORAGE_TRANSPORT": "pooled (default): storage requests on kept-alive http.client "
    "connections under azure-core's transport interface, a third less CPU each; requests: "
    "azure-core's RequestsTransport, as before it (the way back without a redeploy)",
    "SCHEDULER_STORAGE_QUEUE_ENDPOINT": "URL template of Storage-queue action targets",
    "SCHEDULER_SERVICEBUS_ENDPOINT_SUFFIX": "DNS suffix of Service Bus namespaces",
    "SCHEDULER_OAUTH_AUTHORITY": "Entra ID authority for ActiveDirectoryOAuth HTTP actions",
    "SCHEDULER_EGRESS_ALLOW": "CIDRs and host names of private targets actions may reach",
    "SCHEDULER_TRUSTED_PROXIES": "CIDRs of reverse proxies whose X-Forwarded-* headers count",
    "SCHEDULER_BENCH_COUNT_CALLS": "bench/cost.py only: a file the storage clients count their "
    "requests into, by stage (unset: nothing counted, the counting module not even imported)",
    "SCHEDULER_DASHBOARD_EASY_AUTH": "true: the dashboard trusts App Service authentication's "
    "X-MS-CLIENT-PRINCIPAL* headers (only with Easy Auth in front)",
    "SCHEDULER_PUBLIC_URL": "the dashboard's public URL (https://host) behind a reverse proxy",
    "SCHEDULER_IDENTITY_STORAGE_ACCOUNTS": "storage accounts queue actions reach with the app "
    "identity (default: the app's own account)",
    "SCHEDULER_IDENTITY_SERVICEBUS_NAMESPACES": "Service Bus namespaces actions reach with the "
    "app identity",
    "SCHEDULER_IDENTITY_AUDIENCES": "audiences ManagedServiceIdentity HTTP actions may get "
    "tokens for, each with the hosts they may go to (default: none)",
    "APPLICATIONINSIGHTS_CONNECTION_STRING": "App Insights: the local host exports to it (in "
    "Azure the Functions worker does, PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY)",
    **METRICS_APP_SETTINGS,
}
