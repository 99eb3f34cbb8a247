"""`tables.set_present`, the one way an entity builder writes its optional columns: Table
storage has no null, so a column without a value is left out (and reads back as None);
any other value is written, a falsy one (0, "", False) included. Pure: the entity is a dict
(its round trip through Azurite: tests/store/test_jobs.py, test_dispatcher_state.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler_lib.store.tables import set_present

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_only_columns_with_a_value_are_written_falsy_ones_included() -> None:
    entity: dict[str, Any] = {"PartitionKey": "p", "RowKey": "r"}
    set_present(entity, Cursor=T0, LeaseUntil=None, Count=0, Note="", Flag=False)
    assert entity == {
        "PartitionKey": "p", "RowKey": "r", "Cursor": T0, "Count": 0, "Note": "", "Flag": False
    }  # fmt: skip


def test_a_column_already_there_is_replaced_by_a_value_and_kept_for_none() -> None:
    entity: dict[str, Any] = {"Cursor": T0, "LeaseUntil": T0}
    later = T0.replace(hour=10)
    set_present(entity, Cursor=later, LeaseUntil=None)
    assert entity == {"Cursor": later, "LeaseUntil": T0}
