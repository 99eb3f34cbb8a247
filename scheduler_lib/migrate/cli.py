"""`python -m scheduler_lib import FILE...`: the import's command line.

An entry point, so it may read the clock and the environment: the scheduler's address is
`--url` or `SCHEDULER_URL` (default `make run`'s), its key `SCHEDULER_API_KEY` or the file
`make run` writes (`--key-file`, default `.scheduler-api-key`). Exit status: 0 when every
resource was created, replaced, unchanged (or would be), 1 when one was refused, skipped or
left alone in a conflict, 2 when the source cannot be imported as it stands (nothing is
written then) or the scheduler does not answer.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from scheduler_lib.migrate.apply import GOOD, execute
from scheduler_lib.migrate.client import SchedulerClient, Unreachable
from scheduler_lib.migrate.convert import Target, build_plan
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.problems import SourceError
from scheduler_lib.migrate.report import render
from scheduler_lib.migrate.sources import SourceOptions, read_sources

DEFAULT_URL = "http://127.0.0.1:7071/api"
FAILED, SOURCE_ERROR = 1, 2


def add_command(commands: Any, instant: Any) -> None:
    """The `import` subcommand on the CLI's subparsers (`instant` reads an ISO option)."""
    command = commands.add_parser(
        "import",
        help="import job collections and jobs from ARM templates, Bicep or Terraform",
        description="Reads Microsoft.Scheduler resources (ARM JSON, Bicep) or azurerm 1.x "
        "scheduler resources (Terraform) and creates them through the scheduler's API. "
        "See docs/import.md.",
    )
    add = command.add_argument
    add("files", nargs="+", type=Path, metavar="FILE", help=".json, .bicep, .tf, .tfvars")
    add(
        "--parameters",
        action="append",
        type=Path,
        default=[],
        metavar="FILE",
        help="an ARM parameters JSON (ARM, Bicep) or a .tfvars file",
    )
    add(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter's value, or the value at a source path the messages print "
        "(NAME:=JSON for a JSON value)",
    )
    add("--subscription", required=True, metavar="ID", help="the subscription id to import to")
    add(
        "--resource-group",
        metavar="RG",
        help="the resource group (Terraform: otherwise resource_group_name)",
    )
    add("--location", help="what resourceGroup().location is")
    add("--collection", metavar="NAME", help="the job collection the jobs go to")
    add(
        "--import-time",
        type=instant,
        metavar="ISO",
        help="what utcNow() and timestamp() are (never the clock); previews start there",
    )
    add(
        "--secrets",
        type=Path,
        metavar="FILE",
        help="an export bundle's secrets: its secrets list, a value each (docs/export.md)",
    )
    add("--dry-run", action="store_true", help="print what would be done; write nothing")
    add(
        "--offline",
        action="store_true",
        help="with --dry-run: do not ask the scheduler (no comparison)",
    )
    add("--replace", action="store_true", help="replace existing resources that differ")
    add(
        "--url",
        default=os.environ.get("SCHEDULER_URL", DEFAULT_URL),
        help=f"the API's base URL (default: SCHEDULER_URL, else {DEFAULT_URL})",
    )
    add("--key-file", type=Path, default=Path(".scheduler-api-key"),
        help="the file holding the API key, unless SCHEDULER_API_KEY is set")  # fmt: skip


def run(args: argparse.Namespace, *, now: datetime) -> int:
    if args.offline and not args.dry_run:
        print("error: --offline only goes with --dry-run", file=sys.stderr)
        return SOURCE_ERROR
    deployment = Deployment(args.subscription, args.resource_group, args.location, args.import_time)
    options = SourceOptions(
        args.files, args.parameters, args.sets, deployment, args.collection, args.secrets
    )
    try:
        found, read = read_sources(options)
        plan = build_plan(found, Target(args.subscription, args.resource_group, args.collection))
        client = None if args.offline else SchedulerClient(args.url, api_key(args.key_file))
        results = execute(
            plan, client, args.subscription, dry_run=args.dry_run, replace=args.replace
        )
    except (SourceError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return SOURCE_ERROR
    except Unreachable as error:
        print(f"error: {error}", file=sys.stderr)
        return SOURCE_ERROR
    print(render(results, now=args.import_time or now, dry_run=args.dry_run, read=read))
    return 0 if all(result.outcome in GOOD for result in results) else FAILED


def api_key(path: Path) -> str:
    """SCHEDULER_API_KEY, else the key file's (the export's CLI reads it the same way)."""
    key = os.environ.get("SCHEDULER_API_KEY")
    if key:
        return key
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        raise SourceError(
            "--key-file", f"{path} cannot be read", "set SCHEDULER_API_KEY or give --key-file"
        ) from None
