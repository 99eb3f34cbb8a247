"""The README's examples, run as written against a live scheduler (so they cannot rot): the
SDK block against the API with an executor consuming its queue and a real HTTP target; the
preview command through a shell; the curl section's key set by a command, not by hand."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

from devtools.devhost import worker_loop
from scheduler_lib.config import Settings
from scheduler_lib.runtime import Runtime
from tests.support.api_server import serve
from tests.support.http_target import HttpTarget

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def test_the_sdk_example_runs_and_prints_its_first_execution(settings: Settings, capsys) -> None:
    [code] = _blocks("python")
    runtime = Runtime(settings)
    runtime.ensure_storage()
    stop = threading.Event()
    worker = threading.Thread(target=worker_loop, args=(runtime, stop), name="readme-worker")
    with HttpTarget() as target, serve(runtime.api) as running:
        worker.start()
        try:
            for name, value in (
                ("BASE_URL", running.api_url),
                ("KEY", settings.api_keys[0]),
                ("TARGET", target.url_for("/")),
            ):
                code, replaced = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", code, flags=re.M)
                assert replaced == 1, name
            exec(compile(code, str(README), "exec"), {"__name__": "readme"})
        finally:
            stop.set()
            worker.join(timeout=60)
        assert [request.method for request in target.requests] == ["GET"]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "enabled 0"  # 2016-03-01's spelling, which the SDK passes through
    assert printed[1].startswith("Completed Http Action - Response from host '127.0.0.1': '200'")
    assert len(printed) == 2


def test_the_preview_example_prints_last_fridays() -> None:
    [command] = [block for block in _blocks("sh") if "scheduler_lib preview" in block]
    command = command.replace(".venv/bin/python", str(ROOT / ".venv/bin/python"))
    result = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[1:]
    assert len(rows) == 5
    assert all(row.split()[2] == "09:00:00Z" and row.endswith("Fri") for row in rows)


def test_the_curl_example_sets_the_key_with_a_command() -> None:
    section = README.read_text().split("## A first job", 1)[1].split("\n## ", 1)[0]
    assert "KEY=$(cat .scheduler-api-key)" in section
    assert '"Authorization: Bearer $KEY"' in section
