"""Template functions that read the deployment: where it goes, when, and what Azure holds.

`resourceGroup()`, `subscription()` and the `resourceId` family are computed from the
import's options (`--subscription`, `--resource-group`, `--location`); what the options do not
say (a resource group's tags, the tenant) is an `Unknown`, refused only if something reads
it. `utcNow()` is the import time given with `--import-time`: it is only allowed in a
parameter's default, as in ARM, and without that option it is refused rather than read from
the clock, so that importing the same file twice gives the same jobs.

Functions that ask Azure for state (`reference`, `list*`, `listKeys`) or that Azure alone
computes (`uniqueString` and `guid` hash with an algorithm Microsoft does not publish;
`newGuid` is random) are `Unknown` too: the import names them and asks for the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scheduler_lib.migrate.dates import iso, render
from scheduler_lib.migrate.functions import FUNCTIONS, ArgumentError, str_arg
from scheduler_lib.migrate.problems import Evaluated, SourceError, Unknown

#: Functions whose value only Azure has at deployment time, and why.
NOT_HERE = {
    "reference": "it reads the deployed state of another resource",
    "listkeys": "it lists keys that only Azure holds",
    "listsecrets": "it lists secrets that only Azure holds",
    "listaccountsas": "it asks Azure for a SAS token",
    "listservicesas": "it asks Azure for a SAS token",
    "newguid": "it is a new random value at each deployment",
    "uniquestring": "its hash is Azure's own and unpublished; a guess would name another resource",
    "guid": "its hash is Azure's own and unpublished; a guess would name another resource",
    "environment": "it describes the Azure cloud of the deployment",
    "tenant": "it describes the deployment's tenant",
    "managementgroup": "it describes a management group",
    "pickzones": "it asks Azure about availability zones",
    "providers": "it asks Azure about resource providers",
    "deployer": "it describes who deploys",
}


@dataclass(frozen=True)
class Deployment:
    """Where and when the import deploys, as the options say (None: not given)."""

    subscription_id: str | None = None
    resource_group: str | None = None
    location: str | None = None
    import_time: datetime | None = None


def _need(value: str | None, what: str, option: str) -> Any:
    return value if value is not None else Unknown(f"{what} is not known", f"give {option}")


def resource_group(d: Deployment) -> dict[str, Evaluated]:
    sub = _need(d.subscription_id, "the subscription", "--subscription")
    name = _need(d.resource_group, "the resource group", "--resource-group")
    missing = next((v for v in (sub, name) if isinstance(v, Unknown)), None)
    return {
        "id": missing or f"/subscriptions/{sub}/resourceGroups/{name}",
        "name": name,
        "type": "Microsoft.Resources/resourceGroups",
        "location": _need(d.location, "the resource group's location", "--location"),
        "tags": Unknown("the resource group's tags are not known here"),
        "managedBy": Unknown("the resource group's manager is not known here"),
        "properties": {"provisioningState": "Succeeded"},
    }


def subscription(d: Deployment) -> dict[str, Evaluated]:
    sub = _need(d.subscription_id, "the subscription", "--subscription")
    return {
        "id": f"/subscriptions/{sub}" if isinstance(sub, str) else sub,
        "subscriptionId": sub,
        "tenantId": Unknown("the tenant is not known here"),
        "displayName": Unknown("the subscription's display name is not known here"),
    }


def _provider_path(function: str, resource_type: str, names: list[Any]) -> str:
    segments = str_arg(function, resource_type).strip("/").split("/")
    if len(segments) < 2 or len(segments) - 1 != len(names):
        raise ArgumentError(function, f"{resource_type!r} needs one name per type segment")
    path = segments[0]
    for kind, name in zip(segments[1:], names, strict=True):
        path += f"/{kind}/{str_arg(function, name)}"
    return f"/providers/{path}"


def resource_id(d: Deployment, function: str, args: list[Any]) -> Any:
    """`resourceId`, `subscriptionResourceId`, `tenantResourceId`: the ARM id of a resource."""
    where = next((i for i, a in enumerate(args) if isinstance(a, str) and "/" in a), None)
    if where is None:
        raise ArgumentError(function, "needs a resource type such as 'Microsoft.Web/sites'")
    scope, names = [str_arg(function, a) for a in args[:where]], args[where + 1 :]
    tail = _provider_path(function, args[where], names)
    if function == "tenantresourceid":
        return tail
    current_sub = _need(d.subscription_id, "the subscription", "--subscription")
    if function == "subscriptionresourceid":
        sub = scope[0] if scope else current_sub
        return sub if isinstance(sub, Unknown) else f"/subscriptions/{sub}{tail}"
    sub = scope[0] if len(scope) == 2 else current_sub
    group = (
        scope[-1] if scope else _need(d.resource_group, "the resource group", "--resource-group")
    )
    missing = next((v for v in (sub, group) if isinstance(v, Unknown)), None)
    return missing or f"/subscriptions/{sub}/resourceGroups/{group}{tail}"


def utc_now(d: Deployment, args: list[Any], *, in_default: bool) -> Any:
    if not in_default:
        raise ArgumentError("utcNow", "is only allowed in a parameter's default value")
    if d.import_time is None:
        return Unknown(
            "it is the time of the deployment, which an import must not make up",
            "give --import-time ISO, or the parameter's value with --set",
        )
    pattern = str_arg("utcNow", args[0]) if args else "yyyyMMddTHHmmssZ"
    return render("utcNow", d.import_time, pattern) if pattern else iso(d.import_time)


def not_here(name: str) -> Unknown | None:
    """The `Unknown` a function only Azure can answer returns, whatever its arguments (they
    are not evaluated: the call as a whole is what cannot be known)."""
    lowered = name.lower()
    if lowered in NOT_HERE or lowered.startswith("list"):
        return Unknown(NOT_HERE.get(lowered, "it asks Azure for keys or secrets"))
    return None


def call(d: Deployment, name: str, args: list[Any], *, in_default: bool) -> Any:
    """The value of a deployment function, or `NotImplemented` for any other name."""
    lowered = name.lower()
    unknown = not_here(lowered)
    if unknown is not None:
        return unknown
    if lowered == "resourcegroup":
        return resource_group(d)
    if lowered == "subscription":
        return subscription(d)
    if lowered in ("resourceid", "subscriptionresourceid", "tenantresourceid"):
        return resource_id(d, lowered, args)
    if lowered == "utcnow":
        return utc_now(d, args, in_default=in_default)
    if lowered == "deployment":
        return {"name": Unknown("the deployment's name is chosen when it is deployed")}
    return NotImplemented


def call_function(
    d: Deployment, lowered: str, args: list[Any], *, in_default: bool, shown: str, unknown: str
) -> Any:
    """A function's value for ARM and Bicep alike: the deployment's own (`call`), else the
    shared table's (`functions.FUNCTIONS`). `shown` is the name as written (for an error about
    its arguments), `unknown` the refusal of a name neither knows."""
    value = call(d, lowered, args, in_default=in_default)
    if value is not NotImplemented:
        return value
    function = FUNCTIONS.get(lowered)
    if function is None:
        raise SourceError("", unknown)
    try:
        return function(*args)
    except TypeError:
        raise ArgumentError(shown, f"does not take {len(args)} arguments") from None
