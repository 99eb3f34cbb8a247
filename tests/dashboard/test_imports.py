"""The dashboard and the API stand side by side on the use cases (`service`): each package
imports on its own, first, in a fresh interpreter, and the API app alone carries no
dashboard: the composition root (`runtime.create_web_app`) mounts it."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from devtools.azurite import ROOT
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.runtime import create_web_app
from tests.support.api_server import serve

UI = "/api/ui"


@pytest.mark.parametrize(
    "module",
    [
        "scheduler_lib.dashboard",
        "scheduler_lib.dashboard.words",
        "scheduler_lib.api",
        "scheduler_lib.service",
        "scheduler_lib.service.jobs",
        "scheduler_lib.runtime",
    ],
)
def test_imports_first(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_the_api_alone_has_no_dashboard_and_the_served_app_has_both(settings: Settings) -> None:
    """Over real HTTP: the sign-in page (it reads no storage without a cookie) is served by
    the composed app only, and the API answers the same on both."""
    for app, signin in ((create_app(settings), 404), (create_web_app(settings), 200)):
        with serve(app) as server, httpx.Client(base_url=server.base_url) as client:
            assert client.get(UI + "/signin").status_code == signin
            assert client.get("/api/docs").status_code == 200  # the API, on both
