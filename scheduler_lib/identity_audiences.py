"""`SCHEDULER_IDENTITY_AUDIENCES`: the audiences the app's managed identity may get tokens for
on behalf of a job (`authentication.type: ManagedServiceIdentity`, api-version 2026-12-01),
and the hosts each audience's tokens may be sent to.

Any API key holder writes jobs, and the app's identity holds roles on the app's own storage,
Key Vault and more. Without this list a job with audience `https://storage.azure.com` and a
URI on the caller's own host would hand the caller a token that reads the scheduler's
storage. So the type is closed by default: no audience is allowed until the operator lists
it, and its tokens then go only to the hosts listed with it. There is no wildcard audience,
so the audiences of the app's storage, management or vault are never allowed unless listed.

Syntax: entries separated by `;`, each `<audience>=<host>[,<host>...]` (spaces around parts
are ignored; an empty value allows nothing), e.g.

    api://orders=orders.example.com;api://billing=*.billing.example.com,billing.example.com:8443

- `<audience>` as jobs write it (an absolute URI or an application id), compared without
  regard to case but otherwise exactly: `https://x` and `https://x/` are two audiences.
- `<host>`: a host name, an IP address (`10.0.0.4`, `[fd00::4]`) or `*.<suffix>` (every name
  under the suffix, not the suffix itself); `:<port>` limits it to that port, otherwise any
  port. Names compare lower-cased, without a trailing dot and in their IDNA form: the form
  `requests` connects to (`idna`, UTS 46), so that no spelling of a URI's host reaches a
  host other than the one compared.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

from scheduler_lib.errors import ValidationError

SETTING = "SCHEDULER_IDENTITY_AUDIENCES"
_LABEL = r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?"
_NAME = re.compile(rf"^({_LABEL}\.)*{_LABEL}$")
_SYNTAX = "write <audience>=<host>[,<host>...], entries separated by ';'"


def host_key(host: str) -> str | None:
    """`host` as compared: an IP address in its canonical form; a name lower-cased, without a
    trailing dot, non-ASCII ones IDNA-encoded as `requests` encodes them. None: not a host."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    name = text[:-1] if text.endswith(".") else text
    if not name.isascii():
        try:
            name = idna.encode(name, uts46=True).decode("ascii")
        except UnicodeError:  # idna.IDNAError is one
            return None
    name = name.lower()
    return name if len(name) <= 253 and _NAME.match(name) else None


@dataclass(frozen=True)
class AllowedHost:
    """One host an audience's tokens may go to; `name` is a `host_key`, or `.suffix`."""

    name: str
    port: int | None = None

    def matches(self, host: str, port: int) -> bool:
        """Whether a request to `host` (a `host_key`) on `port` is to this host."""
        if self.port is not None and port != self.port:
            return False
        return host.endswith(self.name) if self.name.startswith(".") else host == self.name

    def __str__(self) -> str:
        name = "*" + self.name if self.name.startswith(".") else self.name
        name = f"[{name}]" if ":" in name else name
        return name if self.port is None else f"{name}:{self.port}"


@dataclass(frozen=True)
class IdentityAudiences:
    """The parsed setting: (audience, its hosts) pairs, in the order given."""

    entries: tuple[tuple[str, tuple[AllowedHost, ...]], ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> IdentityAudiences:
        """The setting's value parsed; ValidationError names the setting and the bad entry."""
        entries: list[tuple[str, tuple[AllowedHost, ...]]] = []
        for raw in (text or "").split(";"):
            if not raw.strip():
                continue
            audience, equals, hosts = (part.strip() for part in raw.rpartition("="))
            if not equals or not audience:
                what = "names no audience" if equals else "has no '='"
                raise ValidationError(SETTING, f"{raw.strip()!r} {what}: {_SYNTAX}")
            if any(c.isspace() for c in audience) or audience.rstrip("/").endswith("/.default"):
                raise ValidationError(
                    SETTING,
                    f"{audience!r} is not an audience as a job writes it (a URI or an "
                    "application id, without spaces and without '/.default')",
                )
            if any(audience.casefold() == seen.casefold() for seen, _ in entries):
                raise ValidationError(SETTING, f"lists audience {audience!r} twice")
            allowed = tuple(_allowed_host(h, audience) for h in hosts.split(",") if h.strip())
            if not allowed:
                raise ValidationError(SETTING, f"audience {audience!r} names no host: {_SYNTAX}")
            entries.append((audience, allowed))
        return cls(tuple(entries))

    @property
    def audiences(self) -> tuple[str, ...]:
        return tuple(audience for audience, _ in self.entries)

    def hosts_for(self, audience: str) -> tuple[AllowedHost, ...] | None:
        """The hosts `audience`'s tokens may go to; None when it is not allowed at all."""
        key = audience.strip().casefold()
        return next((hosts for name, hosts in self.entries if name.casefold() == key), None)

    def allows(self, audience: str, host: str, port: int) -> bool:
        """Whether a token for `audience` may be sent to `host` on `port`."""
        key = host_key(host)
        hosts = self.hosts_for(audience) or ()
        return key is not None and any(allowed.matches(key, port) for allowed in hosts)


#: The default: no audience, so `ManagedServiceIdentity` jobs are refused.
NO_AUDIENCES = IdentityAudiences()


def _allowed_host(raw: str, audience: str) -> AllowedHost:
    text = raw.strip()
    wildcard = text.startswith("*.")
    bad = ValidationError(
        SETTING,
        f"{text!r} (a host of audience {audience!r}) is not a host name, an IP address or "
        "*.<suffix>, with an optional :<port>",
    )
    try:
        parts = urlsplit("//" + (text[2:] if wildcard else text))
        port = parts.port
    except ValueError:
        raise bad from None
    if "/" in text or "@" in text or parts.query or parts.fragment or port == 0:
        raise bad
    name = host_key(parts.hostname or "")
    if name is None or (wildcard and _is_address(name)):
        raise bad
    return AllowedHost("." + name if wildcard else name, port)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
