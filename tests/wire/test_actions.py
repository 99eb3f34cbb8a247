"""Action validation into the canonical stored form (pure: no storage, no clock)."""

import pytest

from scheduler_lib.api.errors import http_status
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.actions import DEFAULT_RETRY, normalize_action, uses_authentication


def http(**request):
    return {
        "type": "http",
        "request": {"uri": "https://example.com/x", "method": "post", **request},
    }


def test_http_action_is_canonical_with_default_retry_policy():
    action = normalize_action(http(body="hi", headers={"X-A": "1"}), "action")
    assert action == {
        "type": "Http",
        "request": {
            "uri": "https://example.com/x",
            "method": "POST",
            "body": "hi",
            "headers": {"X-A": "1"},
        },
        "retryPolicy": DEFAULT_RETRY,
    }


def test_keys_and_enums_in_any_case():
    action = normalize_action(
        {
            "Type": "STORAGEQUEUE",
            "QueueMessage": {"storageaccount": "acct", "queueName": "q", "sasToken": "?sv=1"},
            "retryPolicy": {"retryType": "fixed", "retryInterval": "pt1m", "retryCount": 2},
        },
        "action",
    )
    assert action["type"] == "StorageQueue"
    assert action["queueMessage"] == {
        "storageAccount": "acct",
        "queueName": "q",
        "sasToken": "?sv=1",
    }
    assert action["retryPolicy"] == {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}


def test_service_bus_topic_with_brokered_properties():
    action = normalize_action(
        {
            "type": "ServiceBusTopic",
            "serviceBusTopicMessage": {
                "topicPath": "t",
                "namespace": "contoso-ns",
                "transportType": "amqp",
                "authentication": {"sasKeyName": "k", "sasKey": "s", "type": "sharedaccesskey"},
                "brokeredMessageProperties": {"timeToLive": "PT1H", "forcePersistence": True},
                "customMessageProperties": {"a": "b"},
            },
            "retryPolicy": {"retryType": "none"},
        },
        "action",
    )
    message = action["serviceBusTopicMessage"]
    assert message["transportType"] == "AMQP"
    assert message["authentication"]["type"] == "SharedAccessKey"
    assert message["brokeredMessageProperties"] == {"timeToLive": "PT1H", "forcePersistence": True}
    assert action["retryPolicy"] == {"retryType": "None"}


def test_error_action_is_validated_and_may_not_nest():
    action = normalize_action({**http(), "errorAction": http(method="get")}, "action")
    assert action["errorAction"]["request"]["method"] == "GET"
    nested = {**http(), "errorAction": {**http(), "errorAction": http()}}
    with pytest.raises(ValidationError) as err:
        normalize_action(nested, "action")
    assert err.value.field == "action.errorAction.errorAction"


@pytest.mark.parametrize(
    ("action", "field"),
    [
        pytest.param({"request": {}}, "action.type", id="type-missing"),
        pytest.param({"type": "Ftp"}, "action.type", id="type-unknown"),
        pytest.param({"type": "Http"}, "action.request", id="request-missing"),
        pytest.param({**http(), "queueMessage": {}}, "action.queueMessage", id="wrong-payload"),
        pytest.param({**http(), "colour": 1}, "action.colour", id="unknown-property"),
        pytest.param(http(uri="ftp://x"), "action.request.uri", id="uri-not-http"),
        pytest.param(http(uri=5), "action.request.uri", id="uri-not-string"),
        pytest.param(
            {"type": "Https", "request": {"uri": "http://x.y", "method": "GET"}},
            "action.request.uri",
            id="https-action-with-http-uri",
        ),
        pytest.param(http(method="FETCH"), "action.request.method", id="method-unknown"),
        pytest.param(http(headers={"a": 1}), "action.request.headers.a", id="header-not-string"),
        pytest.param(
            http(authentication={"type": "Kerberos"}),
            "action.request.authentication.type",
            id="auth-type-unknown",
        ),
        pytest.param(
            http(authentication={"type": "Basic", "username": "u", "secret": "s"}),
            "action.request.authentication.secret",
            id="auth-property-of-another-type",
        ),
        pytest.param(
            {**http(), "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT5S"}},
            "action.retryPolicy.retryInterval",
            id="retry-interval-below-15s",
        ),
        pytest.param(
            {**http(), "retryPolicy": {"retryType": "Fixed", "retryInterval": "P1Y"}},
            "action.retryPolicy.retryInterval",
            id="retry-interval-in-years",
        ),
        pytest.param(
            {**http(), "retryPolicy": {"retryType": "Fixed", "retryCount": 21}},
            "action.retryPolicy.retryCount",
            id="retry-count-above-20",
        ),
        pytest.param(
            {**http(), "retryPolicy": {"retryType": "None", "retryCount": 3}},
            "action.retryPolicy.retryCount",
            id="retry-count-with-type-none",
        ),
        pytest.param(
            {"type": "StorageQueue", "queueMessage": {"queueName": "q"}},
            "action.queueMessage.storageAccount",
            id="queue-account-missing",
        ),
        pytest.param(
            {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "n"}},
            "action.serviceBusQueueMessage.queueName",
            id="service-bus-queue-missing",
        ),
    ],
)
def test_bad_actions_name_the_field(action, field):
    with pytest.raises(ValidationError) as err:
        normalize_action(action, "action")
    assert err.value.field == field
    assert http_status(err.value) == 400


