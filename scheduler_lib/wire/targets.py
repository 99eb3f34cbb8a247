"""The syntax of where an action goes: HTTP URIs, storage account and namespace names.

The executor builds connections from these, so what is not a valid name is refused when the
job is stored, naming the field, rather than failing every run (or worse: a namespace of
`127.0.0.1/` made the executor open TLS to 127.0.0.1:5671 and offer the app identity's
token there). Storage accounts and Service Bus namespaces are *names*, checked against
Azure's naming rules; the executor turns them into host names only through the configured
endpoint template / DNS suffix.

URIs: absolute http(s) with a host, a port in 1-65535, no spaces or control characters, and
no user information (`user:password@host`). Credentials in a URI would be stored and
returned by GET in the clear (secrets are write-only), and `requests` would send them as a
Basic header the job never declared: put them in `authentication` (type Basic) instead.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers

#: Azure's rule for storage account names; compared case-insensitively (host names are), so
#: the documentation's own example, `myStorageAccount`, is accepted.
_STORAGE_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$", re.IGNORECASE)
#: Service Bus namespaces: 6-50 letters, digits and hyphens, starting with a letter and
#: ending with a letter or digit; Azure reserves the endings -sb and -mgmt.
_NAMESPACE = re.compile(r"^[a-z][a-z0-9-]{4,48}[a-z0-9]$", re.IGNORECASE)
_HOST = re.compile(r"^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?$", re.IGNORECASE)
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")


def http_uri(value: Any, path: str, *, https_only: bool) -> str:
    """A job's request URI, checked (see the module docstring)."""
    uri = readers.string(value, path, max_length=2048)
    if _UNSAFE.search(uri):
        raise ValidationError(path, "must not contain spaces or control characters")
    try:
        parts = urlsplit(uri)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise ValidationError(path, f"is not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        raise ValidationError(path, "must be an absolute http(s) URL")
    if https_only and scheme != "https":
        raise ValidationError(path, "must be an https URL for an Https action")
    if "@" in parts.netloc:
        raise ValidationError(
            path,
            "must not contain user information ('user:password@'): credentials in a URI "
            "would be stored and shown in the clear; use authentication of type Basic",
        )
    if not host:
        raise ValidationError(path, "must name a host")
    if port == 0:
        raise ValidationError(path, "must have a port between 1 and 65535 when it has one")
    if not parts.netloc.startswith("[") and not _valid_host_name(host):
        raise ValidationError(path, f"has an invalid host name {host!r}")
    return uri


def _valid_host_name(host: str) -> bool:
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return False
    return len(ascii_host) <= 253 and bool(_HOST.match(ascii_host)) and ".." not in ascii_host


def storage_account(value: Any, path: str) -> str:
    """A storage account name (not a URL or host name)."""
    name = readers.string(value, path, max_length=64)
    if not _STORAGE_ACCOUNT.match(name):
        raise ValidationError(
            path,
            "must be a storage account name: 3-24 letters and digits (the name, e.g. "
            "'contosostorage', not a URL or host name)",
        )
    return name


def servicebus_namespace(value: Any, path: str) -> str:
    """A Service Bus namespace name (not its host name)."""
    name = readers.string(value, path, max_length=260)
    if not _NAMESPACE.match(name) or name.lower().endswith(("-sb", "-mgmt")):
        raise ValidationError(
            path,
            "must be a Service Bus namespace name: 6-50 letters, digits and hyphens, starting "
            "with a letter, ending with a letter or digit, not ending in -sb or -mgmt (the "
            "name, e.g. 'contoso', not its host name)",
        )
    return name
