"""ARM's tags: name/value strings on a resource (a job collection, at its top level) and a
job's own (2026-12-01, `job_tags`), read with ARM's limits by one reader."""

from __future__ import annotations

import json
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers

#: ARM's limit on the number of tags of a resource.
MAX_TAGS = 50
#: The most tag JSON (UTF-8) a collection holds: more than ARM's per-tag limits allow in
#: ASCII, and a bound on the stored entity whatever the characters.
MAX_TAGS_BYTES = 64 * 1024


def resource_tags(value: Any, path: str = "tags") -> dict[str, str]:
    """ARM's tag limits (50 tags, names up to 512 characters, values up to 256), and at most
    `MAX_TAGS_BYTES` of JSON in all, which keeps the stored entity within Table storage's
    1 MiB (the store splits the text across properties of at most 64 KiB each)."""
    tags = readers.string_map(
        value, path, max_items=MAX_TAGS, max_key_length=512, max_value_length=256
    )
    size = len(json.dumps(tags, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_TAGS_BYTES:
        raise ValidationError(
            path, f"the tags are {size} bytes of JSON; at most {MAX_TAGS_BYTES} are allowed"
        )
    return tags
