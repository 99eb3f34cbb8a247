"""The one reader of the JSON a user sends: REST bodies (jobs, collections, PATCH, preview,
backfill: `api/requests.read_json`), the dashboard's forms sent as JSON and its JSON editor.

Beyond `json.loads` it refuses what Python would accept but the scheduler cannot keep:
`NaN`/`Infinity` (not JSON), and a string, or an object key, holding a lone surrogate
(`"\\ud800"`, see `domain/text.py`): valid JSON, but not text, so a job holding one could
be stored and then not returned, shown or run. Each is a ValidationError naming where it is
(`properties.action.request.body`, `tags.x`), before anything is validated or written.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler_lib.domain import has_lone_surrogate, printable
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse(text: str, field: str = "body") -> Any:
    """`text` as JSON values; a ValidationError naming `field` when it is not JSON, or the
    JSON path of a string that is not text (`field` when it is the document itself)."""
    try:
        document = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            field, f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ValidationError(field, f"is not valid JSON ({exc})") from None
    where = lone_surrogate_at(document)
    if where is not None:
        raise ValidationError(
            where or field,
            "holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair): not text",
        )
    return document


def lone_surrogate_at(document: Any) -> str | None:
    """The JSON path of a string or key in `document` holding a lone surrogate ("" for the
    document itself; an object's keys are looked at before what they hold), or None.
    Iterative: a document nested as deep as `json.loads` allows must not exhaust the stack."""
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            if has_lone_surrogate(value):
                return path
        elif isinstance(value, dict):
            children = []
            for key, item in value.items():
                where = readers.join(path, printable(key))
                if has_lone_surrogate(key):
                    return where
                children.append((where, item))
            pending.extend(reversed(children))
        elif isinstance(value, list):
            pending.extend(
                reversed([(readers.join(path, i), item) for i, item in enumerate(value)])
            )
    return None
