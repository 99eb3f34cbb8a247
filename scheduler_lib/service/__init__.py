"""The use cases: what a client of this scheduler can do, each once, whoever asks.

A use case here is a function (or a small object) over an `ApiContext` (settings, clock,
table store, execution queue, the request's api-version): create, replace, patch, delete,
read, list and run jobs (`jobs`); create, update, suspend, resume and delete collections
(`collections`); a job's schedule and a schedule's preview (`job_schedule`, `preview`); a
backfill (`backfill`); the paged reads of jobs and history (`lists`); the dashboard's
overview (`overview`) and its sign-in sessions (`sessions`). The REST API's routes and the
dashboard's pages both call these, so a rule or an error is decided in one place; the
routes only parse HTTP and render the answer.

What it may import: the layers below it (`domain`, `schedule`, `wire`, `store`, `actions`,
`execution`, `dispatch`, and the top-level helpers such as `config`, `errors`, `timeutil`,
`health`). Never `api` or `dashboard`, nor anything HTTP: errors leave as
`scheduler_lib.errors` exceptions, and each front end says how they look
(`tests/test_architecture.py` keeps this).
"""
