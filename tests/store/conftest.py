import pytest

from scheduler_lib.config import Settings
from scheduler_lib.store.tables import TableStore


@pytest.fixture
def store(settings: Settings) -> TableStore:
    """A TableStore over the test's own (prefixed) tables in Azurite."""
    store = TableStore(settings)
    store.ensure_tables()
    return store
