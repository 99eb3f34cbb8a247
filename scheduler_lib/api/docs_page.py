"""The interactive API page at /api/docs, with every asset served by the app itself.

FastAPI's own page loads Swagger UI from a CDN, so without internet (a dev machine offline, a
Function App behind a private endpoint) it is a blank white page. The Swagger UI distribution
comes from the `fastapi-swagger` wheel (a maintained repackaging of the npm `swagger-ui-dist`
files as Python package data), so the remote build installs it from requirements.txt like any
other dependency and nothing is copied into this repository by hand.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import cache
from importlib import resources

from fastapi import FastAPI, Response
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from scheduler_lib.api.openapi_versions import DOCUMENT_PATHS
from scheduler_lib.api.paths import PREFIX

DOCS_PATH = PREFIX + "/docs"
#: URL path → (file in the `fastapi_swagger.resources` package, media type).
ASSETS = {
    DOCS_PATH + "/swagger-ui-bundle.js": ("swagger-ui-bundle.js", "application/javascript"),
    DOCS_PATH + "/swagger-ui.css": ("swagger-ui.css", "text/css"),
    DOCS_PATH + "/favicon.png": ("favicon-32x32.png", "image/png"),
}
#: One OpenAPI document per api-version. Swagger UI's own chooser (`urls`) lives in its
#: standalone preset, which the wheel does not ship (without it `urls` shows nothing), so
#: the page has a plain one: it loads the chosen document into the same Swagger UI.
VERSION_PICKER = (
    '<label id="api-version-picker" style="font-family:sans-serif;margin:1em">api-version '
    '<select onchange="ui.specActions.updateUrl(this.value); '
    'ui.specActions.download(this.value)">'
    + "".join(
        f'<option value="{path}">{version.value}</option>'
        for version, path in DOCUMENT_PATHS.items()
    )
    + "</select></label>"
)
#: The assets only change with the package version; a browser may keep them a day.
_CACHE_CONTROL = "public, max-age=86400"


@cache
def asset(path: str) -> bytes:
    """The bytes of one Swagger UI file (read once per worker; 2 MB in all)."""
    name, _ = ASSETS[path]
    return resources.files("fastapi_swagger.resources").joinpath(name).read_bytes()


def add_docs_page(app: FastAPI) -> None:
    """Serve the page and its assets (outside the OpenAPI document; no key needed, see
    `middleware.PUBLIC_PATHS`)."""
    js, css, favicon = ASSETS

    @app.get(DOCS_PATH, include_in_schema=False)
    async def docs_page() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url=app.openapi_url or PREFIX + "/openapi.json",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=js,
            swagger_css_url=css,
            swagger_favicon_url=favicon,
        )
        html = bytes(page.body).decode().replace("<body>", "<body>" + VERSION_PICKER, 1)
        return HTMLResponse(html)

    for path, (_, media_type) in ASSETS.items():
        app.add_api_route(
            path, _asset_route(path, media_type), methods=["GET"], include_in_schema=False
        )


def _asset_route(path: str, media_type: str) -> Callable[[], Awaitable[Response]]:
    async def serve_asset() -> Response:
        return Response(
            asset(path), media_type=media_type, headers={"Cache-Control": _CACHE_CONTROL}
        )

    serve_asset.__name__ = "docs_asset_" + path.rsplit("/", 1)[-1].replace("-", "_")
    return serve_asset
