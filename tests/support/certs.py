"""A throwaway PKI for TLS tests: a CA, a server certificate for 127.0.0.1/localhost, and
client certificates, made with `cryptography` in a directory the test owns.

Use it with `HttpTarget(ssl_context=pki.server_context())` for an HTTPS target that demands a
client certificate, `pki.ca_file` as the CA bundle the client trusts, and
`pki.client_pfx_b64(password)` as the pfx of a ClientCertificate job.
"""

from __future__ import annotations

import base64
import ipaddress
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
#: Fixed validity, so tests can assert the expiry they read back.
NOT_BEFORE = datetime(2024, 1, 1, tzinfo=UTC)
NOT_AFTER = datetime(2099, 12, 31, 23, 59, 59, tzinfo=UTC)


def new_key(kind: str = "ec") -> PrivateKey:
    """An EC P-256 key (fast) or an RSA 2048 key (what Windows-made pfx files usually hold)."""
    if kind == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def name(common_name: str, organization: str = "Scheduler Tests", country: str = "US") -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, country),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def issue(
    subject: x509.Name,
    key: PrivateKey,
    *,
    issuer: tuple[x509.Certificate, PrivateKey] | None = None,
    ca: bool = False,
    server: bool = False,
    not_after: datetime = NOT_AFTER,
) -> x509.Certificate:
    """A certificate for `key`, signed by `issuer` (self-signed when None)."""
    issuer_name, signing_key = (issuer[0].subject, issuer[1]) if issuer else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        usage = x509.KeyUsage(
            digital_signature=False,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=True,
            encipher_only=False,
            decipher_only=False,
        )
        builder = builder.add_extension(usage, critical=True)
    else:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    if issuer:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signing_key.public_key()),
            critical=False,
        )
    builder = builder.add_extension(
        x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
    )
    return builder.sign(signing_key, hashes.SHA256())


def pfx_b64(
    key: PrivateKey,
    cert: x509.Certificate,
    password: str | None,
    *,
    chain: list[x509.Certificate] | None = None,
    legacy: bool = False,
) -> str:
    """A base64 PKCS#12 like the `pfx` of a job; `legacy` uses the 3DES/SHA-1 encryption that
    older Windows exports (and so many Azure Scheduler users' pfx files) have."""
    if password is None:
        encryption: serialization.KeySerializationEncryption = serialization.NoEncryption()
    elif legacy:
        encryption = (
            serialization.PrivateFormat.PKCS12.encryption_builder()
            .kdf_rounds(2048)
            .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
            .hmac_hash(hashes.SHA1())
            .build(password.encode())
        )
    else:
        encryption = serialization.BestAvailableEncryption(password.encode())
    data = pkcs12.serialize_key_and_certificates(b"scheduler", key, cert, chain, encryption)
    return base64.b64encode(data).decode()


@dataclass(frozen=True)
class Pki:
    """A CA, a server certificate signed by it, and a client certificate signed by it."""

    directory: Path
    ca_cert: x509.Certificate
    ca_key: PrivateKey
    client_cert: x509.Certificate
    client_key: PrivateKey

    @property
    def ca_file(self) -> str:
        """PEM of the CA: the bundle clients pass as `verify`."""
        return str(self.directory / "ca.pem")

    @property
    def server_cert_file(self) -> str:
        return str(self.directory / "server.pem")

    @property
    def server_key_file(self) -> str:
        return str(self.directory / "server.key")

    def server_context(self, *, require_client_cert: bool = True) -> ssl.SSLContext:
        """A server TLS context; with `require_client_cert`, handshakes without a client
        certificate issued by this CA fail (ssl.CERT_REQUIRED)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert_file, self.server_key_file)
        if require_client_cert:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(self.ca_file)
        return context

    def client_pfx_b64(self, password: str | None, *, legacy: bool = False) -> str:
        return pfx_b64(self.client_key, self.client_cert, password, legacy=legacy)


def make_pki(directory: Path, *, client_common_name: str = "scheduler-client") -> Pki:
    """Generate the PKI and write the PEM files servers and clients load into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = new_key()
    ca_cert = issue(name("Scheduler Test CA"), ca_key, ca=True)
    server_key = new_key()
    server_cert = issue(name("localhost"), server_key, issuer=(ca_cert, ca_key), server=True)
    client_key = new_key()
    client_cert = issue(name(client_common_name), client_key, issuer=(ca_cert, ca_key))
    pem = serialization.Encoding.PEM
    (directory / "ca.pem").write_bytes(ca_cert.public_bytes(pem))
    (directory / "server.pem").write_bytes(server_cert.public_bytes(pem))
    (directory / "server.key").write_bytes(
        server_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return Pki(directory, ca_cert, ca_key, client_cert, client_key)
