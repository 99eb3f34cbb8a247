"""Fixtures of the dispatcher tests: storage with one enabled collection, and a real
execution queue that records what it sent (see `tests.dispatch.support`)."""

from dataclasses import replace

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import RecordingQueue, make_collection


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The root `settings`, sharded as a test's `shards(n)` marker says (a test about the
    order or batching inside one shard uses one)."""
    marker = request.node.get_closest_marker("shards")
    return replace(settings, dispatch_shards=marker.args[0]) if marker else settings


@pytest.fixture
def store(store: TableStore) -> TableStore:
    """The root `store`, with the collection `c1` that the dispatcher tests' jobs live in."""
    make_collection(store)
    return store


@pytest.fixture
def queue(settings: Settings) -> RecordingQueue:
    return RecordingQueue(settings).ready()
