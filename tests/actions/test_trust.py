"""The CA bundle an HTTPS attempt trusts is loaded once per version of its file
(`actions/trust.py`), not for every attempt, and still decides whom an attempt trusts: real
HTTPS targets on local servers with certificates from generated test CAs, real `run_action`.
"""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.config import Settings
from tests.support import certs
from tests.support.http_target import HttpTarget

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")
SETTINGS = Settings()


@pytest.fixture(scope="module")
def pkis(tmp_path_factory: pytest.TempPathFactory) -> tuple[certs.Pki, certs.Pki]:
    return certs.make_pki(tmp_path_factory.mktemp("a")), certs.make_pki(
        tmp_path_factory.mktemp("b")
    )


@pytest.fixture
def targets(pkis: tuple[certs.Pki, certs.Pki]) -> Iterator[tuple[HttpTarget, HttpTarget]]:
    a, b = (pki.server_context(require_client_cert=False) for pki in pkis)
    with HttpTarget(ssl_context=a) as first, HttpTarget(ssl_context=b) as second:
        yield first, second


def _get(target: HttpTarget, verify: bool | str) -> ActionOutcome:
    action = {"type": "Https", "request": {"uri": target.url, "method": "GET"}}
    return run_action(action, CONTEXT, SETTINGS, verify=verify)


def _loads(action: Callable[[], Any]) -> int:
    """How many times `action` loads CA certificates into a TLS context (the C call)."""
    loads = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal loads
        if event == "c_call" and getattr(arg, "__name__", "") == "load_verify_locations":
            loads += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return loads


def test_the_ca_bundle_is_loaded_once_not_per_attempt(
    pkis: tuple[certs.Pki, certs.Pki], targets: tuple[HttpTarget, HttpTarget]
) -> None:
    """Each attempt has its own session and connection (and so its own handshake), but the
    bundle's certificates are read once: it was once per attempt (~10-30 ms of CPU each
    with certifi's bundle)."""
    target, _ = targets
    assert _get(target, pkis[0].ca_file).succeeded
    outcomes: list[ActionOutcome] = []

    assert _loads(lambda: outcomes.append(_get(target, pkis[0].ca_file))) == 0
    assert outcomes[0].succeeded
    assert len(target.requests) == 2  # both attempts reached it


def test_a_bundle_replaced_at_its_path_is_trusted_as_it_now_is(
    pkis: tuple[certs.Pki, certs.Pki], targets: tuple[HttpTarget, HttpTarget], tmp_path: Path
) -> None:
    """The bundle the operator (or a test) replaces is read again: the CA it dropped is no
    longer trusted, the one it added is, from the next attempt on."""
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(Path(pkis[0].ca_file).read_bytes())
    first, second = targets
    assert _get(first, str(bundle)).succeeded
    refused = _get(second, str(bundle))
    assert not refused.succeeded and "CERTIFICATE_VERIFY_FAILED" in refused.message

    replacement = tmp_path / "new.pem"
    replacement.write_bytes(Path(pkis[1].ca_file).read_bytes())
    os.replace(replacement, bundle)  # as a package manager or a deployment replaces it

    assert _get(second, str(bundle)).succeeded
    dropped = _get(first, str(bundle))
    assert not dropped.succeeded and "CERTIFICATE_VERIFY_FAILED" in dropped.message


def test_the_default_bundle_still_verifies_the_target(
    targets: tuple[HttpTarget, HttpTarget],
) -> None:
    """With the default trust (certifi's bundle, loaded once) a certificate from an unknown
    CA is refused, before and after the bundle was loaded, and nothing reaches the target."""
    target, _ = targets
    for _ in range(2):
        outcome = _get(target, True)
        assert not outcome.succeeded and "CERTIFICATE_VERIFY_FAILED" in outcome.message
    assert target.requests == []


def test_a_host_name_the_certificate_does_not_name_is_refused(
    pkis: tuple[certs.Pki, certs.Pki], tmp_path: Path
) -> None:
    """The shared context still checks the host name: a certificate for another name, from
    a trusted CA, is refused (the shared context was loaded by a valid target first)."""
    key = certs.new_key()
    other = certs.issue(
        certs.name("elsewhere.example"), key, issuer=(pkis[0].ca_cert, pkis[0].ca_key)
    )
    cert_file, key_file = tmp_path / "other.pem", tmp_path / "other.key"
    pem = serialization.Encoding.PEM
    cert_file.write_bytes(other.public_bytes(pem))
    key_file.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    with HttpTarget(ssl_context=pkis[0].server_context(require_client_cert=False)) as good:
        assert _get(good, pkis[0].ca_file).succeeded
    with HttpTarget(ssl_context=context) as wrong_name:
        outcome = _get(wrong_name, pkis[0].ca_file)
    assert not outcome.succeeded and "CERTIFICATE_VERIFY_FAILED" in outcome.message
    assert wrong_name.requests == []
