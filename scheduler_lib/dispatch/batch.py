"""A chunk's occurrences that become visible in the same second, sent as one queue message.

Each occurrence sent alone costs its own queue send, its own delete, its own function
execution and its own early-delivery hold (docs/cost.md). So before a chunk's jobs are
handled (`chunk.dispatch_chunk`), `send_batches` takes the message each job's task will
send first (`job.FirstSend`: the one `_send` builds, from the job as read), groups
those messages by the whole second the queue would make each visible at alone
(`ExecutionQueue.delay_seconds`, with one `now` for the chunk), and sends each group of two
or more as one queue message (`ExecutionQueue.send_batch`; a group larger than
`BATCH_LIMIT` is split evenly). A group of one is left to its job's task: a lone message,
as before. The messages sent are handed to the tasks (`TickContext.sent_in_batches`); a
task's `_send` does not send one of them again and does everything else as before (count
it, advance the job, remove its row).

Why a tick stays safe to crash, repeat or race:
- Send before advance still holds for every job: the batches are sent before any task of
  the chunk runs, so a job advanced past an occurrence has its message on the queue, lone
  or in a batch. A crash after a batch, before its jobs advanced, leaves them where they
  were: the next tick sends the same members again (the same tags: the executor runs each
  once).
- Only what was sent is skipped: a batch whose send fails adds none of its members (they
  are sent alone by their tasks; an extra copy, if the failed send did arrive, is
  harmless, the tag dedups). The skip is by equality of the whole message (tag, action,
  attempt, incarnation, number, jitter), so a task whose decision changed after the batch
  went out (the job re-read after a lost ETag race, deleted and created again meanwhile,
  the look-ahead's next occurrence) builds another message and sends it: no path skips a
  send it needed.
- Two racing ticks may both send a batch with the same members: duplicates, as two ticks'
  lone messages were.

A batch is visible when the first of its members would be alone (`send_batch`). Grouping is
per chunk (`CHUNK` jobs of one pair, whose shards the coordinator grouped while their rows
are few): occurrences of one second in other pairs or chunks go in messages of their own.
Within a chunk the batches go out before the lone messages, whatever their seconds; the
chunk's tasks run in parallel anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from scheduler_lib.dispatch.context import TickContext
from scheduler_lib.dispatch.job import FirstSend
from scheduler_lib.domain.messages import BATCH_LIMIT
from scheduler_lib.execution import ExecutionMessage
from scheduler_lib.timeutil import iso_z

logger = logging.getLogger("scheduler_lib.dispatch.tick")

#: A member: the message and when it is to become visible (as `ExecutionQueue.send` takes).
Member = tuple[ExecutionMessage, datetime]


def send_batches(
    ctx: TickContext, plans: Sequence[FirstSend], pool: ThreadPoolExecutor | None
) -> tuple[frozenset[ExecutionMessage], int]:
    """Send, in batches, the first messages of the chunk's jobs (`plans`) that become visible
    in the same second; returns the messages sent so (their tasks send them no more) and how
    many queue messages that took."""
    batches = [
        part for members in _by_second(ctx, plans) if len(members) > 1 for part in _split(members)
    ]
    run = pool.map if pool is not None else map
    outcomes = run(lambda batch: _send(ctx, batch), batches)
    sent = [batch for batch, ok in zip(batches, outcomes, strict=True) if ok]
    return frozenset(m for batch in sent for m, _ in batch), len(sent)


def _by_second(ctx: TickContext, plans: Sequence[FirstSend]) -> list[list[Member]]:
    """The jobs' first messages, grouped by the second the queue would make each visible at."""
    now = ctx.send_now()
    groups: dict[int, list[Member]] = {}
    for plan in plans:
        try:
            second = ctx.queue.delay_seconds(plan.message, visible_at=plan.visible_at, now=now)
        except ValueError:  # beyond the queue's delay: its task parks it
            continue
        groups.setdefault(second, []).append((plan.message, plan.visible_at))
    return list(groups.values())


def _split(members: list[Member]) -> list[list[Member]]:
    """`members` in as few batches as `BATCH_LIMIT` allows, of even sizes (never one of one)."""
    parts = -(-len(members) // BATCH_LIMIT)
    size, extra = divmod(len(members), parts)
    bounds = [i * size + min(i, extra) for i in range(parts + 1)]
    return [members[bounds[i] : bounds[i + 1]] for i in range(parts)]


def _send(ctx: TickContext, batch: list[Member]) -> bool:
    """Send one batch; False if that failed (its members' tasks then send them alone)."""
    try:
        ctx.queue.send_batch(batch, now=ctx.send_now())
    except Exception:
        logger.warning(
            "batch send failed; its %d occurrences are sent one by one",
            len(batch),
            exc_info=True,
            extra={"occurrence": iso_z(batch[0][0].occurrence)},
        )
        return False
    return True
