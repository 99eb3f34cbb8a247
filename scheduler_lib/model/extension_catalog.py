"""Every property the 2026-12-01 API adds, in one table (see `versions` for the kinds).

To add one: write its validator (value, JSON path -> canonical stored value, raising
`ValidationError(path, ...)`) in a module of its own, then add one entry here with its
location and its OpenAPI schema. Validation, storage, responses, the 2016-03-01 refusal and
the 2026-12-01 OpenAPI document all follow from the entry (`extensions`, `api/openapi_versions`).
"""

from __future__ import annotations

from scheduler_lib.model import pause
from scheduler_lib.model.versions import Catalog, ExtensionProperty, Location

CATALOG = Catalog(
    properties=(
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
    ),
)
