"""The executor with the non-HTTP actions: a StorageQueue action lands in a real Azurite queue;
Service Bus actions are verified up to the SDK's `ServiceBusSender` boundary only, because no
Service Bus emulator runs in this project's tests: the sender factory hands the executor a
recording sender instead of one connected to a namespace."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from azure.servicebus import ServiceBusMessage

from scheduler_lib.config import AZURITE_ACCOUNT
from scheduler_lib.domain.messages import ExecutionMessage
from tests.execution.harness import T0, Driver, make_job
from tests.support.azurite_queues import new_queue, sas_token


def test_a_storage_queue_action_lands_in_the_azurite_queue(driver: Driver) -> None:
    name = f"{driver.settings.storage_prefix}-target"
    consumer = new_queue(driver.settings, name)
    sas = sas_token(name)
    action = {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": AZURITE_ACCOUNT,
            "queueName": name,
            "sasToken": sas,
            "message": "nightly backup, please",
        },
        "retryPolicy": {"retryType": "None"},
    }
    job = make_job(driver.store, action)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.history.status == "Completed"
    [received] = list(consumer.receive_messages())
    assert received.content == "nightly backup, please"
    assert sas not in report.history.message


class RecordingSender:
    """Stands where `ServiceBusSender` stands: the executor's last call into the SDK."""

    def __init__(self) -> None:
        self.sent: list[ServiceBusMessage] = []

    def send_messages(self, message: ServiceBusMessage, timeout: float | None = None) -> None:
        self.sent.append(message)


def test_a_service_bus_queue_action_reaches_the_sender_boundary(driver: Driver) -> None:
    sender = RecordingSender()
    targets: list[Any] = []

    @contextmanager
    def sender_factory(target: Any) -> Iterator[RecordingSender]:
        targets.append(target)
        yield sender

    driver.adapters["sender_factory"] = sender_factory
    key = uuid.uuid4().hex
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "contoso",
            "queueName": "orders",
            "transportType": "AMQP",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "send", "sasKey": key},
            "message": "hello bus",
            "customMessageProperties": {"source": "scheduler"},
        },
        "retryPolicy": {"retryType": "None"},
    }
    job = make_job(driver.store, action)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.history.status == "Completed"
    [target] = targets
    assert (target.fully_qualified_namespace, target.entity_kind, target.entity_name) == (
        "contoso.servicebus.windows.net", "queue", "orders",
    )  # fmt: skip
    [message] = sender.sent
    assert str(message) == "hello bus"
    properties = message.application_properties
    assert properties["source"] == "scheduler"  # and the identifiers HTTP gets as headers:
    assert properties["x-ms-execution-tag"] == report.execution_tag == message.message_id
    assert key not in report.history.message
