"""What the tests that start the local host (`python -m devtools.devhost`) in a process of its
own give it: the app settings of a test's storage."""

from __future__ import annotations

import os

from devtools.azurite import Azurite
from scheduler_lib.config import Settings


def devhost_env(
    azurite: Azurite, settings: Settings, *, key: str = "k", **changes: str | None
) -> dict[str, str]:
    """The environment with the settings the host needs on this test's storage and `key` as
    its API key; `changes` set (a value) or remove (None) others."""
    env = {
        **os.environ,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_API_KEYS": key,
        "SCHEDULER_STORAGE_PREFIX": settings.storage_prefix,
        "SCHEDULER_EXECUTION_QUEUE": settings.execution_queue_name,
        "SCHEDULER_DISPATCH_QUEUE": settings.dispatch_queue_name,
    }
    for name, value in changes.items():
        env.pop(name, None)
        if value is not None:
            env[name] = value
    return env
