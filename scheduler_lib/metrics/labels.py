"""Bounded label values: which collections and jobs get a `collection` / `job_name` value of
their own, the rest counted as `other`, so 100,000 jobs cannot make 100,000 series.

The places are first come, for good, and shared by every instance through one registry
entity (`store.register_label`): a collection labelled on one instance is labelled on all,
so a series sums one collection's counts wherever they ran, never a part of them. An
instance asks storage only about a name it has not seen while places are left (at most
`limit` names per instance and dimension); once the registry is full every new name is
`other` without a call. The registry never frees a place: a freed place would let series
of deleted jobs pile up beyond the limit.
"""

from __future__ import annotations

import logging
import threading

from scheduler_lib.metrics.catalog import COLLECTION, JOB_NAME
from scheduler_lib.metrics_settings import MetricsSettings
from scheduler_lib.store import TableStore, register_label
from scheduler_lib.wire.actions import ACTION_TYPES

log = logging.getLogger(__name__)
OTHER = "other"


def action_type_label(kind: str) -> str:
    """One of the five action types, or `other` (a stored definition not validated)."""
    return kind if kind in ACTION_TYPES else OTHER


class LabelBudget:
    """The label value of a collection or a job (lower-cased names, as in the job's key)."""

    def __init__(self, store: TableStore, settings: MetricsSettings) -> None:
        self.store = store
        self.limits = {COLLECTION: settings.collection_labels, JOB_NAME: settings.job_labels}
        self._known: dict[str, frozenset[str]] = {COLLECTION: frozenset(), JOB_NAME: frozenset()}
        self._lock = threading.Lock()

    def value(self, dimension: str, name: str) -> str:
        """`name` if it has (or now takes) a place in `dimension`, else `other`."""
        limit = self.limits[dimension]
        with self._lock:
            known = self._known[dimension]
        if name in known:
            return name
        if len(known) >= limit:
            return OTHER
        try:
            values = register_label(self.store, dimension, name, limit=limit)
        except Exception:
            log.warning("metrics: could not register the label %s=%s", dimension, name)
            return OTHER
        with self._lock:
            self._known[dimension] = known = self._known[dimension] | frozenset(values)
        return name if name in known else OTHER
