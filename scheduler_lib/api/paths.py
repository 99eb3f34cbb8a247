"""The ARM paths of the API (under `/api`, the Functions HTTP route prefix).

`ARM_PATHS` lists every one a route serves (tests/api/test_path_case_api.py checks it
against the OpenAPI document). Their literal segments (`resourceGroups`,
`Microsoft.Scheduler`, `bulk`, ...) are read in any case, as ARM reads them, as those of
every route of the app are (`middleware.RouteCase`)."""

PREFIX = "/api"
SUBSCRIPTION = PREFIX + "/subscriptions/{subscriptionId}"
RESOURCE_GROUP = SUBSCRIPTION + "/resourceGroups/{resourceGroupName}"
COLLECTIONS_IN_SUBSCRIPTION = SUBSCRIPTION + "/providers/Microsoft.Scheduler/jobCollections"
IMPORT = SUBSCRIPTION + "/providers/Microsoft.Scheduler/import"
COLLECTIONS = RESOURCE_GROUP + "/providers/Microsoft.Scheduler/jobCollections"
COLLECTION = COLLECTIONS + "/{jobCollectionName}"
ENABLE = COLLECTION + "/enable"
DISABLE = COLLECTION + "/disable"
EXPORT = COLLECTION + "/export"
BULK = COLLECTION + "/bulk"
JOBS = COLLECTION + "/jobs"
JOB = JOBS + "/{jobName}"
RUN = JOB + "/run"
HISTORY = JOB + "/history"
BACKFILL = JOB + "/backfill"

ARM_PATHS = (
    COLLECTIONS_IN_SUBSCRIPTION, IMPORT, COLLECTIONS, COLLECTION, ENABLE, DISABLE, EXPORT, BULK,
    JOBS, JOB, RUN, HISTORY, BACKFILL,
)  # fmt: skip
