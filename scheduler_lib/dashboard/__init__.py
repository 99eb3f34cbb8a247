"""The web dashboard at /api/ui/: see and operate every job in a browser.

Server-rendered pages (Jinja2) with a little JavaScript from static files; every read and
write goes through the use cases the REST API uses too (`service`: jobs, collections, the
preview, backfill, the overview), so there is one set of rules and one set of errors.
Signing in exchanges an API key for a signed session cookie (`session`); mutating requests
are CSRF-checked (`csrf`); every page carries a strict Content-Security-Policy (`web`).

Modules: `session` and `csrf` (who may do what), `web` (templates, headers, paths),
`handlers` (errors to pages), `signin`, `pages`, `actions`, `bulk`, `editor`, `imports` (routes),
`views`,
`runs` (what the pages show; `runs`: upcoming runs at their jittered start),
`svg` (charts), `words` (schedules in plain words), `forms` (the job form to JSON and back).
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from scheduler_lib.dashboard import actions, bulk, editor, imports, pages, signin
from scheduler_lib.dashboard.web import UI

__all__ = ["UI", "mount_dashboard"]


def mount_dashboard(app: FastAPI) -> None:
    """Add the dashboard's routes and static files to the API app (which must hold an
    `ApiContext` in `app.state.context`, as `api.create_app` builds); `runtime.create_web_app`
    calls it."""
    for module in (signin, pages, actions, bulk, editor, imports):
        app.include_router(module.router)
    static = resources.files("scheduler_lib.dashboard").joinpath("static")
    app.mount(UI + "/static", StaticFiles(directory=str(static)), name="dashboard-static")
