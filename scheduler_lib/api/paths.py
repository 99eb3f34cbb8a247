"""The ARM paths of the API (under `/api`, the Functions HTTP route prefix)."""

PREFIX = "/api"
SUBSCRIPTION = PREFIX + "/subscriptions/{subscriptionId}"
RESOURCE_GROUP = SUBSCRIPTION + "/resourceGroups/{resourceGroupName}"
COLLECTIONS_IN_SUBSCRIPTION = SUBSCRIPTION + "/providers/Microsoft.Scheduler/jobCollections"
COLLECTIONS = RESOURCE_GROUP + "/providers/Microsoft.Scheduler/jobCollections"
COLLECTION = COLLECTIONS + "/{jobCollectionName}"
JOBS = COLLECTION + "/jobs"
JOB = JOBS + "/{jobName}"

#: Literal path segments, so that `resourcegroups` or `microsoft.scheduler` route too
#: (ARM treats them case-insensitively).
LITERALS = {
    s.lower(): s
    for s in (
        "api", "subscriptions", "resourceGroups", "providers", "Microsoft.Scheduler",
        "jobCollections", "jobs", "run", "history", "enable", "disable", "export",
    )
}  # fmt: skip


def canonical_path(path: str) -> str:
    """`path` with its literal segments in canonical case; names are left as sent (a job
    named `run` stays `run`, since only positions where a literal belongs are touched)."""
    parts = path.split("/")
    # "", api, subscriptions, {sub}, then either providers/Microsoft.Scheduler/jobCollections
    # or resourceGroups, {rg}, providers, Microsoft.Scheduler, jobCollections, {coll},
    # jobs|enable|disable|export, {job}, run|history
    if len(parts) > 4 and parts[4].lower() == "providers":
        positions: tuple[int, ...] = (1, 2, 4, 5, 6)
    else:
        positions = (1, 2, 4, 6, 7, 8, 10, 12)
    for index in positions:
        if index < len(parts):
            parts[index] = LITERALS.get(parts[index].lower(), parts[index])
    return "/".join(parts)
