"""Jobs whose source only refers to a secret import Disabled, saying which one is missing.

The API requires a Basic password, a pfx or an OAuth secret, and a Storage queue or
Service Bus message without its SAS token or key would go out with the app's identity
instead: none of that is what the source means. So the missing secret is stood in for by a
placeholder that cannot work (the text `MISSING-SECRET`; for a certificate, a self-signed
one that expired in 2000), the job is `Disabled`, and its pause note (api-version
2026-12-01) names each missing secret and where the source refers to it. Nothing runs
half-configured; PATCH the secret, then enable the job.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import NoEncryption, pkcs12
from cryptography.x509.oid import NameOID

from scheduler_lib.domain.definition import PAUSE_NOTE
from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.migrate.found import FoundJob, MissingSecret
from scheduler_lib.migrate.problems import Note, NoteKind, SourceError

PLACEHOLDER = "MISSING-SECRET"
PLACEHOLDER_SUBJECT = "placeholder: the imported job's certificate is missing"
#: The api-version whose pause note says why the job is Disabled.
NOTE_VERSION = "2026-12-01"
_MAX_NOTE = 1024


def placeholder_pfx() -> str:
    """A base64 pfx that opens without a password and is useless: expired in 2000."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PLACEHOLDER_SUBJECT)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(datetime(2000, 1, 1, tzinfo=UTC))
        .not_valid_after(datetime(2000, 1, 2, tzinfo=UTC))
        .sign(key, hashes.SHA256())
    )
    data = pkcs12.serialize_key_and_certificates(None, key, certificate, None, NoEncryption())
    return base64.b64encode(data).decode()


def _node(properties: JSONObject, field: str) -> tuple[JSONObject, str]:
    """The object holding `field` (a `properties.` path) and its last key; objects on the way
    are created (a missing secret's object always exists, it held the reference)."""
    *parents, last = field.removeprefix("properties.").split(".")
    node = properties
    for part in parents:
        key = next((k for k in node if k.lower() == part.lower()), part)
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise SourceError(field, f"{key} holds {type(child).__name__}, not an object")
        node = child
    return node, last


def apply_placeholders(job: FoundJob, properties: JSONObject) -> tuple[JSONObject, list[Note]]:
    """`properties` with placeholders, Disabled and a pause note; the notes saying so."""
    notes = []
    for missing in _with_certificate_partners(job, properties):
        node, key = _node(properties, missing.field)
        if key == "pfx":
            node["pfx"] = placeholder_pfx()
            if node.pop("password", None) is not None:
                notes.append(Note(NoteKind.DROPPED, missing.field.removesuffix("pfx") + "password",
                                  "the password of the missing certificate"))  # fmt: skip
        elif not (key == "password" and str(node.get("type", "")).lower() == "clientcertificate"):
            node[key] = PLACEHOLDER
        reason = f"the source's {missing.source}: {missing.reason}"
        notes.append(Note(NoteKind.MISSING_SECRET, missing.field, reason))
    state = properties.get("state")
    if str(state or "Enabled").lower() != "disabled":
        notes.append(Note(NoteKind.CHANGED, "properties.state", f"{state or 'Enabled'} → Disabled"))
    properties["state"] = "Disabled"
    properties[PAUSE_NOTE] = pause_note(job.missing)
    return properties, notes


def _with_certificate_partners(job: FoundJob, properties: JSONObject) -> list[MissingSecret]:
    """A certificate whose password is missing cannot be stored (the API opens the pfx with
    it), and a placeholder pfx opens without one: either missing makes both placeholders."""
    missing = list(job.missing)
    for secret in job.missing:
        if secret.field.endswith(".authentication.password"):
            node, _ = _node(properties, secret.field)
            if str(node.get("type", "")).lower() == "clientcertificate" and "pfx" in node:
                pfx = secret.field.removesuffix("password") + "pfx"
                missing.append(MissingSecret(pfx, secret.source, "its password is missing"))
    return missing


def pause_note(missing: list[MissingSecret]) -> str:
    fields = "; ".join(secret.sentence() for secret in missing)
    note = (
        f"Imported Disabled: the source does not hold {fields}. "
        "Set it (PATCH the job), then enable the job."
    )
    return note if len(note) <= _MAX_NOTE else note[: _MAX_NOTE - 1] + "…"
