"""Every property the 2026-12-01 API adds, in one table (see `versions` for the kinds).

To add one: write its validator (value, JSON path -> canonical stored value, raising
`ValidationError(path, ...)`) in a module of its own, with its entry beside it (an
`ExtensionProperty`: location, validator, OpenAPI schema), and list the entry here; its
typed field goes on `domain/definition.JobDefinition`. Validation, storage, responses, the
2016-03-01 refusal and the 2026-12-01 OpenAPI document all follow from the entry
(`extensions`, `api/openapi_versions`).
"""

from __future__ import annotations

from scheduler_lib.wire import (
    attempt_timeout,
    backoff,
    deadman,
    jitter,
    job_tags,
    managed_identity,
    missed,
    notifications,
    overlap,
    pause,
    placeholders,
    signing,
)
from scheduler_lib.wire.versions import (
    Catalog,
    ExtensionChoice,
    Location,
)

CATALOG = Catalog(
    # In the order the OpenAPI document and the answers list them.
    properties=(
        jitter.ENTRY,
        *pause.ENTRIES,
        *placeholders.ENTRIES,
        signing.ENTRY,
        *backoff.ENTRIES,
        overlap.ENTRY,
        missed.POLICY_ENTRY,
        attempt_timeout.ENTRY,
        missed.WINDOW_ENTRY,
        job_tags.ENTRY,
        # Notifications and the dead-man switch (docs/notifications.md).
        *notifications.ENTRIES,
        *deadman.ENTRIES,
    ),
    choices=(
        # A 2016-03-01 answer shows it as what it is to that version: an Entra ID token for
        # an audience (the type's only field), without a client secret.
        ExtensionChoice(
            Location.AUTHENTICATION, "type", managed_identity.TYPE, "ActiveDirectoryOAuth"
        ),
        # Shown to 2016-03-01 as Fixed with the same first interval and count.
        ExtensionChoice(Location.RETRY_POLICY, "retryType", backoff.EXPONENTIAL, "Fixed"),
    ),
    statuses=(
        pause.STATUS,
        deadman.STATUS,
    ),
)
