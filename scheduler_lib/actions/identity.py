"""The app's own identity: for actions that send without a secret of their own (a Storage
queue message without `sasToken`, a Service Bus message without SharedAccessKey) and for
HTTP targets of `authentication.type: ManagedServiceIdentity` (api-version 2026-12-01).

In Azure it is the managed identity (`AzureWebJobsStorage__clientId` names a user-assigned
one), locally whatever `DefaultAzureCredential` finds. Its managed-identity leg honours
azure-identity's own settings, `IDENTITY_ENDPOINT` + `IDENTITY_HEADER` (App Service) or
`MSI_ENDPOINT`, so the token endpoint can be pointed elsewhere (tests: a local server).
Which accounts and namespaces may be reached this way is `destinations`' business; which
HTTP hosts, the egress policy's (checked before a token is asked for).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from azure.core.exceptions import AzureError
from azure.identity import CredentialUnavailableError, DefaultAzureCredential

from scheduler_lib.actions.oauth import TokenCache, TokenError, TokenKey
from scheduler_lib.config import Settings

#: The cache key's "token endpoint" for the app's identity (the credential knows the real one).
APP_IDENTITY = "app-identity"
#: How much of the credential's failure goes into the history (DefaultAzureCredential lists
#: every credential it tried, a page of text).
_REASON_LIMIT = 600


@functools.lru_cache(maxsize=4)
def app_credential(client_id: str | None) -> DefaultAzureCredential:
    """One credential per identity for the process, so its token cache survives executions."""
    return DefaultAzureCredential(managed_identity_client_id=client_id)


def app_token(
    audience: str,
    settings: Settings,
    *,
    cache: TokenCache,
    wall_clock: Callable[[], float] = time.time,
) -> str:
    """An Entra ID access token of the app's identity for `<audience>/.default`, from `cache`
    (the OAuth token cache: one mechanism, refreshed before expiry) or the credential.
    `wall_clock` turns the token's epoch expiry into a lifetime; raises TokenError."""
    key = TokenKey(APP_IDENTITY, settings.storage_client_id or "", audience, "")
    cached = cache.get(key)
    if cached is not None:
        return cached
    try:
        token = app_credential(settings.storage_client_id).get_token(f"{audience}/.default")
    except (CredentialUnavailableError, AzureError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:_REASON_LIMIT]
        raise TokenError(
            f"Could not get a managed identity token for audience '{audience}': {reason}"
        ) from None
    cache.put(key, token.token, token.expires_on - wall_clock())
    return token.token
