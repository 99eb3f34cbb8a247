"""The queue's message requests with a token credential (the app's managed identity in
Azure): azure-core's `BearerTokenCredentialPolicy` asks for the scope azure-storage-queue
asks for, and an Azurite of its own, over HTTPS with OAuth on (`--oauth basic`: it checks a
token's audience, issuer and lifetime, not its signature), accepts the requests as it accepts
the SDK's, and refuses a token for another audience as it refuses the SDK's.

The token and the certificate are made as in tests/store/test_changeset_token.py (its
`Identity` and `_certificate`), standing in for Microsoft Entra ID and a real certificate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.queue import (
    BinaryBase64DecodePolicy,
    BinaryBase64EncodePolicy,
    QueueClient,
    QueueServiceClient,
)

from devtools.azurite import Azurite
from scheduler_lib.config import Settings
from scheduler_lib.storage_account import storage_connections
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store.queue_requests import QueueRequests
from scheduler_lib.store.storage_pipeline import STORAGE_SCOPE
from tests.store.test_changeset_token import (  # noqa: F401  # the fixture, used by name
    ACCOUNT,
    Identity,
    oauth_azurite,
)
from tests.store.test_queue_requests import _message


def _endpoint(azurite: Azurite) -> str:
    return f"https://127.0.0.1:{azurite.queue_port}/{ACCOUNT}"


def _sdk(azurite: Azurite, cert: Path, identity: Identity, name: str) -> QueueClient:
    service = QueueServiceClient(
        _endpoint(azurite), credential=identity, connection_verify=str(cert)
    )
    return service.get_queue_client(
        name,
        message_encode_policy=BinaryBase64EncodePolicy(),
        message_decode_policy=BinaryBase64DecodePolicy(),
    )


def _ours(azurite: Azurite, cert: Path, identity: Identity) -> QueueRequests:
    return QueueRequests(
        _endpoint(azurite),
        identity,
        connections=storage_connections(Settings(), "queue"),
        patience=INTERACTIVE,
        verify=str(cert),
        api_version=QueueServiceClient(_endpoint(azurite), credential=identity).api_version,
    )


def test_a_token_credential_sends_the_messages_as_the_sdk_does(
    oauth_azurite: tuple[Azurite, Path],  # noqa: F811  # the fixture
) -> None:
    azurite, cert = oauth_azurite
    sdk_identity, identity = (
        Identity("https://storage.azure.com"),
        Identity("https://storage.azure.com"),
    )
    sdk = _sdk(azurite, cert, sdk_identity, "tokens")
    sdk.create_queue()
    ours = _ours(azurite, cert, identity)

    sent = ours.send("tokens", b"by token", visibility_timeout=None)
    [taken] = ours.receive("tokens", max_messages=5, visibility_timeout=30)
    receipt, visible_on = ours.update("tokens", taken.id, taken.pop_receipt, visibility_timeout=0)
    [seen] = sdk.receive_messages(max_messages=5, visibility_timeout=30)

    assert (taken.id, taken.body) == (sent.id, "by token")
    assert receipt and visible_on is not None
    assert (seen.id, bytes(seen.content)) == (sent.id, b"by token")
    ours.delete("tokens", seen.id, str(seen.pop_receipt))
    assert sdk.get_queue_properties().approximate_message_count == 0
    assert identity.scopes == sdk_identity.scopes == {STORAGE_SCOPE}


def test_a_token_for_another_audience_is_refused_as_the_sdks_is(
    oauth_azurite: tuple[Azurite, Path],  # noqa: F811  # the fixture
) -> None:
    azurite, cert = oauth_azurite
    _sdk(azurite, cert, Identity("https://storage.azure.com"), "refused").create_queue()
    stranger = Identity("https://vault.azure.net")
    with pytest.raises(HttpResponseError) as theirs:
        _sdk(azurite, cert, stranger, "refused").send_message(b"x")
    with pytest.raises(HttpResponseError) as ours:
        _ours(azurite, cert, stranger).send("refused", b"x", visibility_timeout=None)
    assert type(ours.value) is type(theirs.value)
    assert ours.value.status_code == theirs.value.status_code
    assert ours.value.error_code == theirs.value.error_code  # type: ignore[attr-defined]
    assert ours.value.additional_info == theirs.value.additional_info  # type: ignore[attr-defined]
    assert ours.value.additional_info  # type: ignore[attr-defined]  # the detail Azurite gives
    assert _message(ours.value) == _message(theirs.value)
