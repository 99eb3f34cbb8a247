"""The retry policy of a job's action (how a retry, or the errorAction, is delivered is
`finish.deliver`'s).

Azure Scheduler's policy is `None` (one attempt) or `Fixed`: `retryCount` more attempts (default
4, at most 20) spaced `retryInterval` apart (default PT30S, 15 seconds to 18 months). A missing
policy means the default Fixed one. api-version 2026-12-01 adds `Exponential` (full-jitter
delays capped by its largest interval, a target's `Retry-After` honoured within bounds) and,
for either type, `maxRetryDuration` and which failures retry (`backoff`; docs/extensions.md). The
errorAction runs under the main action's policy (the issue's rule), unless it carries a
`retryPolicy` of its own: the 2016-03-01 API allows one on `JobErrorAction`, and a field the
user sent is never silently ignored.

A retry is never a worker sleeping through the interval: it is the next `ExecutionMessage` sent
again with the interval as its visibility delay, measured from the end of the failed attempt.
Storage queues accept at most 7 days of delay (`execution_queue.MAX_DELAY`); a longer wait is
parked in the due index (`finish.deliver`), whose row the dispatcher sends when its minute comes.

The policy's fields, defaults and the checked reading of a stored one are the domain's
(`domain/actions.RetryPolicy`); this subclass adds when a retry is due.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from datetime import datetime

from scheduler_lib.domain import actions as policies
from scheduler_lib.domain.actions import RetryType, span
from scheduler_lib.domain.definition import JobDefinition
from scheduler_lib.domain.messages import ERROR_ACTION
from scheduler_lib.execution import backoff
from scheduler_lib.execution.backoff import Draw, Failure


@dataclass(frozen=True)
class RetryPolicy(policies.RetryPolicy):
    """The domain's retry policy (`domain/actions.py`: its fields, defaults and the reading
    of a stored one) with what the executor does with it: when a retry is due."""

    @classmethod
    def for_attempt(cls, definition: JobDefinition, action_name: str) -> RetryPolicy:
        """The policy for an attempt of the job's main action or of its errorAction
        (`action_name` "ErrorAction"): the errorAction's own policy if it has one."""
        policy = definition.action.retry_policy  # resolved once, when the job was read
        if action_name == ERROR_ACTION:
            error_action = definition.error_action
            if error_action is not None and error_action.own_retry_policy:
                policy = error_action.retry_policy
        return cls(**{f.name: getattr(policy, f.name) for f in fields(policy)})

    def retry_at(
        self,
        failed_at: datetime,
        *,
        attempt: int = 0,
        failure: Failure | None = None,
        draw: Draw = random.random,
    ) -> datetime:
        """When the retry of attempt `attempt`, which ended at `failed_at`, becomes due: a
        fixed interval, or an Exponential one (`backoff`: full jitter, or the target's
        `Retry-After` within [interval, max_interval])."""
        if self.retry_type is not RetryType.EXPONENTIAL:
            return failed_at + self.interval
        first = span(self.interval)
        asked = backoff.retry_after(failure.retry_after if failure else None, now=failed_at)
        if asked is not None:
            return failed_at + backoff.clamp(asked, first, self.max_interval)
        return failed_at + backoff.full_jitter(first, self.max_interval, attempt, draw)

    def next_retry(
        self,
        attempt: int,
        failure: Failure,
        *,
        failed_at: datetime,
        occurrence: datetime,
        draw: Draw = random.random,
    ) -> datetime | None:
        """When the failed attempt `attempt` is retried, or None: no retry left, a failure
        `retry_on` does not list, or a retry later than `maxRetryDuration` after `occurrence`."""
        if not self.allows_retry(attempt) or not failure.matches(self.retry_on):
            return None
        due = self.retry_at(failed_at, attempt=attempt, failure=failure, draw=draw)
        if self.max_duration is not None and due > occurrence + self.max_duration:
            return None
        return due
