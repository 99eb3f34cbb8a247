"""`make run`: a working scheduler on this machine with one command.

Starts Azurite with its data under `.azurite/` (jobs survive a restart; an Azurite that
already listens on the default ports is reused), creates an API key on first run and keeps
it in the git-ignored `.scheduler-api-key`, prints how to call the API, then runs the
local host until Ctrl-C, and stops the Azurite it started.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from scheduler_lib.azurite import ROOT, port_open, start_azurite
from scheduler_lib.config import Settings
from scheduler_lib.devhost import serve
from scheduler_lib.logs import configure_logging

KEY_FILE = ROOT / ".scheduler-api-key"
DATA_DIR = ROOT / ".azurite"
AZURITE_PORTS = (10000, 10001, 10002)  # what the default connection string points at


def api_key(path: Path = KEY_FILE) -> str:
    """The local API key: `SCHEDULER_API_KEYS` if set, else the one kept in `path`."""
    configured = os.environ.get("SCHEDULER_API_KEYS", "").split(",")[0].strip()
    if configured:
        return configured
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(32)
    path.write_text(key + "\n")
    path.chmod(0o600)
    return key


def banner(port: int, key: str) -> str:
    """What a new user needs: where the API is, the key, and a first job to paste."""
    base = f"http://127.0.0.1:{port}/api"
    coll = (
        f"{base}/subscriptions/local/resourceGroups/demo"
        "/providers/Microsoft.Scheduler/jobCollections/demo"
    )
    collection = {"location": "local", "properties": {"sku": {"name": "Standard"}}}
    job = {
        "properties": {
            "action": {"type": "Http", "request": {"method": "GET", "uri": "https://example.com/"}},
            "recurrence": {"frequency": "Minute", "interval": 1, "count": 3},
        }
    }
    auth = f"-H 'Authorization: Bearer {key}'"
    json_header = "-H 'Content-Type: application/json'"
    return f"""
Scheduler running.
  API:      {base}   (OpenAPI page: {base}/docs)
  API key:  {key}   (kept in {KEY_FILE.name})

Try it:
  curl -X PUT '{coll}?api-version=2016-03-01' {auth} {json_header} \\
    -d '{json.dumps(collection)}'
  curl -X PUT '{coll}/jobs/hello?api-version=2016-03-01' {auth} {json_header} \\
    -d '{json.dumps(job)}'
  curl '{coll}/jobs/hello/history?api-version=2016-03-01' {auth}

Ctrl-C stops the scheduler and Azurite.
"""


def main() -> None:
    port = int(os.environ.get("PORT", "7071"))
    key = api_key()
    os.environ["SCHEDULER_API_KEYS"] = os.environ.get("SCHEDULER_API_KEYS") or key
    azurite = None
    if not os.environ.get("AzureWebJobsStorage") and not port_open(AZURITE_PORTS[2]):
        DATA_DIR.mkdir(exist_ok=True)
        azurite = start_azurite(location=DATA_DIR, ports=AZURITE_PORTS)
    settings = Settings.from_env()
    configure_logging(settings)
    try:
        serve(settings, port=port, on_started=lambda: print(banner(port, key), flush=True))
    finally:
        if azurite is not None:
            azurite.stop()


if __name__ == "__main__":
    main()
