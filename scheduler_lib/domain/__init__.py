"""The scheduler's domain: jobs, job collections, their identities and their vocabulary.

Knows no storage, queue or HTTP. `store/` reads and writes these records, `model/` turns them
into wire JSON, `dispatch/` and `execution/` change them; all of them import `domain`, and
`domain` imports none of them.

`keys` (the identities every table shares), `jobs` (`JobRecord` and the dispatcher's record of
what it sent), `collections` (`CollectionRecord`), `vocabulary` (states and statuses as enums).
"""
