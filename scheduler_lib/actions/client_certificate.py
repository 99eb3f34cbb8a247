"""The ClientCertificate authentication: read a base64 pfx, describe it, present it over TLS.

`describe_certificate` is pure and is what the API uses to fill `certificateThumbprint`,
`certificateSubjectName` and `certificateExpirationDate` (values Azure Scheduler returned in
place of the write-only pfx). Thumbprint and subject use the Windows forms Azure Scheduler
showed: upper-case SHA-1 hex, and RDNs most-specific first joined by ", ".

`client_ssl_context` gives an `ssl.SSLContext` holding the client key. Python's `ssl` module
loads keys only from files, so the key is written, *encrypted with a random one-time
password*, to a 0600 file in a fresh 0700 directory, loaded, and the directory removed before
the function returns. The plain key never reaches the disk and the file lives for
microseconds, instead of for the whole request as with requests' `cert=(certfile, keyfile)`
(which also cannot take an encrypted key).
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
import shutil
import ssl
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from scheduler_lib.errors import ValidationError

PFX_FIELD = "action.request.authentication.pfx"


class CertificateDescription(NamedTuple):
    thumbprint: str
    subject: str
    expiry: datetime


class ClientCertificate(NamedTuple):
    key: pkcs12.PKCS12PrivateKeyTypes
    certificate: x509.Certificate
    chain: list[x509.Certificate]


def load_pfx(pfx_b64: str, password: str | None, *, field: str = PFX_FIELD) -> ClientCertificate:
    """The key, certificate and chain in a base64 PKCS#12, or a ValidationError on `field`.

    An empty password is tried both as "no password" and as the empty string: Windows exports
    use either, and Azure Scheduler users could not tell which they had.
    """
    try:
        data = base64.b64decode(pfx_b64, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise ValidationError(field, "is not base64-encoded") from None
    attempts = [password.encode()] if password else [None, b""]
    for attempt in attempts:
        try:
            key, cert, chain = pkcs12.load_key_and_certificates(data, attempt)
        except ValueError:
            continue
        if key is None or cert is None:
            raise ValidationError(field, "must contain a certificate and its private key")
        # A key type TLS cannot use (DH, ML-DSA) is refused by ssl when the context loads it.
        usable = cast(Any, key)
        return ClientCertificate(usable, cert, list(chain))
    raise ValidationError(field, "is not a PKCS#12 (pfx) file, or the password does not open it")


def describe_certificate(
    pfx_b64: str, password: str | None, *, field: str = PFX_FIELD
) -> CertificateDescription:
    """(thumbprint, subject, expiry) of the certificate in a base64 pfx; expiry is aware UTC."""
    cert = load_pfx(pfx_b64, password, field=field).certificate
    return CertificateDescription(
        # SHA-1 here is an identifier (the Windows thumbprint), not a security decision.
        thumbprint=cert.fingerprint(hashes.SHA1()).hex().upper(),
        subject=", ".join(rdn.rfc4514_string() for rdn in reversed(cert.subject.rdns)),
        expiry=cert.not_valid_after_utc,
    )


def client_ssl_context(client: ClientCertificate, cafile: str | None) -> ssl.SSLContext:
    """A verifying TLS context (trusting `cafile`, else the system's CAs) that presents
    `client`'s certificate and chain."""
    context = ssl.create_default_context(cafile=cafile)
    one_time_password = secrets.token_urlsafe(32).encode()
    key_pem = client.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time_password),
    )
    certs_pem = b"".join(
        c.public_bytes(serialization.Encoding.PEM) for c in [client.certificate, *client.chain]
    )
    directory = Path(tempfile.mkdtemp(prefix="scheduler-cert-"))  # created 0700
    try:
        path = directory / "client.pem"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(key_pem + certs_pem)
        context.load_cert_chain(path, password=one_time_password)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return context
