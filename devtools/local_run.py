"""`make run`: a working scheduler on this machine with one command.

`python -m devtools.local_run [--host HOST] [--port PORT]` (`make run ARGS="--port 7072"`)
first checks that the API's port is free, so a second `make run` fails at once with one line
instead of after starting Azurite and a dispatcher tick. Then it starts Azurite with its
data under `.azurite/` (jobs survive a restart; an Azurite that already listens on the
default ports is reused), creates an API key on first run and keeps it in the git-ignored
`.scheduler-api-key`, prints how to call the API, then runs the local host until Ctrl-C,
and stops the Azurite it started. The app settings the host requires and a user has not set
(the queue names, `LOCAL_SETTINGS`) it sets to local.settings.json.example's values.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
from pathlib import Path

from devtools.azurite import ROOT, port_open, start_azurite
from devtools.devhost import serve
from scheduler_lib.config import DISPATCH_QUEUE, EXECUTION_QUEUE, Settings
from scheduler_lib.logs import configure_logging

KEY_FILE = ROOT / ".scheduler-api-key"
DATA_DIR = ROOT / ".azurite"
AZURITE_PORTS = (10000, 10001, 10002)  # what the default connection string points at
#: Required app settings (the queue triggers bind to them) with the values a deployment and
#: local.settings.json.example use: the host itself has no default for them.
LOCAL_SETTINGS = {
    "SCHEDULER_EXECUTION_QUEUE": EXECUTION_QUEUE,
    "SCHEDULER_DISPATCH_QUEUE": DISPATCH_QUEUE,
}


def app_settings(environ: dict[str, str]) -> dict[str, str]:
    """`environ` with `LOCAL_SETTINGS` for those it does not set."""
    return {**LOCAL_SETTINGS, **{k: v for k, v in environ.items() if v}}


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


def banner(port: int, key: str, host: str = "127.0.0.1") -> str:
    """What a new user needs: where the API is, the key, and a first job to paste."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    base = f"http://{shown}:{port}/api"
    coll = (
        f"{base}/subscriptions/local/resourceGroups/demo"
        "/providers/Microsoft.Scheduler/jobCollections/demo"
    )
    collection = {"location": "local", "properties": {"sku": {"name": "Standard"}}}
    job = {
        "properties": {
            # The scheduler's own health probe: answers without a key, and without internet.
            "action": {"type": "Http", "request": {"method": "GET", "uri": f"{base}/health"}},
            "recurrence": {"frequency": "Minute", "interval": 1, "count": 3},
        }
    }
    auth = f"-H 'Authorization: Bearer {key}'"
    json_header = "-H 'Content-Type: application/json'"
    return f"""
Scheduler running.
  Dashboard: {base}/ui/   (sign in with the API key below)
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.local_run",
        description="Run the scheduler on this machine: Azurite (data in .azurite/, reused if "
        "already running), the API, the dispatcher and the executor, until Ctrl-C. "
        'From make: make run ARGS="--port 7072".',
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("PORT", "7071")),
        help="port of the API (default: $PORT or 7071)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address the API listens on (default: 127.0.0.1; 0.0.0.0 for every interface)",
    )
    return parser.parse_args(argv)


def port_in_use(host: str, port: int) -> OSError | None:
    """Why the API could not listen on (`host`, `port`), or None if it can. Binds as uvicorn
    does (SO_REUSEADDR), so a port only in TIME_WAIT counts as free."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            return error
    return None


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    host, port = args.host, args.port
    problem = port_in_use(host, port)
    if problem is not None:
        raise SystemExit(
            f"local_run: cannot listen on {host}:{port} ({problem.strerror}); is another "
            f'`make run` running? Pick another port: make run ARGS="--port {port + 1}"'
        )
    key = api_key()
    os.environ["SCHEDULER_API_KEYS"] = os.environ.get("SCHEDULER_API_KEYS") or key
    os.environ.update(app_settings(dict(os.environ)))
    azurite = None
    if not os.environ.get("AzureWebJobsStorage") and not port_open(AZURITE_PORTS[2]):
        DATA_DIR.mkdir(exist_ok=True)
        azurite = start_azurite(location=DATA_DIR, ports=AZURITE_PORTS)
    settings = Settings.from_env()
    configure_logging(settings)
    try:
        serve(
            settings,
            port=port,
            host=host,
            on_started=lambda: print(banner(port, key, host), flush=True),
        )
    finally:
        if azurite is not None:
            azurite.stop()


if __name__ == "__main__":
    main()
