"""The scheduler's domain: jobs, job collections, their identities and their vocabulary.

Knows no storage, queue or HTTP. `store/` reads and writes these records, `model/` turns them
into wire JSON, `dispatch/` and `execution/` change them; all of them import `domain`, and
`domain` imports none of them.
"""
