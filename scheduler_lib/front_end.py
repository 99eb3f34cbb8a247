"""Who the client is, and which forwarded headers to believe: the one place that decides, for
the limit on wrong keys (`api/auth_limit`) and for the dashboard's Origin check (`csrf`).
It sits beside `config`, below both front ends, because both ask it and neither may import
the other; it reads settings and the ASGI scope only, no use case.

Any client can send `X-Forwarded-For`, `X-Forwarded-Host` or `X-Forwarded-Proto`; such a header
is only as good as whoever set it. So the app believes them from a hop it knows, never else:

- **A trusted proxy.** The socket peer lies in `SCHEDULER_TRUSTED_PROXIES` (CIDRs of reverse
  proxies the operator runs in front of the app; empty by default, so a developer's app
  believes nothing). Its `X-Forwarded-Host` names the site the browser asked for, and
  `X-Forwarded-For` is read from the right, past every entry that is itself a trusted proxy:
  the first other entry is the client. What lies further left the client may have written.
- **App Service.** In Azure the Python worker has no socket peer: the Functions host passes
  each request on (`AsgiFunctionApp` builds its scope without `client`), and every request
  reached the host through App Service's front end. When the platform says so
  (`WEBSITE_HOSTNAME`, which App Service sets and an app setting cannot fake a request into),
  the client is the front end's `X-Client-IP`, the address it took the connection from
  (it writes the header itself). From there the same right-to-left walk continues when that
  address is a trusted proxy (Front Door, Application Gateway). The front end's
  `X-Forwarded-Host` is not believed: the site is `https://` + `WEBSITE_HOSTNAME`.
- **Neither.** No peer and no platform: the client is `unknown`, one address for all.

IPv6 clients count per /64: one host usually holds a whole /64, so counting single addresses
would let it change address at every request.

A browser's `Origin` names this site when it is the public URL (`SCHEDULER_PUBLIC_URL`, for a
proxy or a custom domain), `https://` + `WEBSITE_HOSTNAME`, or carries the host the request
was sent to (`Host`, or a trusted proxy's `X-Forwarded-Host`): a page of another site cannot
make the browser send a `Host` other than ours, nor add `X-Forwarded-Host` without a CORS
preflight this app never grants.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN = "unknown"
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class FrontEnd:
    """What stands between the browser or API client and the app, from the settings."""

    proxies: tuple[Network, ...] = ()
    #: Origins (`scheme://host[:port]`) that are this site whatever the request's Host says.
    origins: frozenset[str] = frozenset()
    #: On App Service: a request without a socket peer came through its front end.
    on_app_service: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> FrontEnd:
        """The settings, checked: a malformed one stops the app, naming it."""
        proxies = tuple(_network(entry) for entry in settings.trusted_proxies)
        origins = set()
        if settings.public_url:
            origin = origin_of(settings.public_url)
            if origin is None:
                raise ValidationError(
                    "SCHEDULER_PUBLIC_URL", "must be an http(s) URL such as https://host"
                )
            origins.add(origin)
        if settings.platform_hostname:
            origins.add(f"https://{settings.platform_hostname.lower()}")
        return cls(proxies, frozenset(origins), settings.platform_hostname is not None)

    def trusted(self, address: IPAddress | None) -> bool:
        return address is not None and any(address in network for network in self.proxies)

    def _peer(self, scope: Mapping[str, Any]) -> tuple[IPAddress | None, bool]:
        """The hop the request came from (None if not an address) and whether it is a
        trusted proxy (whose forwarded headers count)."""
        peer = scope.get("client")
        if peer:
            address = _address(str(peer[0]))
            return address, self.trusted(address)
        if self.on_app_service:
            address = _address(_header(scope, "x-client-ip"))
            return address, self.trusted(address)
        return None, False

    def client_address(self, scope: Mapping[str, Any]) -> str:
        """The client a request comes from, as the key its limits count under (`UNKNOWN`
        when nothing trustworthy says)."""
        hop, trusted = self._peer(scope)
        if hop is None:
            return str(scope["client"][0]) if scope.get("client") else UNKNOWN
        if trusted:
            for entry in reversed(_header(scope, "x-forwarded-for").split(",")):
                address = _address(entry)
                if address is None:
                    break  # garbage or an obfuscated hop: the last good one is the client
                hop = address
                if not self.trusted(address):
                    break
        if isinstance(hop, ipaddress.IPv6Address) and hop.ipv4_mapped is None:
            return str(ipaddress.IPv6Network((hop, 64), strict=False))
        return str(hop.ipv4_mapped if isinstance(hop, ipaddress.IPv6Address) else hop)

    def is_this_site(self, origin: str, scope: Mapping[str, Any]) -> bool:
        """Whether a browser's `Origin` header names this site (see the module docstring)."""
        presented = origin_of(origin)
        if presented is None:
            return False  # "null" (a sandboxed frame, a file), or not a URL
        if presented in self.origins:
            return True
        host = _header(scope, "host")
        if self._peer(scope)[1] and scope.get("client"):  # a trusted proxy, not the platform
            forwarded = _header(scope, "x-forwarded-host").split(",")[-1].strip()
            host = forwarded or host
        return bool(host) and urlsplit(presented).netloc == host.strip().lower()


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` of an http(s) URL, lower-case and without a default port, as a
    browser writes `Origin`; None for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in _DEFAULT_PORTS or not host or parts.username or parts.password:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + (f":{port}" if port and port != _DEFAULT_PORTS[scheme] else "")


def _network(entry: str) -> Network:
    try:
        return ipaddress.ip_network(entry.strip(), strict=False)
    except ValueError:
        raise ValidationError(
            "SCHEDULER_TRUSTED_PROXIES", f"{entry!r} is not an IP address or CIDR range"
        ) from None


def _address(text: str) -> IPAddress | None:
    """An address from a header entry: `1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:80`."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _header(scope: Mapping[str, Any], name: str) -> str:
    """A request header's values (all of them, comma-joined, as HTTP reads repeated ones)."""
    wanted = name.encode()
    values: Iterable[bytes] = (v for k, v in scope.get("headers", ()) if k.lower() == wanted)
    return ", ".join(v.decode("latin-1") for v in values)
