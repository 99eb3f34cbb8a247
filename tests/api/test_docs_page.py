"""The /api/docs page works offline: it and every asset it loads come from the app itself
(no CDN), without a key; and the OpenAPI document carries no FastAPI leftovers."""

import re
from urllib.parse import urljoin, urlsplit

import httpx


def _document(server) -> dict:
    response = httpx.get(server.api_url + "/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_the_page_loads_only_assets_the_app_serves_without_a_key(server):
    page = httpx.get(server.api_url + "/docs")
    assert page.status_code == 200 and "swagger" in page.text.lower()
    urls = re.findall(r"""(?:src|href)\s*=\s*['"]([^'"]+)['"]""", page.text)
    urls += re.findall(r"""\burl\s*:\s*['"]([^'"]+)['"]""", page.text)  # the spec's URL
    media = {}
    for url in urls:
        absolute = urljoin(page.url.__str__(), url)
        assert urlsplit(absolute).netloc == urlsplit(server.base_url).netloc, url
        response = httpx.get(absolute)  # no Authorization header
        assert response.status_code == 200, (url, response.text[:200])
        assert response.content
        media[urlsplit(absolute).path.rsplit(".", 1)[-1]] = response.headers["content-type"]
    assert media["js"].startswith("application/javascript")
    assert media["css"].startswith("text/css")
    assert media["png"] == "image/png"  # the favicon
    assert media["json"].startswith("application/json")


def test_the_swagger_ui_is_a_current_release(server):
    """Swagger UI 5 is the first to render OpenAPI 3.1, which FastAPI writes."""
    bundle = httpx.get(server.api_url + "/docs/swagger-ui-bundle.js").text
    [version] = set(re.findall(r'PACKAGE_VERSION:"(\d+)\.\d+\.\d+"', bundle))
    assert int(version) >= 5
    assert _document(server)["openapi"].startswith("3.1")


def test_openapi_has_no_framework_validation_leftovers(server):
    document = _document(server)
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], (method, path)
            if operation.get("parameters") or operation.get("requestBody"):
                assert "400" in operation["responses"], (method, path)  # what a bad one gets
    refs = set(
        re.findall(
            r'"#/components/schemas/([^"]+)"', httpx.get(server.api_url + "/openapi.json").text
        )
    )
    assert refs <= set(schemas)
