"""The executor: one execution message in, one action run, its history and bookkeeping out.

`execute` handles a delivered message (claim, run, history, retry, errorAction), `claims` and
`lifecycle` keep the job's execution bookkeeping (at-most-once claims, counts, state),
`retry` decides and schedules redeliveries, `late` records occurrences that came too late to
run, `poisoned` records messages the queue gave up on. `messages` and `queue` are the message
and the Storage queue between the dispatcher and the executor.
"""
