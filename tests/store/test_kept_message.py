"""A message this worker sent and keeps hidden while it lives (`store.kept_message`, the
watchdog's mechanism): visible `hold` after its start or now; each `keep_hidden` hides it
again from now, under the new pop receipt the queue hands back (so the final delete still
works); one taken meanwhile by a receiver, or gone, is left alone and not deleted.

Real Azurite queue: visibility, pop receipts and deletes are the queue service's own. A
`hold` of zero makes a message visible at once, so no test waits for it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.kept_message import KeptMessage
from tests.execution.harness import T0, FakeClock


def _visible(queue: ExecutionQueue) -> int:
    """How many messages are visible now (peeked: receiving one would take it)."""
    return len(queue.client.peek_messages(max_messages=32))


@pytest.mark.parametrize(("start", "delay"), [(None, 11), (T0 + timedelta(seconds=5), 16)])
def test_it_is_sent_visible_hold_after_its_start_or_now(
    queue: ExecutionQueue, start: object, delay: int
) -> None:
    kept = KeptMessage(queue, FakeClock(T0, tick=timedelta(0)), hold=timedelta(seconds=10.2))

    kept.send_once("watching", start=start)  # type: ignore[arg-type]  # None or a datetime
    first = kept.sent
    kept.send_once("again")

    assert kept.sent is first and queue.depth() == 1  # once
    assert first is not None and first.visible_on and first.inserted_on
    assert (first.visible_on - first.inserted_on).total_seconds() == delay  # rounded up
    assert _visible(queue) == 0


def test_keep_hidden_hides_it_again_from_now_and_the_delete_uses_the_new_receipt(
    queue: ExecutionQueue,
) -> None:
    kept = KeptMessage(queue, FakeClock(), hold=timedelta(0))
    kept.send_once("watching")
    assert _visible(queue) == 1  # visible at once: a worker that stopped beating
    sent = kept.sent

    kept.hold = timedelta(seconds=60)
    kept.keep_hidden()

    assert not kept.taken and kept.sent is not None and sent is not None
    assert kept.sent.pop_receipt != sent.pop_receipt
    assert _visible(queue) == 0 and queue.depth() == 1  # hidden again, not a second message
    kept.discard()
    assert queue.depth() == 0


def test_one_taken_meanwhile_is_left_to_its_taker(queue: ExecutionQueue) -> None:
    kept = KeptMessage(queue, FakeClock(), hold=timedelta(0))
    kept.send_once("watching")
    [taken] = queue.receive(max_messages=1, visibility_timeout=60)  # a look has it

    kept.keep_hidden()  # no error: its pop receipt is no longer this worker's
    kept.keep_hidden()  # and it does not try again
    kept.discard()

    assert kept.taken
    assert queue.depth() == 1  # not deleted under its taker
    queue.delete(taken)  # the taker's receipt is still the valid one
    assert queue.depth() == 0


def test_one_deleted_meanwhile_is_taken_for_gone(queue: ExecutionQueue) -> None:
    kept = KeptMessage(queue, FakeClock(), hold=timedelta(seconds=30))
    kept.send_once("watching")
    assert kept.sent is not None
    queue.discard(kept.sent)

    kept.keep_hidden()

    assert kept.taken and queue.depth() == 0


def test_nothing_is_kept_or_deleted_before_it_is_sent(queue: ExecutionQueue) -> None:
    kept = KeptMessage(queue, FakeClock(), hold=timedelta(seconds=30))
    kept.keep_hidden()
    kept.discard()
    assert kept.sent is None and not kept.taken and queue.depth() == 0
