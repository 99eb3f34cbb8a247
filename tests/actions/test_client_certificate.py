"""ClientCertificate: describing pfx files, and real mutual TLS against a local HTTPS server
that requires a client certificate issued by a generated test CA (ssl.CERT_REQUIRED)."""

from __future__ import annotations

import base64
import hashlib
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.actions.client_certificate import describe_certificate
from scheduler_lib.api.errors import http_status
from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from tests.support import certs
from tests.support.http_target import HttpTarget

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")
PFX_PASSWORD = "pfx-pa55word"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> certs.Pki:
    return certs.make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def mtls_target(pki: certs.Pki) -> Iterator[HttpTarget]:
    with HttpTarget(ssl_context=pki.server_context(require_client_cert=True)) as server:
        yield server


def cert_action(uri: str, pfx: str, password: str | None) -> dict[str, Any]:
    auth = {"type": "ClientCertificate", "pfx": pfx, "password": password}
    return {"type": "Https", "request": {"uri": uri, "method": "GET", "authentication": auth}}


def run(action: dict[str, Any], pki: certs.Pki) -> ActionOutcome:
    return run_action(action, CONTEXT, Settings(), verify=pki.ca_file)


# -- describe_certificate -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key_kind", "password", "legacy"),
    [
        pytest.param("ec", PFX_PASSWORD, False, id="ec-aes"),
        pytest.param("rsa", PFX_PASSWORD, True, id="rsa-legacy-3des-like-windows"),
        pytest.param("ec", None, False, id="no-password"),
    ],
)
def test_describe_certificate(key_kind: str, password: str | None, legacy: bool) -> None:
    key = certs.new_key(key_kind)
    cert = certs.issue(certs.name("jobs.contoso.com", "Contoso Ltd", "NL"), key)
    pfx = certs.pfx_b64(key, cert, password, legacy=legacy)
    thumbprint, subject, expiry = describe_certificate(pfx, password)
    assert thumbprint == hashlib.sha1(cert.public_bytes(Encoding.DER)).hexdigest().upper()
    assert subject == "CN=jobs.contoso.com, O=Contoso Ltd, C=NL"
    assert expiry == certs.NOT_AFTER


def test_describe_certificate_with_empty_password_for_an_unprotected_pfx(pki: certs.Pki) -> None:
    assert describe_certificate(pki.client_pfx_b64(None), "").subject.startswith(
        "CN=scheduler-client"
    )


@pytest.mark.parametrize(
    ("pfx", "password", "reason"),
    [
        pytest.param("not base64!", PFX_PASSWORD, "not base64", id="not-base64"),
        pytest.param(
            base64.b64encode(b"garbage").decode(), PFX_PASSWORD, "not a PKCS#12", id="not-pkcs12"
        ),
        pytest.param(None, "wrong-password", "password", id="wrong-password"),
        pytest.param(None, None, "password", id="missing-password"),
    ],
)
def test_describe_certificate_rejects_bad_pfx(
    pki: certs.Pki, pfx: str | None, password: str | None, reason: str
) -> None:
    pfx = pfx or pki.client_pfx_b64(PFX_PASSWORD)
    with pytest.raises(ValidationError, match=reason) as info:
        describe_certificate(pfx, password)
    assert info.value.field == "action.request.authentication.pfx"
    assert http_status(info.value) == 400
    assert PFX_PASSWORD not in str(info.value) and "wrong-password" not in str(info.value)


def test_describe_certificate_names_the_field_it_is_given(pki: certs.Pki) -> None:
    field = "action.errorAction.request.authentication.pfx"
    with pytest.raises(ValidationError) as info:
        describe_certificate(pki.client_pfx_b64(PFX_PASSWORD), "nope", field=field)
    assert info.value.field == field


def test_pfx_without_private_key_is_rejected() -> None:
    from cryptography.hazmat.primitives.serialization import NoEncryption, pkcs12

    key = certs.new_key()
    cert = certs.issue(certs.name("no-key"), key)
    data = pkcs12.serialize_key_and_certificates(b"x", None, cert, None, NoEncryption())
    with pytest.raises(ValidationError, match="private key"):
        describe_certificate(base64.b64encode(data).decode(), None)


