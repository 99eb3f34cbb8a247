"""Every property the 2026-12-01 API adds, in one table (see `versions` for the kinds).

To add one: write its validator (value, JSON path -> canonical stored value, raising
`ValidationError(path, ...)`) in a module of its own, then add one entry here with its
location and its OpenAPI schema. Validation, storage, responses, the 2016-03-01 refusal and
the 2026-12-01 OpenAPI document all follow from the entry (`extensions`, `api/openapi_versions`).
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
    ExtensionProperty,
    ExtensionStatus,
    Location,
)

CATALOG = Catalog(
    properties=(
        ExtensionProperty(Location.JOB, "maxJitter", jitter.validate, jitter.SCHEMA),
        ExtensionProperty(
            Location.JOB,
            "pauseNote",
            pause.pause_note,
            {
                "type": "string",
                "maxLength": pause.MAX_PAUSE_NOTE,
                "description": "Why the job is paused: free text kept with it and returned "
                "(shown with a Disabled job; set by the scheduler when "
                "pauseAfterConsecutiveFailures disables it).",
            },
        ),
        ExtensionProperty(
            Location.JOB,
            "pauseAfterConsecutiveFailures",
            pause.pause_after,
            {
                "type": "integer",
                "minimum": 1,
                "maximum": pause.MAX_PAUSE_AFTER,
                "description": "Disable the job after this many faulted occurrences in a row "
                "(an occurrence faults when its main action fails after its retries; a success "
                "ends the streak). Said in history, status.consecutiveFailures and pauseNote.",
            },
        ),
        ExtensionProperty(
            Location.JOB,
            "placeholders",
            placeholders.validate,
            placeholders.SCHEMA,
            cross_check=placeholders.check,
            default=True,
        ),
        ExtensionProperty(
            Location.QUEUE_MESSAGE, "envelope", placeholders.validate, placeholders.ENVELOPE_SCHEMA
        ),
        ExtensionProperty(Location.COLLECTION, signing.PROPERTY, signing.validate, signing.SCHEMA),
        ExtensionProperty(
            Location.RETRY_POLICY,
            "maxRetryInterval",
            backoff.duration,
            backoff.MAX_INTERVAL_SCHEMA,
            cross_check=backoff.check_max_interval,
        ),
        ExtensionProperty(
            Location.RETRY_POLICY,
            "maxRetryDuration",
            backoff.duration,
            backoff.MAX_DURATION_SCHEMA,
            cross_check=backoff.check_max_duration,
        ),
        ExtensionProperty(
            Location.RETRY_POLICY,
            "retryOn",
            backoff.retry_on,
            backoff.RETRY_ON_SCHEMA,
            cross_check=backoff.check_retry_on,
        ),
        ExtensionProperty(
            Location.JOB,
            "concurrencyPolicy",
            overlap.concurrency_policy,
            overlap.CONCURRENCY_SCHEMA,
        ),
        ExtensionProperty(
            Location.JOB, "missedRunPolicy", missed.missed_run_policy, missed.POLICY_SCHEMA
        ),
        ExtensionProperty(
            Location.ACTION,
            attempt_timeout.PROPERTY,
            attempt_timeout.validate,
            attempt_timeout.SCHEMA,
            cross_check=attempt_timeout.check,
        ),
        ExtensionProperty(
            Location.JOB,
            "catchUpWindow",
            missed.catch_up_window,
            missed.WINDOW_SCHEMA,
            cross_check=missed.check_window,
        ),
        ExtensionProperty(Location.JOB, job_tags.PROPERTY, job_tags.validate, job_tags.SCHEMA),
        # Notifications and the dead-man switch (docs/notifications.md): a collection's
        # setting is the default of its jobs; a job's own replaces it.
        ExtensionProperty(
            Location.COLLECTION,
            notifications.PROPERTY,
            notifications.validate,
            notifications.SCHEMA,
        ),
        ExtensionProperty(
            Location.JOB, notifications.PROPERTY, notifications.validate, notifications.SCHEMA
        ),
        ExtensionProperty(Location.COLLECTION, deadman.PROPERTY, deadman.validate, deadman.SCHEMA),
        ExtensionProperty(Location.JOB, deadman.PROPERTY, deadman.validate, deadman.SCHEMA),
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
        ExtensionStatus(
            "consecutiveFailures",
            pause.consecutive_failures,
            {"type": "integer", "description": "Faulted occurrences in a row (0 after a success)."},
        ),
        ExtensionStatus("health", deadman.health, deadman.HEALTH_SCHEMA),
    ),
)
