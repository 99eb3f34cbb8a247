"""The files of an import, by kind: ARM JSON templates (`bicep build` output included),
export bundles (`bundle`, recognised by their `kind`),
`.bicep` files, Terraform `.tf` files (those of one directory form one module, as in
Terraform) and their `.tfvars`.

Parameter values come from `--parameters FILE`: an ARM parameters file (JSON, which Bicep
deployments take too) or a `.tfvars` file; a Terraform module also reads its directory's
`terraform.tfvars` and `*.auto.tfvars`, as Terraform does. A parameters file's Key Vault
reference is a value only Azure can read (`Unknown`: give it with `--set`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler_lib.migrate.arm_resources import read_resources
from scheduler_lib.migrate.arm_template import Template
from scheduler_lib.migrate.bicep import BicepFile
from scheduler_lib.migrate.bicep_resources import read_bicep
from scheduler_lib.migrate.bundle import SideSecrets, is_bundle, read_bundle
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.found import Found
from scheduler_lib.migrate.overrides import Overrides
from scheduler_lib.migrate.problems import Evaluated, SourceError, Unknown
from scheduler_lib.migrate.terraform import Module
from scheduler_lib.migrate.terraform_convert import read_terraform

_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


@dataclass(frozen=True)
class SourceOptions:
    files: list[Path]
    parameters: list[Path] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    deployment: Deployment = field(default_factory=Deployment)
    collection: str | None = None
    secrets: Path | None = None  # an export bundle's secrets (`bundle.SideSecrets`)


def read_sources(options: SourceOptions) -> tuple[Found, list[str]]:
    """Everything the files hold, and the files read (for the report)."""
    overrides = Overrides(options.sets)
    tfvars = [p for p in [*options.parameters, *options.files] if p.suffix == ".tfvars"]
    given: dict[str, Evaluated] = {}
    for path in options.parameters:
        if path.suffix != ".tfvars":
            given.update(arm_parameters(path))
    found, read = Found(), []
    side = SideSecrets.read(options.secrets, load_json(options.secrets) if options.secrets else {})
    modules: dict[Path, list[Path]] = {}
    for path in options.files:
        if path.is_dir():
            modules.setdefault(path, []).extend(sorted(path.glob("*.tf")))
        elif path.suffix == ".tf":
            modules.setdefault(path.parent, []).append(path)
        elif path.suffix == ".bicep":
            bicep = BicepFile(path, given=given, overrides=overrides, deployment=options.deployment)
            found.extend(read_bicep(bicep))
            read.append(f"{path} (Bicep)")
        elif path.suffix == ".json":
            document = load_json(path)
            if _is_parameters(document):
                raise SourceError(path.name, "is a parameters file", "give it with --parameters")
            if is_bundle(document):
                found.extend(read_bundle(document, path.name, side, options.deployment.location))
                read.append(f"{path} (export bundle)")
                continue
            template = Template(
                document, given=given, overrides=overrides, deployment=options.deployment
            )
            found.extend(read_resources(template))
            read.append(f"{path} (ARM template)")
        elif path.suffix != ".tfvars":
            raise SourceError(str(path), "is neither .json (ARM), .bicep nor .tf (Terraform)")
    for directory, files in modules.items():
        if not files:
            raise SourceError(str(directory), "holds no .tf file")
        variables = _auto_tfvars(directory) + tfvars
        module = Module(files, tfvars=variables, overrides=overrides, deployment=options.deployment)
        found.extend(read_terraform(
            module, collection=options.collection, resource_group=options.deployment.resource_group,
        ))  # fmt: skip
        read.append(f"{', '.join(str(f) for f in files)} (Terraform)")
        read += [f"{v} (Terraform variables)" for v in variables]
    overrides.check_all_used()
    side.check_all_used()
    return found, read


def load_json(path: Path) -> Any:
    """JSON, with the `//` and `/* */` comments ARM templates may hold."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    stripped = _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as error:
        raise SourceError(path.name, f"is not valid JSON ({error})") from None


def _is_parameters(document: Any) -> bool:
    schema = str(document.get("$schema", "")) if isinstance(document, dict) else ""
    return "deploymentParameters" in schema


def arm_parameters(path: Path) -> dict[str, Evaluated]:
    """An ARM parameters file's values (`{"parameters": {"name": {"value": ...}}}`)."""
    document = load_json(path)
    entries = document.get("parameters") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        raise SourceError(path.name, "is not an ARM parameters file (no parameters object)")
    values: dict[str, Evaluated] = {}
    for name, entry in entries.items():
        if isinstance(entry, dict) and "value" in entry:
            values[name] = entry["value"]
        elif isinstance(entry, dict) and "reference" in entry:
            secret = (entry["reference"] or {}).get("secretName", "?")
            values[name] = Unknown(
                f"the parameters file takes it from Key Vault (secret {secret!r})"
            )
        else:
            raise SourceError(f"{path.name}: parameters.{name}", "has neither value nor reference")
    return values


def _auto_tfvars(directory: Path) -> list[Path]:
    found = [directory / "terraform.tfvars"] if (directory / "terraform.tfvars").is_file() else []
    return found + sorted(directory.glob("*.auto.tfvars"))
