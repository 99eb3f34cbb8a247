"""The Redactor: every secret of an action, in the encodings it travels in, becomes ***."""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

import pytest

from scheduler_lib.actions.redaction import Redactor

SIGNATURE = "AbCdEfGh+IjKlMnOpQrStUvWxYz0123456789/="
SAS = "sv=2019-02-02&sp=a&sig=" + quote(SIGNATURE, safe="")


def test_collects_secrets_anywhere_in_the_action() -> None:
    action = {
        "type": "Https",
        "request": {
            "uri": "https://x",
            "authentication": {"type": "Basic", "username": "bob", "password": "hunter2!"},
        },
        "errorAction": {
            "queueMessage": {"storageAccount": "acct", "sasToken": SAS},
            "serviceBusQueueMessage": {"authentication": {"sasKeyName": "k", "sasKey": "sbkey=="}},
            "other": [{"Secret": "oauth-secret"}, {"pfx": "UEZYREFUQQ=="}],
        },
    }
    redact = Redactor.from_action(action)
    text = "hunter2! oauth-secret sbkey== UEZYREFUQQ== bob acct k"
    assert redact(text) == "*** *** *** *** bob acct k"


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda s: s, id="as-is"),
        pytest.param(lambda s: quote(s, safe=""), id="percent-encoded"),
        pytest.param(quote_plus, id="form-encoded"),
    ],
)
def test_hides_encoded_forms(encode: Callable[[str], str]) -> None:
    secret = "p@ss word/+="
    assert Redactor([secret])(f"got {encode(secret)}.") == "got ***."


def test_hides_a_sas_tokens_signature_however_it_is_quoted() -> None:
    redact = Redactor([SAS])
    assert redact(f"signature {SIGNATURE} did not match") == "signature *** did not match"
    assert redact(f"sig: {quote_plus(SIGNATURE)}") == "sig: ***"
    assert redact("sv=2019-02-02 is the version") == "sv=2019-02-02 is the version"


def test_hides_any_sig_parameter_in_a_url() -> None:
    assert Redactor()("…?se=1&sig=unknownsignature&x=1") == "…?se=1&sig=***&x=1"


def test_longest_secret_wins_and_empty_ones_are_ignored() -> None:
    redact = Redactor(["abc", "abcdef", ""])
    assert redact("abcdef abc xyz") == "*** *** xyz"


TRICKY = 'pä"ss\\wo/rd\t<&>😀 x'


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda s: json.dumps(s)[1:-1], id="json-ascii"),
        pytest.param(lambda s: json.dumps(s, ensure_ascii=False)[1:-1], id="json-unicode"),
        pytest.param(lambda s: json.dumps(s)[1:-1].replace("/", "\\/"), id="json-escaped-slash"),
        pytest.param(
            lambda s: re.sub(
                r"\\u([0-9a-f]{4})", lambda m: "\\u" + m[1].upper(), json.dumps(s)[1:-1]
            ),
            id="json-uppercase-hex",
        ),
        pytest.param(
            lambda s: "".join(
                f"\\u{ord(c):04x}" if c.isalpha() else json.dumps(c, ensure_ascii=False)[1:-1]
                for c in s
            ),
            id="json-every-letter-escaped",
        ),
        pytest.param(lambda s: quote(s, safe="").lower(), id="percent-lowercase-hex"),
        pytest.param(lambda s: html.escape(s), id="html"),
        pytest.param(lambda s: "".join(f"&#{ord(c)};" for c in s), id="html-numeric"),
    ],
)
def test_hides_escaped_echoes(encode: Callable[[str], str]) -> None:
    echoed = encode(TRICKY)
    assert echoed != TRICKY
    assert Redactor([TRICKY])(f'{{"echo": "{echoed}"}}') == '{"echo": "***"}'


def test_an_echoed_basic_header_is_hidden_in_json() -> None:
    credential = base64.b64encode(b"user:p/ss+w==").decode()
    redact = Redactor([credential])
    echoed = json.dumps({"Authorization": f"Basic {credential}"}).replace("/", "\\/")
    assert credential not in redact(echoed) and "***" in redact(echoed)
    assert "\\/" not in redact(echoed)
