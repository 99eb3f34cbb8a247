"""A job collection as the scheduler knows it; `store/collections.py` stores it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_lib.domain.keys import collection_key


@dataclass(frozen=True)
class CollectionRecord:
    """A job collection as stored; `properties` is the wire JSON (sku, state, quota)."""

    subscription_id: str
    resource_group: str
    name: str
    location: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    properties: dict[str, Any] = field(default_factory=dict)
    etag: str | None = None

    @property
    def key(self) -> str:
        """The PartitionKey of this collection's jobs."""
        return collection_key(self.subscription_id, self.resource_group, self.name)

    @property
    def enabled(self) -> bool:
        return str(self.properties.get("state", "Enabled")).lower() == "enabled"
