"""App settings that are Key Vault references App Service could not resolve: which ones a
worker can run without, which stop it, and what the API says while one is missing. Its own
module, as `precision` is, so that `config.py` stays a reader of plain settings under the
size cap; `Settings.from_env` calls `unresolved` once and keeps the names."""

from __future__ import annotations

from collections.abc import Mapping

from scheduler_lib.app_settings import APP_SETTINGS
from scheduler_lib.errors import ValidationError

#: Settings only the API needs. When App Service cannot resolve their Key Vault reference
#: (the identity's role not yet propagated, Key Vault throttling) it passes the reference
#: text itself; the worker then still loads, the dispatcher and executor keep running, and
#: the API answers 503 until a restart resolves it. Any other unresolved reference stops
#: the worker, since every function needs it.
OPTIONAL_REFERENCES = ("SCHEDULER_API_KEYS", "SCHEDULER_METRICS_TOKEN")
_REFERENCE = "@Microsoft.KeyVault("


def unresolved(env: Mapping[str, str]) -> tuple[str, ...]:
    """The app settings left as reference text (all in `OPTIONAL_REFERENCES`), or a
    ValidationError naming the first other one: the worker cannot run without it."""
    unresolved = tuple(name for name in APP_SETTINGS if is_reference(env.get(name)))
    if stopping := [name for name in unresolved if name not in OPTIONAL_REFERENCES]:
        raise ValidationError(stopping[0], "the Key Vault reference did not resolve")
    return unresolved


def configuration_problem(unresolved: tuple[str, ...]) -> str | None:
    """Why the API cannot serve requests with these settings unresolved (no secret in it),
    or None."""
    # An unresolved metrics token only keeps GET /api/metrics closed (`metrics_settings`).
    api = [n for n in unresolved if n != "SCHEDULER_METRICS_TOKEN"]
    if not api:
        return None
    names = ", ".join(api)
    return (
        f"The app setting {names} is a Key Vault reference that did not resolve: check "
        "that the app's identity may read the secret, then restart the app."
    )


def is_reference(value: str | None) -> bool:
    """An app setting App Service left as `@Microsoft.KeyVault(...)` text."""
    return value is not None and value.lstrip().startswith(_REFERENCE)
