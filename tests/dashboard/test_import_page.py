"""The dashboard's Import page over HTTP as a browser posts it (multipart upload, CSRF token,
no script): linked from the overview; refused without the token (nothing written); the
upload previews each collection and job with its outcome and next runs and writes nothing;
Apply creates them (read back through the API), a second Apply finds them unchanged; a
sealed preview that was tampered with is a 400; no secret of the source is in any page."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.api.conftest import SUB, api_client
from tests.dashboard.conftest import UI, csrf_token
from tests.support.api_server import ApiServer

TERRAFORM = Path(__file__).parents[1] / "migrate" / "fixtures" / "terraform" / "scheduler-jobs"
GROUP, COLL = "tfex-job_collection", "tfex-scheduler-job-collection"
JOB = f"/subscriptions/{SUB}/resourceGroups/{GROUP}/providers/Microsoft.Scheduler/jobCollections/{COLL}/jobs/tfex-web-recurring"  # noqa: E501
SECRET = "apassword"  # the Basic password written in the Terraform example


def upload(client: httpx.Client, token: str | None) -> httpx.Response:
    files = [
        ("files", (p.name, p.read_bytes(), "text/plain")) for p in sorted(TERRAFORM.glob("*.tf"))
    ]
    data = {"subscription": SUB, **({"csrf": token} if token else {})}
    return client.post(UI + "/import", data=data, files=files)


def outcomes(page: httpx.Response) -> set[str]:
    return set(re.findall(r'<span class="outcome">([^<]*)</span>', page.text))


def apply(client: httpx.Client, page: httpx.Response) -> httpx.Response:
    form = page.text.split('action="/api/ui/import/apply"', 1)[1].split("</form>", 1)[0]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))
    return client.post(UI + "/import/apply", data=fields, files={"unused": ("", b"")})


def test_the_overview_links_to_the_import_page(signed_in) -> None:
    assert f'href="{UI}/import"' in signed_in.get(UI + "/").text
    page = signed_in.get(UI + "/import")
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text


def test_upload_needs_the_csrf_token(signed_in, server: ApiServer) -> None:
    assert upload(signed_in, None).status_code == 403
    with api_client(server) as api:
        assert api.get(JOB).status_code == 404


def test_upload_previews_then_apply_creates(signed_in, server: ApiServer) -> None:
    token = csrf_token(signed_in.get(UI + "/import"))
    preview = upload(signed_in, token)
    assert preview.status_code == 200, preview.text
    assert "Preview (dry run, nothing written)" in preview.text
    assert f"job {GROUP}/{COLL}/tfex-web-recurring" in preview.text
    assert outcomes(preview) == {"would create"}
    row = preview.text.split(f"job {GROUP}/{COLL}/tfex-web-recurring", 1)[1].split("</tr>")[0]
    assert len(re.findall(r"<time>", row)) == 5  # its next 5 runs
    assert SECRET not in preview.text
    with api_client(server) as api:
        assert api.get(JOB).status_code == 404  # nothing written

        applied = apply(signed_in, preview)
        assert applied.status_code == 200, applied.text
        assert "Imported:" in applied.text and outcomes(applied) == {"created"}
        assert SECRET not in applied.text
        job = api.get(JOB)
        assert job.status_code == 200
        assert job.json()["properties"]["action"]["request"]["uri"] == "http://example.com"

        again = apply(signed_in, preview)
        assert again.status_code == 200 and outcomes(again) == {"unchanged"}


def test_a_tampered_preview_is_refused(signed_in, server: ApiServer) -> None:
    token = csrf_token(signed_in.get(UI + "/import"))
    preview = upload(signed_in, token)
    forged = preview.text.replace('name="sealed" value="', 'name="sealed" value="x', 1)
    answer = apply(signed_in, httpx.Response(200, text=forged))
    assert answer.status_code == 400 and "upload the files again" in answer.text
    with api_client(server) as api:
        assert api.get(JOB).status_code == 404
