"""`SCHEDULER_IDENTITY_AUDIENCES`: parsed once by `Settings.from_env`, empty by default, a
malformed value refused naming the setting; hosts compared as `requests` connects to them."""

from __future__ import annotations

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.identity_audiences import NO_AUDIENCES, IdentityAudiences, host_key

SETTING = "SCHEDULER_IDENTITY_AUDIENCES"
#: The queue settings `from_env` requires (the triggers bind to them).
QUEUES = {"SCHEDULER_EXECUTION_QUEUE": "exec-q", "SCHEDULER_DISPATCH_QUEUE": "dispatch-q"}


def parsed(value: str) -> IdentityAudiences:
    return Settings.from_env({**QUEUES, SETTING: value}).identity_audiences


def test_empty_by_default_so_no_audience_is_allowed() -> None:
    for settings in (
        Settings(),
        Settings.from_env(QUEUES),
        Settings.from_env({**QUEUES, SETTING: " ; "}),
    ):
        assert settings.identity_audiences == NO_AUDIENCES
        assert settings.identity_audiences.audiences == ()
        for audience in (
            "https://storage.azure.com",
            "https://management.azure.com",
            "https://vault.azure.net",
            "api://orders",
        ):
            assert settings.identity_audiences.hosts_for(audience) is None
            assert not settings.identity_audiences.allows(audience, "127.0.0.1", 80)


def test_entries_audiences_and_their_hosts() -> None:
    audiences = parsed(
        " api://orders = orders.example.com , *.Billing.Example.org:8443 ;"
        "3f6c2a1e-0000-4000-8000-00000000ABCD=10.0.0.4,[FD00::4]:9000;"
    )
    assert audiences.audiences == ("api://orders", "3f6c2a1e-0000-4000-8000-00000000ABCD")
    assert [str(h) for h in audiences.hosts_for("API://Orders") or ()] == [
        "orders.example.com", "*.billing.example.org:8443"]  # fmt: skip
    assert [str(h) for h in audiences.hosts_for("3f6c2a1e-0000-4000-8000-00000000abcd") or ()] == [
        "10.0.0.4", "[fd00::4]:9000"]  # fmt: skip
    assert audiences.hosts_for("api://orders/") is None  # another spelling: another audience


@pytest.mark.parametrize(("host", "port", "allowed"), [
    ("orders.example.com", 443, True),
    ("ORDERS.Example.COM.", 8080, True),  # case, trailing dot; no port given: any port
    ("orders.example.com.evil.test", 443, False),
    ("evilorders.example.com", 443, False),
    ("a.billing.example.org", 8443, True),
    ("x.y.billing.example.org", 8443, True),
    ("a.billing.example.org", 443, False),  # the entry names port 8443
    ("billing.example.org", 8443, False),  # `*.suffix` is the names under it, not the suffix
    ("a.billing.example.org.evil.test", 8443, False),
])  # fmt: skip
def test_the_host_and_port_must_match_an_entry(host: str, port: int, allowed: bool) -> None:
    audiences = parsed("api://orders=orders.example.com,*.billing.example.org:8443")
    assert audiences.allows("api://orders", host, port) is allowed
    assert not audiences.allows("api://other", host, port)


def test_names_compare_in_their_idna_form_as_requests_sends_them() -> None:
    audiences = parsed("api://books=bücher.example,*.straße.example")
    assert [str(h) for h in audiences.hosts_for("api://books") or ()] == [
        "xn--bcher-kva.example", "*.xn--strae-oqa.example"]  # fmt: skip
    assert audiences.allows("api://books", "BÜCHER.example", 443)
    assert audiences.allows("api://books", "xn--bcher-kva.example", 443)
    assert audiences.allows("api://books", "shop.xn--strae-oqa.example", 443)
    # IDNA 2003 (Python's `idna` codec) maps ß to ss: another host, which requests never
    # connects to for straße; the two must not be confused.
    assert not audiences.allows("api://books", "shop.strasse.example", 443)
    assert host_key("bücher.example") == "xn--bcher-kva.example"
    assert host_key("[::FFFF:7F00:1]") == "::ffff:7f00:1"
    assert host_key("evil.example\\@orders.example.com") is None


@pytest.mark.parametrize("value", [
    "api://orders",  # no '='
    "=orders.example.com",  # no audience
    "api://orders=",  # no host
    "api://orders= , ",
    "api://orders=*",  # any host is not an entry
    "api://orders=https://orders.example.com/",  # a URL, not a host
    "api://orders=orders.example.com/path",
    "api://orders=user@orders.example.com",
    "api://orders=orders.example.com:0",
    "api://orders=orders.example.com:https",
    "api://orders=*.10.0.0.4",
    "api://orders=::1",  # IPv6 goes in brackets
    "api://orders=exa mple.com",
    "api://my orders=orders.example.com",
    "api://orders/.default=orders.example.com",
    "api://orders=a.example;API://ORDERS=b.example",  # twice
])  # fmt: skip
def test_a_malformed_value_is_refused_naming_the_setting(value: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings.from_env({**QUEUES, SETTING: value})
    assert err.value.field == SETTING
    assert SETTING in err.value.message
