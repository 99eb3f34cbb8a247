"""What a Table storage entity holds, as this package writes it.

The SDK types an entity as `TableEntity` (an untyped dict) or `Mapping[str, Any]`; these
name its property values instead: the EDM types azure-data-tables converts (string, 32/64-bit
integer, double, boolean, datetime, binary, GUID, or an explicitly typed `EntityProperty`).
Table storage has no null: a property without a value is left out, so `None` is not one of
them and mypy refuses writing it. Entities of a fixed shape are `TypedDict`s in their
module; this is for those with computed property names (`tables.split_text`'s parts).
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeAlias
from uuid import UUID

from azure.data.tables import EntityProperty

#: One property's value.
EntityValue: TypeAlias = str | int | float | bool | datetime | bytes | UUID | EntityProperty
#: An entity to write: PartitionKey, RowKey and its properties.
Entity: TypeAlias = dict[str, EntityValue]
