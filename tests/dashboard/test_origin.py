"""Where a mutating dashboard request comes from, judged without believing what the client
says about it: `Origin` must name this site, and `X-Forwarded-Host` counts only when it comes
from a proxy the operator named (`SCHEDULER_TRUSTED_PROXIES`). The public URL
(`SCHEDULER_PUBLIC_URL`) and App Service's host name (`WEBSITE_HOSTNAME`) name this site
behind a front end. Real HTTP requests against the real app; the job is read back through
the REST API to see whether the button did anything."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from scheduler_lib.config import Settings
from scheduler_lib.runtime import create_web_app
from tests.api.conftest import SUB, api_client, http_action, job_path, make_collection
from tests.dashboard.conftest import UI, browser, csrf_token, sign_in
from tests.support.api_server import ApiServer, ManualClock, serve

JOB = f"{UI}/c/{SUB}/rg1/coll/jobs/job1"
FOREIGN = "https://evil.example"
SPOOFED = {"X-Forwarded-Host": "evil.example"}


def _make_job(server: ApiServer) -> None:
    with api_client(server) as api:
        make_collection(api)
        body = {"properties": {"action": http_action(), "state": "Enabled",
                               "recurrence": {"frequency": "Hour", "interval": 1}}}  # fmt: skip
        assert api.put(job_path(), json=body).status_code in (200, 201)


def _state(server: ApiServer) -> str:
    with api_client(server) as api:
        return str(api.get(job_path()).json()["properties"]["state"])


@pytest.fixture
def site(
    settings: Settings, clock: ManualClock, request
) -> Iterator[tuple[ApiServer, httpx.Client]]:
    """A server (with the settings the test's `front` parameter changes), a job on it, and a
    signed-in browser."""
    changes = getattr(request, "param", {})
    with serve(create_web_app(replace(settings, **changes), clock=clock)) as server:
        _make_job(server)
        with browser(server) as client:
            assert sign_in(client).status_code == 303
            yield server, client


def _disable(client: httpx.Client, **headers: str) -> httpx.Response:
    token = csrf_token(client.get(UI + "/"))
    return client.post(JOB + "/disable", data={"csrf": token}, headers=headers)


def test_a_client_sent_forwarded_host_does_not_make_a_foreign_origin_this_site(site) -> None:
    server, client = site
    answer = _disable(client, Origin=FOREIGN, **SPOOFED)
    assert answer.status_code == 403 and "Origin" in answer.text
    assert _state(server) == "enabled"  # as 2016-03-01 writes it


def test_a_spoofed_forwarded_host_does_not_sign_in_either(site) -> None:
    server, _ = site
    with browser(server) as client:
        headers = {"Origin": FOREIGN, "X-Forwarded-Host": "evil.example"}
        refused = client.post(UI + "/signin", data={"key": "test-key"}, headers=headers)
        assert refused.status_code == 403 and "set-cookie" not in refused.headers


def test_a_same_origin_request_still_works(site) -> None:
    server, client = site
    assert _disable(client, Origin=server.base_url).status_code == 303
    assert _state(server) == "disabled"


@pytest.mark.parametrize("site", [{"public_url": "https://scheduler.example.com/"}], indirect=True)
def test_the_public_url_is_this_site_behind_a_proxy(site) -> None:
    """Behind a reverse proxy the browser's Origin is the public URL while the request's
    Host is the app's own address: the configured URL says they are one site."""
    server, client = site
    assert _disable(client, Origin="http://scheduler.example.com").status_code == 403  # scheme
    assert _disable(client, Origin="https://scheduler.example.com:8443").status_code == 403
    assert _disable(client, Origin=FOREIGN, **SPOOFED).status_code == 403
    assert _state(server) == "enabled"  # as 2016-03-01 writes it
    assert _disable(client, Origin="https://scheduler.example.com").status_code == 303
    assert _state(server) == "disabled"


@pytest.mark.parametrize("site", [{"platform_hostname": "func-api-x.azurewebsites.net"}],
                         indirect=True)  # fmt: skip
def test_app_services_host_name_is_this_site(site) -> None:
    server, client = site
    assert _disable(client, Origin=FOREIGN, **SPOOFED).status_code == 403
    assert _disable(client, Origin="https://func-api-x.azurewebsites.net").status_code == 303
    assert _state(server) == "disabled"


@pytest.mark.parametrize("site", [{"trusted_proxies": ("127.0.0.0/8",)}], indirect=True)
def test_a_trusted_proxys_forwarded_host_is_believed(site) -> None:
    """The test's requests come from 127.0.0.1, here named a trusted proxy: what it says
    the browser asked for is this site."""
    server, client = site
    forwarded = {"X-Forwarded-Host": "scheduler.internal.example", "X-Forwarded-Proto": "https"}
    assert _disable(client, Origin=FOREIGN, **forwarded).status_code == 403
    answer = _disable(client, Origin="https://scheduler.internal.example", **forwarded)
    assert answer.status_code == 303
    assert _state(server) == "disabled"


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"trusted_proxies": ("10.0.0.0/33",)}, "SCHEDULER_TRUSTED_PROXIES"),
        ({"trusted_proxies": ("proxy.example",)}, "SCHEDULER_TRUSTED_PROXIES"),
        ({"public_url": "scheduler.example.com"}, "SCHEDULER_PUBLIC_URL"),
        ({"public_url": "ftp://scheduler.example.com"}, "SCHEDULER_PUBLIC_URL"),
    ],
)
def test_a_malformed_setting_stops_the_app_naming_it(settings, changes, field) -> None:
    with pytest.raises(ValueError, match=field):
        create_web_app(replace(settings, **changes))
