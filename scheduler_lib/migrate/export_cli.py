"""`python -m scheduler_lib export`: job collections as bundles (docs/export.md), read
through the API's `GET .../export` like any client, so a deployed app exports as `make
run`'s does.

One collection (`--resource-group`, `--collection`) goes to `--out FILE` (or stdout);
`--all` writes every collection the API lists for each `--subscription` (or only those of
`--resource-group`) under `--out DIR`, as `DIR/<subscription>/<resourceGroup>/<collection>.json`:
the whole-deployment backup that `import` restores. A bundle is written to a temporary name
and renamed once complete, so a broken-off download never leaves a bundle behind.

An entry point, so it reads the environment (the key, as `import` does). Exit status: 0 when
every bundle was written, 1 when the API refused one (the others are still written), 2 for a
bad command line or a scheduler that does not answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from scheduler_lib.migrate.cli import DEFAULT_URL, api_key
from scheduler_lib.migrate.client import Address, ApiError, SchedulerClient, Unreachable
from scheduler_lib.migrate.problems import SourceError
from scheduler_lib.wire import bundle
from scheduler_lib.wire.versions import LATEST_VERSION

FAILED, USAGE = 1, 2


def add_command(commands: Any) -> None:
    command = commands.add_parser(
        "export",
        help="export job collections and their jobs as bundles (restore with import)",
        description="Writes a job collection and its jobs as one JSON bundle (secrets named, "
        "never included); --all backs up every collection. See docs/export.md.",
    )
    add = command.add_argument
    add("--subscription", action="append", required=True, metavar="ID",
        help="the subscription (repeat for several with --all)")  # fmt: skip
    add("--resource-group", metavar="RG", help="the resource group (with --all: only it)")
    add("--collection", metavar="NAME", help="the job collection to export")
    add("--all", action="store_true", help="every collection the API lists, into --out DIR")
    add(
        "--out",
        type=Path,
        metavar="PATH",
        help="the bundle's file (default stdout); --all: a directory",
    )
    add("--include-history", action="store_true",
        help=f"each job's last {bundle.HISTORY_WINDOW.days} days of history "
        f"(at most {bundle.HISTORY_PER_JOB} entries per job; not restored)")  # fmt: skip
    add("--url", default=os.environ.get("SCHEDULER_URL", DEFAULT_URL),
        help=f"the API's base URL (default: SCHEDULER_URL, else {DEFAULT_URL})")  # fmt: skip
    add("--key-file", type=Path, default=Path(".scheduler-api-key"),
        help="the file holding the API key, unless SCHEDULER_API_KEY is set")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        targets = _targets(args)
        client = SchedulerClient(args.url, api_key(args.key_file))
        if args.all:
            targets = _listed(client, args)
        params = {"api-version": LATEST_VERSION.value}
        if args.include_history:
            params["includeHistory"] = "true"
        failed = 0
        for address in targets:
            out = _destination(args, address)
            try:
                _export(client, address, params, out)
            except ApiError as error:
                failed += 1
                print(f"error: {_name(address)}: {error}", file=sys.stderr)
    except (SourceError, OSError, Unreachable) as error:
        print(f"error: {error}", file=sys.stderr)
        return USAGE
    return FAILED if failed else 0


def _targets(args: argparse.Namespace) -> list[Address]:
    if args.all:
        if args.collection:
            raise SourceError("--collection", "goes without --all (which takes every one)")
        if args.out is None:
            raise SourceError("--out", "is required with --all (the backup's directory)")
        return []
    if not (args.resource_group and args.collection):
        raise SourceError("--collection", "give --resource-group and --collection, or --all")
    if len(args.subscription) > 1:
        raise SourceError("--subscription", "give one, or use --all")
    return [Address(args.subscription[0], args.resource_group, args.collection)]


def _listed(client: SchedulerClient, args: argparse.Namespace) -> list[Address]:
    addresses = []
    for subscription in args.subscription:
        for item in client.list_collections(subscription, args.resource_group, LATEST_VERSION):
            group = str(item.get("id", "")).split("/")[4]
            addresses.append(Address(subscription, group, str(item["name"])))
    return addresses


def _destination(args: argparse.Namespace, address: Address) -> Path | None:
    if not args.all:
        return args.out
    return args.out / address.subscription / address.resource_group / f"{address.collection}.json"


def _export(
    client: SchedulerClient, address: Address, params: dict[str, str], out: Path | None
) -> None:
    if out is None:
        client.download(address, params, sys.stdout.buffer)
        sys.stdout.flush()
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("wb") as sink:
            client.download(address, params, sink)
        summary = _summary(partial)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    print(f"{_name(address)}: {summary} → {out}", file=sys.stderr)


def _summary(path: Path) -> str:
    """What a written bundle holds, read back to be sure it is whole."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        document = None
    if not isinstance(document, dict) or document.get("complete") is not True:
        raise SourceError(str(path), "the bundle arrived cut short; nothing was kept")
    secrets = len(document.get("secrets") or ())
    return f"{document.get('jobCount')} jobs, {secrets} secrets left out (listed in the bundle)"


def _name(address: Address) -> str:
    return f"{address.subscription}/{address.resource_group}/{address.collection}"
