"""Secrets: redaction on output, carry-over rules on update, required secrets, certificates."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from scheduler_lib.actions.client_certificate import describe_certificate
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.actions import normalize_action
from scheduler_lib.wire.secrets import carry_over, finalize, redact
from tests.support.certs import make_pki


def basic(username="alice", password="s3cret"):
    auth = {"type": "Basic", "username": username}
    if password is not None:
        auth["password"] = password
    return normalize_action(
        {
            "type": "Https",
            "request": {"uri": "https://x.y", "method": "GET", "authentication": auth},
        },
        "action",
    )


def queue(account="acct", sas="?sig=abc"):
    message = {"storageAccount": account, "queueName": "q"}
    if sas is not None:
        message["sasToken"] = sas
    return normalize_action({"type": "StorageQueue", "queueMessage": message}, "action")


def service_bus(key_name="k", key="sb-secret", namespace="contoso-ns"):
    auth = {"sasKeyName": key_name}
    if key is not None:
        auth["sasKey"] = key
    return normalize_action(
        {
            "type": "ServiceBusQueue",
            "serviceBusQueueMessage": {
                "queueName": "q",
                "namespace": namespace,
                "authentication": auth,
            },
        },
        "action",
    )


def test_redact_removes_every_secret_everywhere():
    oauth = {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c",
             "secret": "oauth-secret"}  # fmt: skip
    action = basic()
    action["errorAction"] = normalize_action(
        {
            "type": "Http",
            "request": {"uri": "http://x.y", "method": "GET", "authentication": oauth},
        },
        "action.errorAction",
    )
    for definition in ({"action": action}, {"action": queue()}, {"action": service_bus()}):
        text = str(redact(definition))
        for secret in ("s3cret", "oauth-secret", "?sig=abc", "sb-secret"):
            assert secret not in text
    assert redact({"action": action})["action"]["request"]["authentication"] == {
        "type": "Basic",
        "username": "alice",
    }
    assert action["request"]["authentication"]["password"] == "s3cret"  # input untouched


@pytest.mark.parametrize(
    ("new", "old", "kept"),
    [
        pytest.param(basic(password=None), basic(), True, id="basic-same-user"),
        pytest.param(basic("bob", None), basic(), False, id="basic-other-user"),
        pytest.param(queue(sas=None), queue(), True, id="queue-same-account"),
        pytest.param(queue("other", None), queue(), False, id="queue-other-account"),
        pytest.param(service_bus(key=None), service_bus(), True, id="servicebus-same-key-name"),
        pytest.param(service_bus("k2", None), service_bus(), False, id="servicebus-other-key-name"),
        pytest.param(
            service_bus(key=None, namespace="contoso-ns2"),
            service_bus(),
            False,
            id="servicebus-other-ns",
        ),
    ],
)
def test_carry_over_only_to_the_same_principal(new, old, kept):
    if not kept:
        with pytest.raises(ValidationError) as err:
            carry_over(new, old)
        assert err.value.field.endswith(("password", "sasToken", "sasKey"))
        return
    carry_over(new, old)
    text = str(new)
    assert any(s in text for s in ("s3cret", "?sig=abc", "sb-secret"))


def http_basic(uri, password="s3cret", error_uri=None):
    def action(target):
        auth = {"type": "Basic", "username": "alice"}
        if password is not None:
            auth["password"] = password
        return {"type": "Http", "request": {"uri": target, "method": "GET", "authentication": auth}}

    main = action(uri)
    if error_uri:
        main["errorAction"] = action(error_uri)
    return normalize_action(main, "action")


@pytest.mark.parametrize(
    ("new_uri", "kept"),
    [
        pytest.param("https://a.example/other/path?q=1", True, id="same-origin-other-path"),
        pytest.param("https://A.EXAMPLE:443/", True, id="same-origin-default-port-spelled"),
        pytest.param("https://b.example/", False, id="other-host"),
        pytest.param("https://a.example:8443/", False, id="other-port"),
        pytest.param("http://a.example/", False, id="other-scheme"),
        pytest.param("https://a.example.evil.test/", False, id="suffix-host"),
    ],
)
def test_a_password_follows_only_an_unchanged_destination(new_uri, kept):
    old = http_basic("https://a.example/x")
    for new in (http_basic(new_uri, None), http_basic("https://a.example/x", None, new_uri)):
        if new.get("errorAction"):
            old_with_error = http_basic("https://a.example/x", "s3cret", "https://a.example/e")
            target = old_with_error
            where = "properties.action.errorAction.request.authentication.password"
        else:
            target = old
            where = "properties.action.request.authentication.password"
        if kept:
            carry_over(new, target)
            assert "s3cret" in str(new)
        else:
            with pytest.raises(ValidationError) as err:
                carry_over(new, target)
            assert err.value.field == where
            assert "s3cret" not in err.value.message


def test_an_oauth_secret_is_bound_to_tenant_audience_and_destination():
    """The secret goes to the authority, but the token it buys goes to the URI: another host
    (or scheme, or port) is another destination, as for Basic and certificates."""

    def oauth(uri, secret, audience="aud"):
        auth = {
            "type": "ActiveDirectoryOAuth",
            "tenant": "t",
            "clientId": "c",
            "audience": audience,
        }
        if secret:
            auth["secret"] = secret
        return normalize_action(
            {"type": "Http", "request": {"uri": uri, "method": "GET", "authentication": auth}},
            "action",
        )

    for moved in ("https://b.example/", "http://a.example/", "https://a.example:8443/"):
        with pytest.raises(ValidationError) as err:
            carry_over(oauth(moved, None), oauth("https://a.example/", "oauth-secret"))
        assert err.value.field == "properties.action.request.authentication.secret"
        assert "oauth-secret" not in err.value.message
    same_origin = oauth("https://A.example:443/other/path", None)
    carry_over(same_origin, oauth("https://a.example/", "oauth-secret"))
    assert same_origin["request"]["authentication"]["secret"] == "oauth-secret"
    resent = oauth("https://b.example/", "new-secret")
    carry_over(resent, oauth("https://a.example/", "oauth-secret"))
    assert resent["request"]["authentication"]["secret"] == "new-secret"
    with pytest.raises(ValidationError) as err:
        carry_over(oauth("https://a.example/", None, "aud2"), oauth("https://a.example/", "x"))
    assert err.value.field == "properties.action.request.authentication.secret"


def test_a_client_certificate_follows_only_an_unchanged_destination(tmp_path: Path):
    pki = make_pki(tmp_path)
    old = cert_action(pki.client_pfx_b64("pw"), "pw")
    moved = cert_action(None, None)
    moved["request"]["uri"] = "https://elsewhere.example/"
    with pytest.raises(ValidationError) as err:
        carry_over(moved, old)
    assert err.value.field == "properties.action.request.authentication.pfx"


def test_a_sent_secret_wins_over_the_stored_one():
    new = basic(password="new-password")
    carry_over(new, basic())
    assert new["request"]["authentication"]["password"] == "new-password"


def test_missing_required_secret_is_a_400_naming_it():
    with pytest.raises(ValidationError) as err:
        finalize(basic(password=None), describe_certificate)
    assert err.value.field == "properties.action.request.authentication.password"
    # Without a sasToken a queue message is sent with the app's identity, where allowed
    # (tests/test_destinations.py); that is not the secrets' business.
    finalize(queue(sas=None), describe_certificate)


def cert_action(pfx, password):
    auth = {"type": "ClientCertificate"}
    if pfx is not None:
        auth["pfx"] = pfx
    if password is not None:
        auth["password"] = password
    return normalize_action(
        {
            "type": "Https",
            "request": {"uri": "https://x.y", "method": "GET", "authentication": auth},
        },
        "action",
    )


def test_certificate_description_is_derived_and_kept_on_carry_over(tmp_path: Path):
    pki = make_pki(tmp_path, client_common_name="job-client")
    action = cert_action(pki.client_pfx_b64("pw"), "pw")
    finalize(action, describe_certificate)
    auth = action["request"]["authentication"]
    assert auth["certificateSubjectName"].startswith("CN=job-client")
    assert len(auth["certificateThumbprint"]) == 40
    assert auth["certificateExpirationDate"] == "2099-12-31T23:59:59Z"
    # A round trip without pfx/password keeps the stored certificate.
    round_trip = normalize_action(redact({"action": action})["action"], "action")
    carry_over(round_trip, action)
    finalize(round_trip, describe_certificate)
    assert round_trip["request"]["authentication"]["pfx"] == auth["pfx"]
    assert round_trip["request"]["authentication"]["password"] == "pw"


def test_bad_pfx_is_a_400_on_the_pfx_field():
    with pytest.raises(ValidationError) as err:
        finalize(cert_action("bm90IGEgcGZ4", None), describe_certificate)
    assert err.value.field == "properties.action.request.authentication.pfx"


def test_new_pfx_does_not_inherit_the_old_password(tmp_path: Path):
    pki = make_pki(tmp_path)
    old = cert_action(pki.client_pfx_b64("old-pw"), "old-pw")
    new = cert_action(pki.client_pfx_b64(None), None)
    carry_over(new, old)
    assert "password" not in new["request"]["authentication"]
    finalize(new, describe_certificate)
    assert datetime.fromisoformat(
        new["request"]["authentication"]["certificateExpirationDate"]
    ) > datetime(2098, 1, 1, tzinfo=UTC)
