"""Transactions with a token credential (the app's managed identity in Azure): azure-core's
`BearerTokenCredentialPolicy` asks for the scope the SDK asks for, and an Azurite of its own,
over HTTPS with OAuth on (`--oauth basic`: it checks a token's audience, issuer and
lifetime, not its signature), accepts the transaction as it accepts the SDK's.

The token is made here (an unsigned JWT for the storage audience), standing in for what
Microsoft Entra ID issues; the certificate is a self-signed one for 127.0.0.1.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from devtools.azurite import Azurite, start_azurite
from scheduler_lib.config import Settings
from scheduler_lib.storage_account import storage_connections
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store.changeset import STORAGE_SCOPE, Changesets
from scheduler_lib.store.entity_requests import EntityRequests

ACCOUNT = "devstoreaccount1"


class Identity:
    """A token credential issuing tokens for `audience`, remembering the scopes asked for."""

    def __init__(self, audience: str) -> None:
        self.audience = audience
        self.scopes: set[str] = set()

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.update(scopes)
        now = int(time.time())
        claims = {
            "aud": self.audience,
            "iss": "https://sts.windows.net/ab1f708d-50f6-404c-a006-d71b2ac7a606/",
            "iat": now - 60,
            "nbf": now - 60,
            "exp": now + 3600,
            "oid": "00000000-0000-0000-0000-000000000001",
        }
        parts = [{"alg": "RS256", "typ": "JWT"}, claims]
        encoded = [base64.urlsafe_b64encode(json.dumps(p).encode()).rstrip(b"=") for p in parts]
        return AccessToken(b".".join([*encoded, b"c2ln"]).decode(), now + 3600)


def _certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert, key_file = directory / "cert.pem", directory / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key_file


@pytest.fixture(scope="module")
def oauth_azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Azurite, Path]]:
    cert, key = _certificate(tmp_path_factory.mktemp("tls"))
    server = start_azurite(options=("--cert", str(cert), "--key", str(key), "--oauth", "basic"))
    try:
        yield server, cert
    finally:
        server.stop()


def _endpoint(azurite: Azurite) -> str:
    return f"https://127.0.0.1:{azurite.table_port}/{ACCOUNT}"


def _changesets(azurite: Azurite, cert: Path, identity: Identity) -> Changesets:
    connections = storage_connections(Settings())
    return Changesets(
        _endpoint(azurite),
        identity,
        connections=connections,
        patience=INTERACTIVE,
        verify=str(cert),
    )


def test_a_token_credential_sends_the_transaction_as_the_sdk_does(
    oauth_azurite: tuple[Azurite, Path],
) -> None:
    azurite, cert = oauth_azurite
    sdk_identity, identity = (
        Identity("https://storage.azure.com"),
        Identity("https://storage.azure.com"),
    )
    service = TableServiceClient(
        _endpoint(azurite), credential=sdk_identity, connection_verify=str(cert)
    )
    table = service.create_table("tokens")
    operations = [("upsert", {"PartitionKey": "p", "RowKey": key, "N": 1}) for key in ("a", "b")]

    results = _changesets(azurite, cert, identity).submit("tokens", operations)

    assert [r["etag"] for r in results] == [
        table.get_entity("p", k).metadata["etag"] for k in ("a", "b")
    ]
    assert sorted(table.submit_transaction(operations)[0]) == sorted(results[0])
    assert identity.scopes == sdk_identity.scopes == {STORAGE_SCOPE}


def test_a_token_for_another_audience_is_refused_as_the_sdks_is(
    oauth_azurite: tuple[Azurite, Path],
) -> None:
    azurite, cert = oauth_azurite
    stranger = Identity("https://vault.azure.net")
    service = TableServiceClient(
        _endpoint(azurite), credential=stranger, connection_verify=str(cert)
    )
    operations = [("upsert", {"PartitionKey": "p", "RowKey": "a"})]
    with pytest.raises(HttpResponseError) as theirs:
        service.get_table_client("tokens").submit_transaction(operations)
    with pytest.raises(HttpResponseError) as ours:
        _changesets(azurite, cert, stranger).submit("tokens", operations)
    assert type(ours.value) is type(theirs.value)
    assert ours.value.status_code == theirs.value.status_code
    assert getattr(ours.value, "error_code", None) == getattr(theirs.value, "error_code", None)


def test_point_requests_carry_the_token_as_the_sdks_do(
    oauth_azurite: tuple[Azurite, Path],
) -> None:
    """`store/entity_requests.py` sends on the same pipeline: a token for storage is taken,
    one for another audience is refused with the SDK's error."""
    azurite, cert = oauth_azurite
    identity = Identity("https://storage.azure.com")
    service = TableServiceClient(
        _endpoint(azurite), credential=identity, connection_verify=str(cert)
    )
    service.create_table_if_not_exists("points")
    entities = EntityRequests(_changesets(azurite, cert, identity))

    written = entities.write("points", "upsert", {"PartitionKey": "p", "RowKey": "a", "N": 1}, {})

    read = entities.get("points", "p", "a", None)
    assert read["N"] == 1 and read.metadata["etag"] == written["etag"]
    assert (
        service.get_table_client("points").get_entity("p", "a").metadata["etag"] == written["etag"]
    )
    stranger = EntityRequests(_changesets(azurite, cert, Identity("https://vault.azure.net")))
    with pytest.raises(HttpResponseError) as ours:
        stranger.get("points", "p", "a", None)
    with pytest.raises(HttpResponseError) as theirs:
        TableServiceClient(
            _endpoint(azurite),
            credential=Identity("https://vault.azure.net"),
            connection_verify=str(cert),
        ).get_table_client("points").get_entity("p", "a")
    assert (type(ours.value), ours.value.status_code) == (
        type(theirs.value),
        theirs.value.status_code,
    )


class Expiring(Identity):
    """`Identity` whose tokens say they expire `lifetimes[n]` seconds after the n-th is
    issued (each still valid for Azurite: an hour by its own claims)."""

    def __init__(self, audience: str, lifetimes: list[int]) -> None:
        super().__init__(audience)
        self.lifetimes = lifetimes
        self.issued = 0

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        token = super().get_token(*scopes, **kwargs)
        lifetime = self.lifetimes[min(self.issued, len(self.lifetimes) - 1)]
        self.issued += 1
        return AccessToken(token.token, int(time.time()) + lifetime)


def test_a_token_is_reused_until_near_its_expiry(oauth_azurite: tuple[Azurite, Path]) -> None:
    """As `BearerTokenCredentialPolicy` does: one token for every request while it has more
    than azure-core's refresh window (5 minutes, less up to a minute of jitter) to live; a
    new one asked for when it has less."""
    azurite, cert = oauth_azurite
    TableServiceClient(
        _endpoint(azurite), credential=Identity("https://storage.azure.com"),
        connection_verify=str(cert),
    ).create_table_if_not_exists("expiring")  # fmt: skip
    lasting = Expiring("https://storage.azure.com", [3600])
    entities = EntityRequests(_changesets(azurite, cert, lasting))
    for n in range(3):
        entities.write("expiring", "upsert", {"PartitionKey": "p", "RowKey": "a", "N": n}, {})
    assert lasting.issued == 1

    expiring = Expiring("https://storage.azure.com", [120, 3600])
    entities = EntityRequests(_changesets(azurite, cert, expiring))
    entities.get("expiring", "p", "a", None)
    assert expiring.issued == 1
    entities.get("expiring", "p", "a", None)  # the first token has 2 minutes left: renewed
    assert expiring.issued == 2
    assert entities.get("expiring", "p", "a", None)["N"] == 2
    assert expiring.issued == 2
