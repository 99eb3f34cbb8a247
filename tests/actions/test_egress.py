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
from scheduler_lib.actions.egress import EgressDenied, EgressPolicy, literal_address, policy_for
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
    "169.254.169.254", "2852039166", "0xA9FEA9FE", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376",
    "169.254.43518", "0251.0xfe.43518", "169.254.169.254.", "[fd00:ec2::254]",
    "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]", "[fe80::1]",
    "[2002:a9fe:a9fe::1]", "168.63.129.16", "100.100.100.200", "metadata.google.internal",
    "METADATA.AZURE.COM.", "metadata", "169.254.0.1",
]
PRIVATE = [
    "10.0.0.1", "172.16.5.4", "192.168.1.1", "100.64.0.1", "0.0.0.0", "0", "[::]",
    "[fc00::1]", "[fd12:3456::1]", "127.0.0.1", "2130706433", "0x7f000001", "017700000001",
    "127.1", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]", "224.0.0.1", "240.0.0.1",
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
        pytest.param({"AzureWebJobsStorage": "UseDevelopmentStorage=true"}, LOCAL_EGRESS_ALLOW,
                     id="development-storage"),
        pytest.param({"AzureWebJobsStorage__accountName": "stprod"}, (), id="azure-identity"),
        pytest.param({"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=stprod;"
                      "AccountKey=a2V5;EndpointSuffix=core.windows.net"}, (), id="azure-key"),
        pytest.param({"SCHEDULER_EGRESS_ALLOW": ""}, (), id="set-empty-on-the-emulator"),
        pytest.param({"AzureWebJobsStorage__accountName": "stprod",
                      "SCHEDULER_EGRESS_ALLOW": "10.1.0.0/16, api.corp"},
                     ("10.1.0.0/16", "api.corp"), id="set"),
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
    [("2852039166", "169.254.169.254"), ("0xA9FEA9FE", "169.254.169.254"),
     ("0251.0376.0251.0376", "169.254.169.254"), ("127.1", "127.0.0.1"),
     ("10.0x10.258", "10.16.1.2"), ("example.com", None), ("1.2.3.4.5", None),
     ("08.1.1.1", None), ("256.1.1.1", None), ("4294967296", None)],
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
    for uri in (target.url_for("/x"), f"http://localhost:{target.port}/x",
                "http://169.254.169.254/metadata/instance", "http://0xA9FEA9FE/"):
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
        good = run_action(http(f"https://localhost:{server.port}/"), CONTEXT, Settings(),
                          verify=pki.ca_file)
        assert good.succeeded, good.message
        wrong_name = run_action(http(f"https://other.example:{server.port}/"), CONTEXT,
                                Settings(), verify=pki.ca_file)
        assert not wrong_name.succeeded
        assert "certificate" in wrong_name.message.lower()
        assert len(server.requests) == 1


def test_service_bus_namespace_address_is_checked_before_connecting() -> None:
    """Up to the SDK boundary (no Service Bus emulator): `open_sender` refuses before the
    ServiceBusClient opens a connection."""
    target = ServiceBusTarget("169.254.169.254", "queue", "q", credential=None,  # type: ignore[arg-type]
                              egress=policy_for(Settings()))
    with pytest.raises(EgressDenied), open_sender(target):
        pass


def test_a_refused_run_is_a_failed_attempt_in_the_history(driver: Driver) -> None:
    from scheduler_lib.execution.messages import ExecutionMessage

    driver.settings = replace(driver.settings, egress_allow=())
    action = {**http("http://localhost:9/"), "retryPolicy": {"retryType": "None"}}
    job = make_job(driver.store, action)
    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
    assert report.history.status == "Failed"
    assert "refused by the egress policy" in report.history.message
    [entry] = driver.history(job.key)
    assert "localhost" in entry.message and "not publicly routable" in entry.message
