"""Text a record may hold: Unicode strings, never a lone surrogate.

JSON lets a string say `"\\ud800"`: half of a UTF-16 surrogate pair, with no other half. Python
reads it into a `str` that has no UTF-8 form, so everything that later encodes it (an HTTP
response, a dashboard page, the body of an action) fails. Requests that carry one are
refused where their JSON is read (`wire/request_json.py`, naming where it is); what an
older version stored with one is read back with U+FFFD in its place (`store/tables.loads`),
so such a job stays readable, listable and runnable, and its next write repairs it.
"""

from __future__ import annotations

import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: What a lone surrogate reads as: the Unicode replacement character, as a UTF-8 decoder
#: shows bytes that are not text.
REPLACEMENT = "\ufffd"


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a surrogate code point (which, in a Python `str` read from JSON,
    is always a lone one: a pair is read as the one character it encodes)."""
    return _LONE_SURROGATE.search(text) is not None


def printable(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\ud800`), for naming a key
    that holds one in an error (whose body must itself be text)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def without_lone_surrogates(value: Any) -> Any:
    """A JSON value with every lone surrogate, in strings and object keys, replaced by
    U+FFFD (a copy; a stored definition is a few KB of JSON)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {
            without_lone_surrogates(key): without_lone_surrogates(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    return value