def test_not_specified_authentication_is_dropped():
    action = normalize_action(http(authentication={"type": "NotSpecified"}), "action")
    assert "authentication" not in action["request"]
    assert not uses_authentication(action)


def test_uses_authentication_sees_the_error_action():
    auth = {"type": "Basic", "username": "u", "password": "p"}
    action = normalize_action({**http(), "errorAction": http(authentication=auth)}, "action")
    assert uses_authentication(action)


def test_error_action_inherits_the_main_policy_unless_it_has_its_own() -> None:
    main_policy = {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}
    inherited = normalize_action(
        {**http(), "retryPolicy": main_policy, "errorAction": http()}, "action"
    )
    assert "retryPolicy" not in inherited["errorAction"]
    assert inherited["retryPolicy"]["retryCount"] == 2
    own = normalize_action(
        {**http(), "errorAction": {**http(), "retryPolicy": {"retryType": "None"}}}, "action"
    )
    assert own["errorAction"]["retryPolicy"] == {"retryType": "None"}


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("http://[::1/", id="unclosed-ipv6-bracket"),
        pytest.param("http://[zz]/", id="bad-ipv6-literal"),
        pytest.param("http:///path", id="no-host"),
        pytest.param("http://:8080/", id="port-without-host"),
        pytest.param("http://example.com:99999/", id="port-out-of-range"),
        pytest.param("http://example.com:0/", id="port-zero"),
        pytest.param("http://example.com:http/", id="port-not-a-number"),
        pytest.param("http://user:pw@example.com/", id="userinfo-with-password"),
        pytest.param("http://user@example.com/", id="userinfo"),
        pytest.param("http://exa mple.com/", id="space-in-host"),
        pytest.param("http://example.com/a b", id="space-in-path"),
        pytest.param("http://example.com/\r\nX-Injected: 1", id="crlf"),
        pytest.param("http://exa%41mple.com/", id="percent-in-host"),
        pytest.param("http://a..b/", id="empty-label"),
        pytest.param("ftp://example.com/", id="not-http"),
        pytest.param("//example.com/", id="no-scheme"),
    ],
)
def test_malformed_uris_are_a_400_naming_the_uri(uri):
    for where, action in (
        ("action.request.uri", http(uri=uri)),
        ("action.errorAction.request.uri", {**http(), "errorAction": http(uri=uri)}),
    ):
        with pytest.raises(ValidationError) as err:
            normalize_action(action, "action")
        assert err.value.field == where


@pytest.mark.parametrize(
    "uri",
    [
        "http://example.com:8080/x?y=1#f",
        "https://[2001:db8::1]:8443/",
        "http://münchen.example/",
        "http://a_b.example/",
        "http://example.com./",
        "http://example.com:/",
    ],
)
def test_well_formed_uris_are_kept_as_sent(uri):
    assert normalize_action(http(uri=uri), "action")["request"]["uri"] == uri


def queue_action(account):
    return {
        "type": "StorageQueue",
        "queueMessage": {"storageAccount": account, "queueName": "q", "sasToken": "?sig=x"},
    }


def bus_action(namespace, kind="ServiceBusQueue"):
    body = (
        {"namespace": namespace, "queueName": "q"}
        if kind == "ServiceBusQueue"
        else {"namespace": namespace, "topicPath": "t"}
    )
    key = "serviceBusQueueMessage" if kind == "ServiceBusQueue" else "serviceBusTopicMessage"
    return {"type": kind, key: body}


@pytest.mark.parametrize(
    "account",
    [
        "127.0.0.1/",
        "ab",
        "a" * 25,
        "my-account",
        "acct.queue.core.windows.net",
        "https://acct.queue.core.windows.net",
        "acct/",
        "acct?x",
        "acct#",
        "ácct",
    ],
)
def test_storage_account_must_be_an_account_name(account):
    with pytest.raises(ValidationError) as err:
        normalize_action(queue_action(account), "action")
    assert err.value.field == "action.queueMessage.storageAccount"


