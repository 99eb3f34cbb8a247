"""The type of a JSON document as `json.loads` returns it (and `json.dumps` takes it).

One definition for every layer that handles JSON whose shape is only known at run time (an
ARM template, a Terraform module, a request body before it is read, a table entity's
JSON column): code that relies on a shape narrows it with `isinstance`, so mypy checks the
narrowing instead of trusting an `Any`. Known shapes get a `TypedDict` or a record instead.
"""

from __future__ import annotations

from typing import TypeAlias

#: Any JSON value: null, a boolean, a number, a string, an array or an object.
JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
#: A JSON object (what a document's top level, a resource or a body is).
JsonObject: TypeAlias = "dict[str, JsonValue]"
