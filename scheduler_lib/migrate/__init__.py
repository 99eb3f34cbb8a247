"""Bring your jobs: import job collections and jobs from ARM templates, Bicep and Terraform.

Readers (`arm_resources`, `bicep_resources`, `terraform_convert`) evaluate a source with its
own language's rules (`arm_eval` and the function tables, `bicep_eval`, `terraform_eval`)
and find the scheduler resources in it; `convert` makes the bodies the 2016-03-01 API takes;
`apply` compares them with what the scheduler holds and writes them through its HTTP API;
`report` prints what happened. Nothing is guessed: what cannot be known here is refused by
name (`problems`), except a missing secret, which imports the job Disabled.
See docs/import.md. The same package exports collections as bundles through the API
(`export_cli`) and restores them (`bundle`, read like any other source): docs/export.md.
"""

from scheduler_lib.migrate.cli import add_command as add_import_command
from scheduler_lib.migrate.cli import run as run_import
from scheduler_lib.migrate.export_cli import add_command as add_export_command
from scheduler_lib.migrate.export_cli import run as run_export

__all__ = ["add_export_command", "add_import_command", "run_export", "run_import"]