@pytest.mark.parametrize("account", ["abc", "a" * 24, "contoso2024", "myStorageAccount"])
def test_storage_account_names_azure_accepts(account):
    assert normalize_action(queue_action(account), "action")["queueMessage"]["storageAccount"]


@pytest.mark.parametrize(
    "namespace",
    [
        "127.0.0.1/",
        "127.0.0.1",
        "short",
        "a" * 51,
        "1contoso",
        "contoso-",
        "contoso_bus",
        "contoso.servicebus.windows.net",
        "contoso-sb",
        "contoso-mgmt",
        "conto:5671",
        "cont oso",
    ],
)
@pytest.mark.parametrize("kind", ["ServiceBusQueue", "ServiceBusTopic"])
def test_service_bus_namespace_must_be_a_namespace_name(namespace, kind):
    with pytest.raises(ValidationError) as err:
        normalize_action(bus_action(namespace, kind), "action")
    key = "serviceBusQueueMessage" if kind == "ServiceBusQueue" else "serviceBusTopicMessage"
    assert err.value.field == f"action.{key}.namespace"


@pytest.mark.parametrize("namespace", ["contoso", "a" * 50, "mySBNamespace", "contoso-bus-01"])
def test_service_bus_namespace_names_azure_accepts(namespace):
    body = normalize_action(bus_action(namespace), "action")["serviceBusQueueMessage"]
    assert body["namespace"] == namespace


@pytest.mark.parametrize(
    ("headers", "field", "why"),
    [
        ({"X-Price": "5 €"}, "X-Price", "Latin-1"),
        ({"X-A": "a\r\nX-Injected: 1"}, "X-A", "CR or LF"),
        ({"X-A": "line\nbreak"}, "X-A", "CR or LF"),
        ({"X A": "1"}, "X A", "header name"),
        ({"X:A": "1"}, "X:A", "header name"),
        ({"": "1"}, "", "header name"),
        ({"Ünicode": "1"}, "Ünicode", "header name"),
        ({"X-A": "nul\x00"}, "X-A", "control characters"),
        ({"X-A": "bell\x07"}, "X-A", "control characters"),
        ({"X-A": " leading"}, "X-A", "whitespace"),
    ],
)
def test_headers_an_http_client_cannot_send_are_refused_naming_the_header(headers, field, why):
    with pytest.raises(ValidationError) as raised:
        normalize_action(http(headers=headers), "properties.action")
    assert raised.value.field == f"properties.action.request.headers.{field}".rstrip(".")
    assert why in raised.value.message


#: Headers the HTTP client writes itself (RFC 9110, RFC 9112): a job may not set them.
CLIENT_HEADERS = (
    "Host",
    "Content-Length",
    "Transfer-Encoding",
    "Connection",
    "Keep-Alive",
    "Proxy-Connection",
    "TE",
    "Trailer",
    "Upgrade",
    "Proxy-Authorization",
)


@pytest.mark.parametrize("name", [*CLIENT_HEADERS, "host", "TRANSFER-ENCODING", "te"])
def test_host_framing_and_hop_by_hop_headers_are_refused_naming_the_header(name):
    action = http(headers={"X-Fine": "1", name: "value"})
    with pytest.raises(ValidationError) as raised:
        normalize_action(action, "properties.action")
    assert raised.value.field == f"properties.action.request.headers.{name}"
    assert "RFC 911" in raised.value.message
    action = http(headers={"X-Fine": "1"})
    action["errorAction"] = http(headers={name: "value"})
    with pytest.raises(ValidationError) as raised:
        normalize_action(action, "properties.action")
    assert raised.value.field == f"properties.action.errorAction.request.headers.{name}"


def test_end_to_end_headers_that_look_alike_are_kept():
    headers = {
        "X-Host": "a",
        "Hostname": "b",
        "Content-Type": "text/plain",
        "Expect": "x",
        "X-Forwarded-Host": "c",
        "Authorization": "Bearer t",
        "Teapot": "d",
    }
    assert normalize_action(http(headers=headers), "action")["request"]["headers"] == headers


def test_error_action_headers_are_checked_too():
    action = http()
    action["errorAction"] = http(headers={"X-Price": "5 €"})
    with pytest.raises(ValidationError) as raised:
        normalize_action(action, "properties.action")
    assert raised.value.field == "properties.action.errorAction.request.headers.X-Price"


def test_latin1_header_values_and_token_names_are_kept():
    headers = {"X-Price": "5 £", "x_weird!#$%&'*+.^`|~": "tab\tok", "Empty": ""}
    assert normalize_action(http(headers=headers), "action")["request"]["headers"] == headers
