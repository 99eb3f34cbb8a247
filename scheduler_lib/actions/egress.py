"""Egress policy: which addresses an action may open a connection to (SSRF defence).

Anyone who can PUT a job chooses the host the executor connects to, from inside the app's
network, and reads the answer back in the history. Without a policy that reaches the
instance metadata service (169.254.169.254, which hands out the managed identity's tokens),
Azure's WireServer, the app's own ports and anything on its VNet. So:

- Always refused: link-local addresses (169.254.0.0/16, fe80::/10) and known metadata
  endpoints (names such as `metadata.google.internal`, and addresses such as
  `fd00:ec2::254`, `168.63.129.16`, `100.100.100.200`), whatever the allow list says.
- Refused unless allowed: every address that is not globally routable — loopback, RFC 1918,
  ULA fc00::/7, CGNAT 100.64.0.0/10, 0.0.0.0/8, documentation and reserved ranges, multicast.
  `SCHEDULER_EGRESS_ALLOW` lists CIDRs (a private VNet range) and host names (`name`, or
  `.suffix` for every name under it) that may resolve to such addresses. The local host
  allows loopback so that local development reaches local targets; in Azure nothing is
  allowed unless configured.
- IPv4 written in the forms a resolver accepts (`2852039166`, `0xA9FEA9FE`,
  `0251.0376.0251.0376`) is judged as the address it is, and IPv6 that embeds IPv4 as the
  IPv4 address it reaches (`judged_addresses`, the one normaliser every check uses: literals
  when a job is stored, DNS answers when it runs): IPv4-compatible `::a.b.c.d`, IPv4-mapped
  `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and the
  local-use `64:ff9b:1::/48` (whose operator picks the prefix length: every length the /48
  allows is judged), 6to4 `2002::/16` and Teredo `2001::/32` (server and de-obfuscated
  client). A translation form (NAT64, 6to4, Teredo) is judged as itself too: Teredo and the
  local-use NAT64 prefix are not globally routable whatever they embed.

Literal addresses are refused when a job is stored (`check_uri`); names are checked when the
action runs, on the addresses they resolve to. `resolve` resolves once and returns the checked
addresses; the HTTP executor connects to exactly those (no second lookup that a short-TTL
DNS answer could point elsewhere), while TLS still verifies the certificate for the name.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Names of cloud metadata services (compared without a trailing dot, case-insensitively).
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
        "metadata.packet.net",
    }
)
#: Metadata and platform addresses outside link-local (AWS IPv6 IMDS, Azure WireServer,
#: Alibaba Cloud, Oracle Cloud's IPv6 IMDS).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("fd00:ec2::254", "168.63.129.16", "100.100.100.200", "fd00:c1::a9fe:a9fe")
)
_LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
#: RFC 8215's local-use NAT64 prefix: not globally routable (Python 3.11 thinks it is).
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_LABEL = r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?"
_HOST_NAME = re.compile(rf"^\.?({_LABEL}\.)*{_LABEL}$")


class EgressDenied(Exception):
    """The destination is refused by the policy; `message` says which address and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class EgressPolicy:
    """The parsed allow list; see the module docstring."""

    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    names: frozenset[str] = frozenset()  # exact names, or ".suffix"

    @classmethod
    def parse(cls, entries: Iterable[str]) -> EgressPolicy:
        """A policy from `SCHEDULER_EGRESS_ALLOW` entries; ValidationError names a bad one."""
        networks, names = [], set()
        for raw in entries:
            entry = raw.strip().lower().rstrip(".")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            entry = "." + entry[2:] if entry.startswith("*.") else entry
            if not _HOST_NAME.match(entry):
                raise ValidationError(
                    "SCHEDULER_EGRESS_ALLOW", f"{raw!r} is neither a CIDR nor a host name"
                )
            names.add(entry)
        return cls(tuple(networks), frozenset(names))

    def refusal(self, address: IPAddress, host: str = "") -> str | None:
        """Why connecting to `address` (reached through name `host`) is refused, or None.
        Every address `judged_addresses` finds in it must pass."""
        judged = judged_addresses(address)
        for ip in judged:
            where = f"address {address}" + (f" (reaching {ip})" if ip != address else "")
            if ip in METADATA_ADDRESSES:
                return f"{where} is a cloud metadata endpoint"
            if any(ip in net for net in _LINK_LOCAL):
                return f"{where} is link-local (where cloud metadata services live)"
        for ip in judged:
            if not self._reachable(ip) and not self._name_allowed(host):
                where = f"address {address}" + (f" (reaching {ip})" if ip != address else "")
                return (
                    f"{where} is not publicly routable (loopback, private or reserved); allow "
                    "it with SCHEDULER_EGRESS_ALLOW if it is a private target you mean to reach"
                )
        return None

    def _reachable(self, ip: IPAddress) -> bool:
        """Whether `ip` is public, or in an allowed network."""
        if ip.is_global and not ip.is_multicast and ip not in _NAT64_LOCAL:
            return True
        return any(ip.version == net.version and ip in net for net in self.networks)

    def _name_allowed(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        if not name or literal_address(name) is not None:
            return False
        return name in self.names or any(s.startswith(".") and name.endswith(s) for s in self.names)

    def check_host(self, host: str) -> None:
        """Refuse a metadata name, or a literal address (in any spelling, `localhost`
        included) the policy refuses; other host names are left to `resolve`."""
        name = host.lower().rstrip(".")
        if name in METADATA_NAMES:
            raise EgressDenied(f"host '{host}' is a cloud metadata endpoint")
        address = literal_address(name)
        if name == "localhost" or name.endswith(".localhost"):  # loopback by RFC 6761
            address = ipaddress.IPv4Address("127.0.0.1")
        if address is not None:
            reason = self.refusal(address, host)
            if reason:
                raise EgressDenied(reason)

    def resolve(self, host: str, port: int) -> list[str]:
        """The addresses of `host` to connect to, each one checked; raises EgressDenied if
        any is refused (a name that also resolves to an internal address is not trusted),
        or socket.gaierror when the name does not resolve."""
        self.check_host(host)
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        addresses: list[str] = []
        for info in infos:
            text = str(info[4][0])
            address = ipaddress.ip_address(text.split("%", 1)[0])
            reason = self.refusal(address, host)
            if reason:
                raise EgressDenied(f"host '{host}' resolves to {reason.removeprefix('address ')}")
            if text not in addresses:
                addresses.append(text)
        return addresses


@functools.lru_cache(maxsize=16)
def _parsed(entries: tuple[str, ...]) -> EgressPolicy:
    return EgressPolicy.parse(entries)


def policy_for(settings: Settings) -> EgressPolicy:
    """The policy of `settings.egress_allow` (parsed once per distinct list)."""
    return _parsed(tuple(settings.egress_allow))


def judged_addresses(address: IPAddress) -> tuple[IPAddress, ...]:
    """The addresses the policy judges for `address`: the IPv4 addresses an IPv6 address
    embeds (see the module docstring), and the address itself unless it is only another
    spelling of one IPv4 address (compatible, mapped, translated). Every check of the
    policy goes through this one function."""
    if not isinstance(address, ipaddress.IPv6Address):
        return (address,)
    value = int(address)
    high = value >> 32
    if high == 0 and value > 1:  # IPv4-compatible (:: and ::1 are IPv6's own)
        return (ipaddress.IPv4Address(value),)
    if high in (0xFFFF, 0xFFFF_0000):  # IPv4-mapped, IPv4-translated (SIIT)
        return (ipaddress.IPv4Address(value & 0xFFFF_FFFF),)
    embedded: list[ipaddress.IPv4Address] = []
    if address in _NAT64:
        embedded.append(ipaddress.IPv4Address(value & 0xFFFF_FFFF))
    elif address in _NAT64_LOCAL:
        packed = address.packed  # RFC 6052 2.2: bits 64-71 are skipped
        embedded += [
            ipaddress.IPv4Address(packed[6:8] + packed[9:11]),  # /48
            ipaddress.IPv4Address(packed[7:8] + packed[9:12]),  # /56
            ipaddress.IPv4Address(packed[9:13]),  # /64
            ipaddress.IPv4Address(packed[12:16]),  # /96
        ]
    elif address.sixtofour is not None:
        embedded.append(address.sixtofour)
    elif address.teredo is not None:
        embedded += address.teredo  # (server, client), the client de-obfuscated
    return (*dict.fromkeys(embedded), address)


def literal_address(host: str) -> IPAddress | None:
    """The address `host` denotes when it is an IP literal, including the legacy IPv4 forms
    `inet_aton` (and so every resolver) accepts: 1-4 parts, each decimal, octal (leading 0)
    or hex (0x), the last filling the remaining bytes. None for a host name."""
    text = host.strip("[]").rstrip(".").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for part in parts:
        try:
            if part[:2].lower() == "0x":
                values.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                values.append(int(part, 8))
            else:
                values.append(int(part, 10) if part.isdigit() else -1)
        except ValueError:
            return None
        if values[-1] < 0:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for value in head:
        number = number * 256 + value
    return ipaddress.IPv4Address(number * 256 ** (4 - len(head)) + last)
