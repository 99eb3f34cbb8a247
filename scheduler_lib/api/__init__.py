"""The Azure Scheduler 2016-03-01 REST API as a FastAPI app: `create_app(settings, clock=)`.

Behaviour a user of the real service would rely on, decided here:

- Paths are the ARM ones under `/api` (`base_url=https://<app>/api` for the SDK); literal
  segments and names are case-insensitive, the spelling used at creation is returned.
- Every response carries `x-ms-request-id`; jobs and collections carry `ETag`. `If-Match`
  on PUT/PATCH/DELETE (and enable/disable) answers 412 when stale; without it, writes are
  read-modify-write loops on the stored ETag, so concurrent PATCHes never lose an update.
- Secrets are write-only. On PUT or PATCH of an existing job, a secret *left out* of the
  body keeps its stored value as long as the object holding it still names the same
  principal or target: same authentication type and username (Basic), tenant + clientId +
  audience (OAuth), the stored certificate unless a new `pfx` is sent (ClientCertificate),
  same storageAccount (sasToken), same namespace + sasKeyName (Service Bus sasKey), and,
  for every HTTP authentication type, the same URI scheme, host and port. This is what
  makes the SDK's GET-modify-PUT work; changing who the secret belongs to or where it goes
  without sending the secret again is a 400 naming it, never a silent reuse.
- Changing `startTime` or `recurrence` restarts the schedule as if the job were new (the
  reference instant becomes now, `count` starts again); other changes keep it. Enabling a
  disabled job resumes at the first execution at or after now.
- PATCH is a JSON merge patch of `properties` (null removes); changing an object's `type`
  replaces that object instead of merging into it.
- Lists are `{"value": [...], "nextLink"?}`; `$top` 1..100 (default 100), `$skip`, and
  `$filter` `state eq 'Enabled'` / `status eq Failed` (quoted or not, any case).
"""

from scheduler_lib.api.app import create_app

__all__ = ["create_app"]
