"""The egress policy (scheduler_lib/actions/egress.py): which addresses actions may reach,
judged on literal addresses in every spelling, and at run time on what a name resolves to,
connecting to the address that was checked. HTTP targets are real local servers."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.actions import run_action
from scheduler_lib.actions.egress import (
    EgressDenied,
    EgressPolicy,
    judged_addresses,
    literal_address,
    policy_for,
)
from scheduler_lib.actions.service_bus import ServiceBusTarget, open_sender
from scheduler_lib.config import LOCAL_EGRESS_ALLOW, Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.runtime import Runtime
from tests.actions.test_http import CONTEXT
from tests.execution.harness import T0, Driver, make_job
from tests.support.certs import make_pki
from tests.support.http_target import HttpTarget
from tests.test_config import QUEUES

LOCAL = EgressPolicy.parse(LOCAL_EGRESS_ALLOW)
AZURE = EgressPolicy.parse(())  # what a deployment allows unless configured

ALWAYS_REFUSED = [
    "169.254.169.254",
    "2852039166",
    "0xA9FEA9FE",
    "0xa9.0xfe.0xa9.0xfe",
    "0251.0376.0251.0376",
    "169.254.43518",
    "0251.0xfe.43518",
    "169.254.169.254.",
    "[fd00:ec2::254]",
    "[::ffff:169.254.169.254]",
    "[::ffff:a9fe:a9fe]",
    "[64:ff9b::a9fe:a9fe]",
    "[fe80::1]",
    "[2002:a9fe:a9fe::1]",
    "168.63.129.16",
    "100.100.100.200",
    "metadata.google.internal",
    "METADATA.AZURE.COM.",
    "metadata",
    "169.254.0.1",
]
#: Every way an IPv6 address embeds an IPv4 address, each written with the metadata address
#: 169.254.169.254 and with the loopback address 127.0.0.2 (RFC 4291 2.5.5, RFC 2765, RFC 6052
#: with the well-known and the local-use prefix of RFC 8215 at each length a /48 allows,
#: RFC 3056, RFC 4380 with its client address obfuscated).
EMBEDDED = {
    "ipv4-compatible": ("::a9fe:a9fe", "::7f00:2"),
    "ipv4-compatible-dotted": ("::169.254.169.254", "::127.0.0.2"),
    "ipv4-mapped": ("::ffff:a9fe:a9fe", "::ffff:7f00:2"),
    "ipv4-translated": ("::ffff:0:a9fe:a9fe", "::ffff:0:7f00:2"),
    "nat64-well-known": ("64:ff9b::a9fe:a9fe", "64:ff9b::7f00:2"),
    "nat64-local-96": ("64:ff9b:1::a9fe:a9fe", "64:ff9b:1::7f00:2"),
    "nat64-local-64": ("64:ff9b:1:0:a9:fea9:fe00:0", "64:ff9b:1:0:7f:0:200:0"),
    "nat64-local-56": ("64:ff9b:1:a9:fe:a9fe::", "64:ff9b:1:7f:0:2::"),
    "nat64-local-48": ("64:ff9b:1:a9fe:a9:fe00::", "64:ff9b:1:7f00:0:200::"),
    "6to4": ("2002:a9fe:a9fe::1", "2002:7f00:2::1"),
    "teredo": ("2001:0:4136:e378:8000:63bf:5601:5601", "2001:0:4136:e378:8000:63bf:80ff:fffd"),
}
EMBEDDED_FORMS = pytest.mark.parametrize(
    ("metadata", "loopback"), list(EMBEDDED.values()), ids=list(EMBEDDED)
)
PRIVATE = [
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "100.64.0.1",
    "0.0.0.0",
    "0",
    "[::]",
    "[fc00::1]",
    "[fd12:3456::1]",
    "127.0.0.1",
    "2130706433",
    "0x7f000001",
    "017700000001",
    "127.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:10.0.0.1]",
    "224.0.0.1",
    "240.0.0.1",
    "198.18.0.1",
]


@pytest.mark.parametrize("host", ALWAYS_REFUSED)
def test_metadata_and_link_local_are_refused_whatever_is_allowed(host: str) -> None:
    everything = EgressPolicy.parse(["0.0.0.0/0", "::/0", host.strip("[]").rstrip(".")])
    for policy in (AZURE, LOCAL, everything):
        with pytest.raises(EgressDenied):
            policy.check_host(host)


@pytest.mark.parametrize("host", PRIVATE)
def test_private_addresses_are_refused_unless_allowed(host: str) -> None:
    with pytest.raises(EgressDenied, match="SCHEDULER_EGRESS_ALLOW"):
        AZURE.check_host(host)
    EgressPolicy.parse(["0.0.0.0/0", "::/0"]).check_host(host)


@EMBEDDED_FORMS
def test_one_normaliser_finds_the_ipv4_address_in_every_embedding(
    metadata: str, loopback: str
) -> None:
    assert ipaddress.IPv4Address("169.254.169.254") in judged_addresses(
        ipaddress.ip_address(metadata)
    )
    assert ipaddress.IPv4Address("127.0.0.2") in judged_addresses(ipaddress.ip_address(loopback))
    for address in ("2001:db8::1", "::1", "::", "fe80::1", "2606:4700::1111"):
        plain = ipaddress.ip_address(address)
        assert judged_addresses(plain) == (plain,)


@EMBEDDED_FORMS
def test_ipv4_embedded_in_ipv6_is_judged_as_that_ipv4_address(metadata: str, loopback: str):
    everything = EgressPolicy.parse(["0.0.0.0/0", "::/0"])
    for policy in (AZURE, LOCAL, everything):
        with pytest.raises(EgressDenied, match="link-local"):
            policy.check_host(f"[{metadata}]")
    with pytest.raises(EgressDenied, match="SCHEDULER_EGRESS_ALLOW"):
        AZURE.check_host(f"[{loopback}]")


def test_an_embedding_of_a_public_address_stays_allowed() -> None:
    for host in ("[::ffff:8.8.8.8]", "[64:ff9b::808:808]", "[2002:808:808::1]"):
        AZURE.check_host(host)


def test_loopback_is_what_the_local_host_allows() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "[::1]", "2130706433", "[::ffff:127.0.0.1]"):
        LOCAL.check_host(host)
    with pytest.raises(EgressDenied):
        LOCAL.check_host("10.0.0.1")
    assert Settings().egress_allow == LOCAL_EGRESS_ALLOW


@pytest.mark.parametrize(
    ("env", "allowed"),
    [
        pytest.param({}, LOCAL_EGRESS_ALLOW, id="emulator-by-default"),
        pytest.param(
            {"AzureWebJobsStorage": "UseDevelopmentStorage=true"},
            LOCAL_EGRESS_ALLOW,
            id="development-storage",
        ),
        pytest.param({"AzureWebJobsStorage__accountName": "stprod"}, (), id="azure-identity"),
        pytest.param(
            {
                "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=stprod;"
                "AccountKey=a2V5;EndpointSuffix=core.windows.net"
            },
            (),
            id="azure-key",
        ),
        pytest.param({"SCHEDULER_EGRESS_ALLOW": ""}, (), id="set-empty-on-the-emulator"),
        pytest.param(
            {
                "AzureWebJobsStorage__accountName": "stprod",
                "SCHEDULER_EGRESS_ALLOW": "10.1.0.0/16, api.corp",
            },
            ("10.1.0.0/16", "api.corp"),
            id="set",
        ),
    ],
)
def test_loopback_is_allowed_by_default_only_on_the_storage_emulator(
    env: dict[str, str], allowed: tuple[str, ...]
) -> None:
    assert Settings.from_env({**QUEUES, **env}).egress_allow == allowed


def test_an_allow_list_of_cidrs_and_names() -> None:
    policy = EgressPolicy.parse(["10.1.0.0/16", "api.internal.contoso.com", "*.corp.example"])
    ten = ipaddress.ip_address("10.1.2.3")
    assert policy.refusal(ten) is None
    assert policy.refusal(ipaddress.ip_address("10.2.0.1")) is not None
    assert policy.refusal(ipaddress.ip_address("10.9.9.9"), "api.internal.contoso.com") is None
    assert policy.refusal(ipaddress.ip_address("10.9.9.9"), "x.corp.example") is None
    assert policy.refusal(ipaddress.ip_address("10.9.9.9"), "corp.example.evil") is not None
    assert policy.refusal(ipaddress.ip_address("169.254.169.254"), "x.corp.example")
    with pytest.raises(ValidationError, match="SCHEDULER_EGRESS_ALLOW"):
        EgressPolicy.parse(["10.0.0.0/33x"])
    with pytest.raises(ValidationError, match="SCHEDULER_EGRESS_ALLOW"):
        Runtime(replace(Settings(), egress_allow=("not a host!",)))


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("2852039166", "169.254.169.254"),
        ("0xA9FEA9FE", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("127.1", "127.0.0.1"),
        ("10.0x10.258", "10.16.1.2"),
        ("example.com", None),
        ("1.2.3.4.5", None),
        ("08.1.1.1", None),
        ("256.1.1.1", None),
        ("4294967296", None),
    ],
)
def test_literal_addresses_are_read_as_resolvers_read_them(text: str, address: str | None) -> None:
    parsed = literal_address(text)
    assert (str(parsed) if parsed else None) == address
    if address is not None:  # the system resolver agrees
        assert socket.getaddrinfo(text, 80, type=socket.SOCK_STREAM)[0][4][0] == address


def http(uri: str) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "GET"}}


def test_a_refused_target_is_never_contacted(target: HttpTarget) -> None:
    closed = replace(Settings(), egress_allow=())
    for uri in (
        target.url_for("/x"),
        f"http://localhost:{target.port}/x",
        "http://169.254.169.254/metadata/instance",
        "http://0xA9FEA9FE/",
    ):
        outcome = run_action(http(uri), CONTEXT, closed)
        assert not outcome.succeeded
        assert "refused by the egress policy" in outcome.message
    assert target.requests == []
    assert run_action(http(target.url_for("/x")), CONTEXT, Settings()).succeeded


def test_a_name_is_resolved_once_and_the_checked_address_is_used(
    target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a name that resolves to an allowed address when checked and to the
    metadata address a moment later. The executor resolves once and connects to the address
    it checked; the Host header still names the host. (A stand-in resolver: no DNS server
    runs in the tests.)"""
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1", "169.254.169.254", "169.254.169.254"])
    calls: list[str] = []

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.example":
            calls.append(host)
            host = next(answers)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    outcome = run_action(http(f"http://rebind.example:{target.port}/r"), CONTEXT, Settings())
    assert outcome.succeeded, outcome.message
    assert calls == ["rebind.example"]
    assert target.requests[0].header("Host") == f"rebind.example:{target.port}"


