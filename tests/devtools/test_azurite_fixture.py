"""The Azurite fixture really serves tables and queues (the rest of the suite relies on it)."""

from azure.data.tables import TableServiceClient
from azure.storage.queue import QueueServiceClient

from scheduler_lib.config import Settings


def test_tables_and_queues_answer(settings: Settings) -> None:
    tables = TableServiceClient.from_connection_string(settings.storage_connection_string)
    table = tables.create_table(settings.table_name("Jobs"))
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "Value": 1})
    assert table.get_entity("p", "r")["Value"] == 1
    queues = QueueServiceClient.from_connection_string(settings.storage_connection_string)
    queue = queues.create_queue(settings.execution_queue_name)
    queue.send_message("hello")
    assert [m.content for m in queue.receive_messages()] == ["hello"]
