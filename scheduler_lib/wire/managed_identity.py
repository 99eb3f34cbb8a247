"""Extension 7 (2026-12-01): `authentication.type: ManagedServiceIdentity`, validated here;
the token is obtained by `actions/identity.py` (the app's own identity, no secret in the job).

The one field is `audience`: what the token is for, as Entra ID names a resource. It is an
absolute URI (`https://management.azure.com`, `api://my-api`) or an application (client) id,
a GUID. The token is asked for `<audience>/.default`, so a trailing `/.default` given here is
refused rather than doubled.
"""

from __future__ import annotations

import re
import uuid
from typing import Any
from urllib.parse import urlsplit

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.shapes import JSONObject

TYPE = "ManagedServiceIdentity"
FIELDS = ("audience",)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")


def check(auth: JSONObject, path: str) -> None:
    """`audience` is required and a URI or an application id."""
    where = readers.join(path, "audience")
    if auth.get("audience") is None:
        raise ValidationError(where, "is required for ManagedServiceIdentity")
    auth["audience"] = audience(auth["audience"], where)


def audience(value: Any, path: str) -> str:
    text = readers.string(value, path, max_length=2048).strip()
    if _is_guid(text):
        return text
    parts = urlsplit(text)
    if not (_SCHEME.match(parts.scheme or "") and (parts.netloc or parts.path)) or " " in text:
        raise ValidationError(
            path,
            f"{text!r} is neither an absolute URI (https://..., api://...) nor an "
            "application id (a GUID)",
        )
    if text.rstrip("/").endswith("/.default"):
        raise ValidationError(path, "names the resource only: '/.default' is added when asking")
    return text


def _is_guid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36