def resolving(monkeypatch: pytest.MonkeyPatch, answers: dict[str, str]) -> None:
    """A stand-in resolver (no DNS server runs in the tests): each name of `answers`
    resolves to its address, through the system resolver's own getaddrinfo."""
    real = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return real(answers.get(host, host), port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)


@EMBEDDED_FORMS
def test_a_name_resolving_to_an_embedded_address_is_refused_at_run_time(
    target: HttpTarget, monkeypatch: pytest.MonkeyPatch, metadata: str, loopback: str
) -> None:
    """DNS answers are IPv6 too: each address a name resolves to goes through the same
    normaliser as a literal in the uri."""
    resolving(monkeypatch, {"imds.example": metadata, "home.example": loopback})
    closed = replace(Settings(), egress_allow=())
    for name, settings, why in (
        ("imds.example", Settings(), "link-local"),
        ("home.example", closed, "not publicly routable"),
    ):
        outcome = run_action(http(f"http://{name}:{target.port}/"), CONTEXT, settings, timeout=2)
        assert not outcome.succeeded
        assert "refused by the egress policy" in outcome.message, outcome.message
        assert f"host '{name}' resolves to" in outcome.message and why in outcome.message
    assert target.requests == []


def test_https_verifies_the_certificate_for_the_name_not_the_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pki = make_pki(tmp_path)
    real = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return real("127.0.0.1" if host == "other.example" else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with HttpTarget(ssl_context=pki.server_context(require_client_cert=False)) as server:
        # localhost may resolve to ::1 first, where nothing listens: the next address is tried
        good = run_action(
            http(f"https://localhost:{server.port}/"), CONTEXT, Settings(), verify=pki.ca_file
        )
        assert good.succeeded, good.message
        wrong_name = run_action(
            http(f"https://other.example:{server.port}/"), CONTEXT, Settings(), verify=pki.ca_file
        )
        assert not wrong_name.succeeded
        assert "certificate" in wrong_name.message.lower()
        assert len(server.requests) == 1


def test_service_bus_namespace_address_is_checked_before_connecting() -> None:
    """Up to the SDK boundary (no Service Bus emulator): `open_sender` refuses before the
    ServiceBusClient opens a connection."""
    target = ServiceBusTarget(
        "169.254.169.254",
        "queue",
        "q",
        credential=None,  # type: ignore[arg-type]
        egress=policy_for(Settings()),
    )
    with pytest.raises(EgressDenied), open_sender(target):
        pass


def test_a_refused_run_is_a_failed_attempt_in_the_history(driver: Driver) -> None:
    from scheduler_lib.domain.messages import ExecutionMessage

    driver.settings = replace(driver.settings, egress_allow=())
    action = {**http("http://localhost:9/"), "retryPolicy": {"retryType": "None"}}
    job = make_job(driver.store, action)
    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
    assert report.history.status == "Failed"
    assert "refused by the egress policy" in report.history.message
    [entry] = driver.history(job.key)
    assert "localhost" in entry.message and "not publicly routable" in entry.message


@pytest.mark.parametrize("how", ["literal-stored-before-the-rule", "name-resolving-to-it"])
def test_an_embedded_metadata_address_is_a_failed_attempt_in_the_history(
    driver: Driver, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A job stored before the rule (written to the table directly, as the API then allowed)
    with the metadata address in an IPv4-compatible literal, or a name that resolves to it,
    is refused when it runs, and the history says so."""
    from scheduler_lib.domain.messages import ExecutionMessage

    resolving(monkeypatch, {"imds.example": "::a9fe:a9fe"})
    host = "[::a9fe:a9fe]" if how.startswith("literal") else "imds.example"
    action = {**http(f"http://{host}/metadata/identity"), "retryPolicy": {"retryType": "None"}}
    job = make_job(driver.store, action)
    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
    assert report.history.status == "Failed"
    [entry] = driver.history(job.key)
    assert "refused by the egress policy" in entry.message
    assert "169.254.169.254" in entry.message and "link-local" in entry.message
