"""A notice's deliveries round-trip through real Table storage as typed records
(`NoticeDelivery`), in the stored JSON the records have always had (the dashboard and every
row written before read the same keys), and a row without some key still reads."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

from scheduler_lib.store.notification_records import (
    TABLE,
    DeliveryStatus,
    NoticeDelivery,
    NoticeRecord,
    list_notices,
    open_notice,
    save_notice,
)
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
GAVE_UP = NoticeDelivery(
    key="k1", target="https://hooks.example.com", format="Slack",
    status=DeliveryStatus.GAVE_UP, attempts=5, status_code=500, message="HTTP 500",
    at="2026-03-04T09:00:00Z",
)  # fmt: skip


def test_deliveries_round_trip_as_typed_records_in_the_stored_json(store: TableStore) -> None:
    opened = open_notice(store, NoticeRecord("job1", "ntf_1", "Failed", T0, "it failed"))
    delivered = replace(GAVE_UP, key="k2", status=DeliveryStatus.DELIVERED, status_code=None)
    assert save_notice(store, replace(opened, deliveries=(GAVE_UP, delivered)))
    [record] = list_notices(store, "job1")
    assert record.deliveries == (GAVE_UP, delivered)
    assert [d.settled for d in record.deliveries] == [True, True]
    row = next(iter(store.table(TABLE).query_entities("PartitionKey eq 'job1'")))
    assert json.loads(row["Deliveries"])[0] == {
        "key": "k1", "target": "https://hooks.example.com", "format": "Slack",
        "status": "GaveUp", "attempts": 5, "statusCode": 500, "message": "HTTP 500",
        "at": "2026-03-04T09:00:00Z",
    }  # fmt: skip


def test_a_stored_delivery_without_some_key_reads() -> None:
    read = NoticeDelivery.from_json({"key": "k", "status": "Failed", "attempts": 1})
    assert read.status is DeliveryStatus.FAILED and not read.settled
    assert (read.status_code, read.message, read.attempts) == (None, "", 1)