# -- mutual TLS -----------------------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["aes-pfx", "legacy-3des-pfx"])
def test_client_certificate_is_presented(
    pki: certs.Pki, mtls_target: HttpTarget, legacy: bool
) -> None:
    action = cert_action(
        mtls_target.url_for("/secure"),
        pki.client_pfx_b64(PFX_PASSWORD, legacy=legacy),
        PFX_PASSWORD,
    )
    outcome = run(action, pki)
    assert outcome.succeeded, outcome.message
    [request] = mtls_target.requests
    assert request.client_certificate_subject == "CN=scheduler-client,O=Scheduler Tests,C=US"
    assert request.header("x-ms-execution-tag") == "tag"
    assert PFX_PASSWORD not in outcome.message


def test_without_client_certificate_the_server_refuses(
    pki: certs.Pki, mtls_target: HttpTarget
) -> None:
    action = {"type": "Https", "request": {"uri": mtls_target.url, "method": "GET"}}
    outcome = run(action, pki)
    assert not outcome.succeeded
    assert "SSLError" in outcome.message
    assert mtls_target.wait_for_tls_failures(1)  # the server saw no certificate (its thread
    assert mtls_target.requests == []  # records that after the client already saw the alert)


def test_certificate_from_another_ca_is_refused(pki: certs.Pki, mtls_target: HttpTarget) -> None:
    key = certs.new_key()
    stranger = certs.issue(certs.name("stranger"), key)
    outcome = run(cert_action(mtls_target.url, certs.pfx_b64(key, stranger, "pw"), "pw"), pki)
    assert not outcome.succeeded
    mtls_target.wait_for_tls_failures(1)  # the server is done with the connection...
    assert mtls_target.requests == []  # ...and recorded no request


def test_untrusted_server_certificate_fails(pki: certs.Pki, mtls_target: HttpTarget) -> None:
    """Without our CA in the bundle (the system CAs only) the server is not trusted."""
    action = cert_action(mtls_target.url, pki.client_pfx_b64(PFX_PASSWORD), PFX_PASSWORD)
    outcome = run_action(action, CONTEXT, Settings())
    assert not outcome.succeeded
    assert "CERTIFICATE_VERIFY_FAILED" in outcome.message
    assert mtls_target.requests == []


def test_wrong_pfx_password_is_a_failed_outcome(pki: certs.Pki, mtls_target: HttpTarget) -> None:
    action = cert_action(mtls_target.url, pki.client_pfx_b64(PFX_PASSWORD), "not-the-password")
    outcome = run(action, pki)
    assert outcome == ActionOutcome(
        False,
        "Http Action - action.request.authentication.pfx: is not a PKCS#12 (pfx) file, "
        "or the password does not open it",
    )
    assert mtls_target.requests == [] and mtls_target.tls_failures == []


def test_key_file_exists_only_while_loading(
    pki: certs.Pki, mtls_target: HttpTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PEM written for `ssl` is encrypted, private, and gone before the request is sent."""
    import ssl

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[tuple[int, int, bytes]] = []
    original = ssl.SSLContext.load_cert_chain

    def spy(self: ssl.SSLContext, certfile: str, keyfile: Any = None, password: Any = None):
        path = Path(certfile)
        seen.append(
            (path.parent.stat().st_mode & 0o777, path.stat().st_mode & 0o777, path.read_bytes())
        )
        return original(self, certfile, keyfile, password)

    monkeypatch.setattr(ssl.SSLContext, "load_cert_chain", spy)
    action = cert_action(mtls_target.url, pki.client_pfx_b64(PFX_PASSWORD), PFX_PASSWORD)
    assert run(action, pki).succeeded
    [(dir_mode, file_mode, pem)] = seen
    assert (dir_mode, file_mode) == (0o700, 0o600)
    assert b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in pem
    assert b"-----BEGIN PRIVATE KEY-----" not in pem
    assert list(tmp_path.iterdir()) == []
