"""A job collection as the scheduler knows it; `store/collections.py` stores it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_lib.domain.keys import collection_key
from scheduler_lib.domain.vocabulary import CollectionState


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
        """Whether its jobs run: the one test the dispatcher, the executor and the API ask.
        Disabled and Suspended both stop them (without touching the jobs' own states)."""
        state = str(self.properties.get("state", CollectionState.ENABLED))
        return state.lower() == CollectionState.ENABLED.lower()
