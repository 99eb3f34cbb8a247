"""Command line: `python -m scheduler_lib preview JOB.json [--count N] [--now ISO]`, and
`python -m scheduler_lib import FILE...` (ARM, Bicep, Terraform, export bundles; see
docs/import.md) and `python -m scheduler_lib export` (docs/export.md).

An entry point, so it may read the clock: `--now` defaults to the current time. A job that
fails validation prints one line naming the field to stderr and exits with status 2, the
same status argparse uses for a bad command line.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.migrate import add_export_command, add_import_command, run_export, run_import
from scheduler_lib.schedule import job_properties, preview_table, read_now
from scheduler_lib.wire.arm import job_key_of_id

USAGE_ERROR = 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler_lib")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("preview", help="list a job's next executions")
    show.add_argument(
        "job", help="job JSON file ({'properties': {...}} or the properties); - = stdin"
    )
    show.add_argument("--count", type=_positive, default=10, help="how many (default 10)")
    show.add_argument(
        "--now", type=_instant, help="evaluate as of this ISO 8601 instant (default: now; UTC)"
    )
    add_import_command(commands, _instant)
    add_export_command(commands)
    args = parser.parse_args(argv)
    if args.command == "import":
        return run_import(args, now=datetime.now(UTC))
    if args.command == "export":
        return run_export(args)
    now = args.now or datetime.now(UTC)
    try:
        document = _load(args.job)
        # A job as GET returns it names itself: with jitter, its starts are shown too.
        identity = job_key_of_id(document.get("id") if isinstance(document, dict) else None)
        table = preview_table(
            job_properties(document), now=now, count=args.count, identity=identity
        )
        print(table)
    except (OSError, ValueError) as error:  # ValidationError is a ValueError
        prefix = "invalid job" if isinstance(error, ValidationError) else args.job
        print(f"error: {prefix}: {error}", file=sys.stderr)
        return USAGE_ERROR
    return 0


def _load(path: str) -> Any:
    """The JSON document of a file holding a whole job or just its properties."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON ({error})") from None
    return document


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _instant(text: str) -> datetime:
    try:
        return read_now(text, "--now")
    except ValidationError as error:
        raise argparse.ArgumentTypeError(error.message) from None


if __name__ == "__main__":
    sys.exit(main())
