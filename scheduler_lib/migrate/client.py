"""The scheduler's REST API as the import and the export use it: GET and PUT of job
collections and jobs, their lists, and the export's bundle, over HTTP, so that an import
reaches a deployed app exactly as it reaches `make run`'s.

Every write goes through the API's routes, so an imported job is validated, quota-checked,
scheduled and stored by the code every other client goes through; a refusal comes back as
the API's ARM error (code, message, target), which the import reports as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol
from urllib.parse import quote

import requests

from scheduler_lib.domain.json_values import JSONObject, as_list
from scheduler_lib.wire import arm


class ApiError(Exception):
    """The API refused a request: its status and ARM error."""

    def __init__(self, status: int, code: str, message: str, target: str | None = None) -> None:
        self.status, self.code, self.message, self.target = status, code, message, target
        super().__init__(f"{status} {code}: {message}")


class Unreachable(Exception):
    """No answer from the scheduler at all (not running, wrong URL)."""


@dataclass(frozen=True)
class Address:
    subscription: str
    resource_group: str
    collection: str
    job: str | None = None

    def path(self) -> str:
        sub, group, collection, job = (
            quote(p or "", safe="")
            for p in (self.subscription, self.resource_group, self.collection, self.job)
        )
        base = f"/subscriptions/{sub}/resourceGroups/{group}/providers/{arm.COLLECTION_TYPE}"
        return f"{base}/{collection}" + (f"/jobs/{job}" if self.job else "")


class Scheduler(Protocol):
    """What `apply` asks of a scheduler: this HTTP client, or the import use case's own
    (`service/imports.ServiceScheduler`, the same GET and PUT through the use cases)."""

    def get(self, address: Address, version: str) -> JSONObject | None: ...

    def put(self, address: Address, body: JSONObject, version: str) -> JSONObject: ...


class SchedulerClient:
    def __init__(self, base_url: str, key: str, *, timeout: float = 60) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"
        self.timeout = timeout

    def get(self, address: Address, version: str) -> JSONObject | None:
        """The resource as GET returns it, or None when it does not exist."""
        response = self._send("GET", address, version)
        if response.status_code == 404:
            return None
        return _json(response)

    def put(self, address: Address, body: JSONObject, version: str) -> JSONObject:
        return _json(self._send("PUT", address, version, body))

    def list_collections(
        self, subscription: str, resource_group: str | None, version: str
    ) -> list[JSONObject]:
        """The job collections of a subscription (or one of its resource groups), every page."""
        sub = quote(subscription, safe="")
        group = f"/resourceGroups/{quote(resource_group, safe='')}" if resource_group else ""
        url: str | None = f"{self.base_url}/subscriptions/{sub}{group}/providers/" + (
            arm.COLLECTION_TYPE
        )
        params: dict[str, str] | None = {"api-version": version}
        found: list[JSONObject] = []
        while url:
            page = _json(self._request("GET", url, params))
            link = page.get("nextLink")
            found += [item for item in as_list(page.get("value")) if isinstance(item, dict)]
            url = link if isinstance(link, str) and link else None
            params = None  # a nextLink carries its own query
        return found

    def download(
        self, address: Address, params: dict[str, str], sink: BinaryIO, *, chunk: int = 65536
    ) -> None:
        """GET `address` + `/export` into `sink` as it arrives (a bundle is never held whole
        here); ApiError when the API refuses it."""
        url = self.base_url + address.path() + "/export"
        response = self._request("GET", url, params, stream=True)
        with response:
            if response.status_code >= 400:
                _json(response)
            try:
                for part in response.iter_content(chunk):
                    sink.write(part)
            except requests.RequestException as error:
                raise Unreachable(f"the export from {self.base_url} broke off ({error})") from None

    def _send(
        self, method: str, address: Address, version: str, body: Any = None
    ) -> requests.Response:
        url = self.base_url + address.path()
        return self._request(method, url, {"api-version": version}, body=body)

    def _request(
        self,
        method: str,
        url: str,
        params: dict[str, str] | None,
        *,
        body: Any = None,
        stream: bool = False,
    ) -> requests.Response:
        try:
            return self.session.request(
                method, url, params=params, json=body, timeout=self.timeout, stream=stream
            )
        except requests.RequestException as error:
            raise Unreachable(
                f"the scheduler at {self.base_url} does not answer ({error})"
            ) from None


def _json(response: requests.Response) -> JSONObject:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code >= 400:
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else {}
        raise ApiError(
            response.status_code,
            str(error.get("code", response.reason)),
            str(error.get("message", response.text[:200])),
            error.get("target"),
        )
    return body if isinstance(body, dict) else {}
