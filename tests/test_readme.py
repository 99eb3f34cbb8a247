"""The README's SDK example, run as written against a live API (so it cannot rot)."""

import re
from pathlib import Path

from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from tests.support.api_server import serve

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_block() -> str:
    [block] = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    return block


def test_the_sdk_example_runs(settings: Settings, capsys) -> None:
    code = _python_block()
    with serve(create_app(settings)) as running:
        code = re.sub(r"^BASE_URL = .*$", f"BASE_URL = {running.api_url!r}", code, flags=re.M)
        code = re.sub(r"^KEY = .*$", f"KEY = {settings.api_keys[0]!r}", code, flags=re.M)
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "Enabled 0"
