"""The HTTP action's request on `http.client` (`actions/exchange.py`) against real local
servers: the request is the one `requests` sent (its default headers, its URL spelling),
and every answer a server may give, well-formed or not, is read as requests read it or
said more plainly. tests/support/raw_target.py sends the answers a well-behaved server
cannot, and records the request's bytes."""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler_lib.actions import ActionOutcome, run_action
from scheduler_lib.actions.http import USER_AGENT
from scheduler_lib.config import Settings
from tests.actions.test_http import CONTEXT
from tests.support.raw_target import RawTarget

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
UNREADABLE = (
    "<the body could not be read: IncompleteRead: the connection closed before the end of the body>"
)


def run(uri: str, method: str = "GET", timeout: float = 5, **request: Any) -> ActionOutcome:
    action = {"type": "Http", "request": {"uri": uri, "method": method, **request}}
    return run_action(action, CONTEXT, Settings(), timeout=timeout)


def head_lines(request: bytes) -> list[str]:
    return request.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")


@pytest.fixture
def target() -> Iterator[RawTarget]:
    with RawTarget(OK) as server:
        yield server


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in resolver (no DNS server runs in the tests): names under `.example` are
    127.0.0.1; `nowhere.example` does not resolve."""
    real = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "nowhere.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        stand_in = str(host).rstrip(".").endswith(".example")
        return real("127.0.0.1" if stand_in else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)


def test_the_request_carries_the_headers_requests_sent(target: RawTarget) -> None:
    outcome = run(f"{target.url}/hook?x=1", "POST", body="hello", headers={"X-Custom": "yes"})
    assert outcome.succeeded, outcome.message
    [request] = target.requests
    lines = head_lines(request)
    assert lines[:6] == [
        "POST /hook?x=1 HTTP/1.1",
        f"Host: 127.0.0.1:{target.port}",
        f"User-Agent: {USER_AGENT}",
        "Accept-Encoding: gzip, deflate",
        "Accept: */*",
        "Connection: keep-alive",
    ]
    assert "X-Custom: yes" in lines and lines[-1] == "Content-Length: 5"
    assert request.endswith(b"\r\n\r\nhello")


def test_the_user_may_replace_the_default_headers(target: RawTarget) -> None:
    run(target.url, headers={"accept": "application/json", "Accept-Encoding": "identity"})
    lines = head_lines(target.requests[0])
    assert "accept: application/json" in lines and "Accept-Encoding: identity" in lines
    assert "Accept: */*" not in lines and "Accept-Encoding: gzip, deflate" not in lines


@pytest.mark.parametrize(
    ("method", "body", "length"),
    [
        pytest.param("GET", None, None, id="get"),
        pytest.param("HEAD", None, None, id="head"),
        pytest.param("GET", "xyz", "3", id="get-with-a-body"),
        pytest.param("POST", None, "0", id="post-without-a-body"),
        pytest.param("DELETE", "", "0", id="delete-with-an-empty-body"),
    ],
)
def test_content_length_as_requests_sent_it(
    target: RawTarget, method: str, body: str | None, length: str | None
) -> None:
    run(target.url, method, **({} if body is None else {"body": body}))
    lengths = [line for line in head_lines(target.requests[0]) if line.startswith("Content-")]
    assert lengths == ([] if length is None else [f"Content-Length: {length}"])


@pytest.mark.parametrize(
    ("path", "sent"),
    [
        pytest.param("", "/", id="no-path"),
        pytest.param("/ö/ä?x=ü", "/%C3%B6/%C3%A4?x=%C3%BC", id="non-ascii"),
        pytest.param("/a%zzb?q=%41", "/a%25zzb?q=A", id="a-stray-percent"),
        pytest.param("/p?a=|{}^", "/p?a=%7C%7B%7D%5E", id="unsafe-characters"),
        pytest.param("/a/../b/./c", "/b/c", id="dot-segments"),
        pytest.param("/f?q#fragment", "/f?q", id="fragment"),
    ],
)
def test_the_path_and_query_are_spelled_as_requests_spelled_them(
    target: RawTarget, path: str, sent: str
) -> None:
    assert run(target.url + path).succeeded
    assert head_lines(target.requests[0])[0] == f"GET {sent} HTTP/1.1"


@pytest.mark.parametrize(
    ("host", "header", "shown"),
    [
        pytest.param("bücher.example", "xn--bcher-kva.example", "bücher.example", id="idna"),
        pytest.param("Name.EXAMPLE.", "name.example", "name.example.", id="case-and-dot"),
        pytest.param("[::ffff:127.0.0.1]", "[::ffff:127.0.0.1]", "::ffff:127.0.0.1", id="ipv6"),
    ],
)
@pytest.mark.usefixtures("names")
def test_the_host_header_names_the_host_with_its_port(
    target: RawTarget, host: str, header: str, shown: str
) -> None:
    outcome = run(f"http://{host}:{target.port}/")
    assert outcome.message.startswith(f"Http Action - Response from host '{shown}': '200'")
    assert head_lines(target.requests[0])[1] == f"Host: {header}:{target.port}"


def test_user_information_in_the_uri_is_refused_and_nothing_sent(target: RawTarget) -> None:
    """A job stored before the API refused it: requests made it a Basic header the job never
    declared. The attempt fails naming the field, before anything is sent."""
    outcome = run(f"http://user:secret@127.0.0.1:{target.port}/")
    assert not outcome.succeeded
    assert outcome.message.startswith(
        "Http Action - action.request.uri: must not contain user information"
    )
    assert "authentication of type Basic" in outcome.message
    assert target.requests == []


def test_a_scheme_other_than_http_is_refused_in_requests_words(target: RawTarget) -> None:
    """A job stored before the API refused it: nothing is sent over HTTP to an ftp URI."""
    uri = f"ftp://127.0.0.1:{target.port}/"
    assert run(uri).message == (
        "Http Action - Request to host '127.0.0.1' failed: "
        f"InvalidSchema: No connection adapters were found for '{uri}'"
    )
    assert target.requests == []


def answer(headers: str, body: bytes, status: str = "200 OK") -> bytes:
    return f"HTTP/1.1 {status}\r\n{headers}\r\n".encode() + body


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


def raw_deflate(data: bytes) -> bytes:
    encoder = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return encoder.compress(data) + encoder.flush()


TEXT = b"hello, scheduler " * 20
ZIPPED = gzip.compress(TEXT)
MEMBERS = gzip.compress(TEXT[:9]) + gzip.compress(TEXT[9:])
GZIP = "Content-Encoding: gzip\r\n"
CHUNKED = "Transfer-Encoding: chunked\r\n"
DEFLATE = "Content-Encoding: deflate\r\n"


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(answer(f"Content-Length: {len(TEXT)}\r\n", TEXT), id="length"),
        pytest.param(answer("", TEXT), id="until-close"),
        pytest.param(answer(CHUNKED, chunked(TEXT[:7], TEXT[7:])), id="chunked"),
        pytest.param(answer(f"{GZIP}Content-Length: {len(ZIPPED)}\r\n", ZIPPED), id="gzip"),
        pytest.param(answer(GZIP + CHUNKED, chunked(ZIPPED[:10], ZIPPED[10:])), id="chunked-gzip"),
        pytest.param(answer(GZIP, MEMBERS), id="gzip-members"),
        pytest.param(answer(DEFLATE, zlib.compress(TEXT)), id="deflate"),
        pytest.param(answer(DEFLATE, raw_deflate(TEXT)), id="raw-deflate"),
    ],
)
def test_the_body_is_read_decoded_whatever_its_framing(reply: bytes) -> None:
    with RawTarget(reply) as target:
        outcome = run(target.url)
    assert outcome.succeeded
    assert outcome.message.endswith(f" Body: {TEXT.decode()}")


def test_a_compressed_body_is_decoded_only_as_far_as_the_history_keeps() -> None:
    """50 MB of gzip-compressed text (~50 KB on the wire): 2048 bytes of it are decoded."""
    bomb = gzip.compress(b"a" * 50_000_000, compresslevel=9)
    with RawTarget(answer("Content-Encoding: gzip\r\n", bomb)) as target:
        outcome = run(target.url)
    assert outcome.message.endswith(" Body: " + "a" * 2048)


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        pytest.param(answer("Content-Length: 100\r\n", b"only this"), UNREADABLE, id="short"),
        pytest.param(
            answer("Transfer-Encoding: chunked\r\n", b"3\r\nhel\r\n5\r\nlo"),
            UNREADABLE,
            id="chunk-cut",
        ),
        pytest.param(
            answer("Content-Encoding: gzip\r\nContent-Length: 9\r\n", b"not gzip!"),
            "<the body could not be read: DecodingError: the gzip body: Error -3 while "
            "decompressing data: incorrect header check>",
            id="not-gzip",
        ),
    ],
)
def test_a_body_cut_short_or_undecodable_is_said_so_and_the_status_decides(
    reply: bytes, shown: str
) -> None:
    with RawTarget(reply) as target:
        outcome = run(target.url)
    assert outcome.succeeded and outcome.status_code == 200
    assert outcome.message.endswith(f" Body: {shown}")


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        pytest.param(b"", "RemoteDisconnected: Remote end closed connection without response"),
        pytest.param(b"NOT HTTP\r\n\r\n", "BadStatusLine: 'NOT HTTP\\r\\n'", id="no-status"),
    ],
)
def test_no_status_line_is_a_failed_request_naming_the_cause(reply: bytes, cause: str) -> None:
    with RawTarget(reply) as target:
        outcome = run(target.url)
    assert outcome == ActionOutcome(
        False, f"Http Action - Request to host '127.0.0.1' failed: {cause}"
    )


@pytest.mark.usefixtures("names")
def test_a_name_that_does_not_resolve_is_said_so() -> None:
    outcome = run("http://nowhere.example/")
    assert outcome.message == (
        "Http Action - Request to host 'nowhere.example' failed: NameResolutionError: "
        "Failed to resolve 'nowhere.example' ([Errno -2] Name or service not known)"
    )


def test_the_response_headers_as_urllib3_showed_them() -> None:
    """Repeated fields joined by ", " (first spelling, first place), a folded one unfolded,
    Authorization hidden, Retry-After passed on."""
    headers = (
        "Set-Cookie: a=1\r\nX-Folded: one\r\n  two\r\nset-cookie: b=2\r\n"
        "Authorization: Bearer secret\r\nRetry-After: 120\r\nContent-Length: 0\r\n"
    )
    with RawTarget(answer(headers, b"", "503 Busy")) as target:
        outcome = run(target.url)
    assert outcome == ActionOutcome(
        False,
        "Http Action - Response from host '127.0.0.1': '503' Response Headers: "
        "Set-Cookie: a=1, b=2\r\nX-Folded: one two\r\nAuthorization: ***\r\n"
        "Retry-After: 120\r\nContent-Length: 0 Body: ",
        503,
        "120",
    )


def test_a_tls_handshake_never_answered_ends_at_the_deadline() -> None:
    """The target accepts the connection and says nothing: the handshake is given only the
    time left, like every other step."""
    with RawTarget(None) as target:
        started = time.monotonic()
        outcome = run(f"https://127.0.0.1:{target.port}/", timeout=1)
        elapsed = time.monotonic() - started
    assert 1 <= elapsed < 1.75, elapsed
    assert outcome.message == (
        "Http Action - Request to host '127.0.0.1' failed: the host did not answer within 1 seconds"
    )
