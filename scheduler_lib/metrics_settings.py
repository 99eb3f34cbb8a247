"""The metrics' app settings, parsed once by `Settings.from_env` (a module of its own, as
`identity_audiences`, so that `config` stays one list of settings).

- `SCHEDULER_METRICS_TOKEN`: the bearer token(s) `GET /api/metrics` accepts (comma-separated,
  for rotation). Unset: the endpoint answers 404, as if it did not exist (closed by default).
  Never an API key: a scraper holding it reads counts, nothing else.
- `SCHEDULER_METRICS_COLLECTION_LABELS` (default 50) and `SCHEDULER_METRICS_JOB_LABELS`
  (default 0): how many collections and jobs get a `collection` / `job_name` label value of
  their own; the first ones to run take the places, for good, and every other one is counted
  as `other` (docs/metrics.md: the cardinality bound).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_lib.errors import ValidationError

TOKEN = "SCHEDULER_METRICS_TOKEN"
COLLECTION_LABELS = "SCHEDULER_METRICS_COLLECTION_LABELS"
JOB_LABELS = "SCHEDULER_METRICS_JOB_LABELS"
DEFAULT_COLLECTION_LABELS = 50
DEFAULT_JOB_LABELS = 0
#: The most either setting allows: the label registry is one table entity.
MAX_LABELS = 1000

#: Entries of `config.APP_SETTINGS`.
METRICS_APP_SETTINGS = {
    TOKEN: "bearer token(s) of GET /api/metrics (Prometheus); unset: the endpoint is 404",
    COLLECTION_LABELS: f"collections with a metrics label of their own (default "
    f"{DEFAULT_COLLECTION_LABELS}; the rest: other)",
    JOB_LABELS: f"jobs with a metrics label of their own (default {DEFAULT_JOB_LABELS}; the "
    "rest: other)",
}


@dataclass(frozen=True)
class MetricsSettings:
    tokens: tuple[str, ...] = ()
    collection_labels: int = DEFAULT_COLLECTION_LABELS
    job_labels: int = DEFAULT_JOB_LABELS

    @property
    def endpoint_open(self) -> bool:
        return bool(self.tokens)

    @classmethod
    def from_env(cls, env: Mapping[str, str], unresolved: tuple[str, ...] = ()) -> MetricsSettings:
        """The settings from app settings; a token whose Key Vault reference did not resolve
        (`unresolved`) is no token: the reference text must never open the endpoint."""
        raw = "" if TOKEN in unresolved else env.get(TOKEN, "")
        return cls(
            tokens=tuple(t.strip() for t in raw.split(",") if t.strip()),
            collection_labels=_limit(env, COLLECTION_LABELS, DEFAULT_COLLECTION_LABELS),
            job_labels=_limit(env, JOB_LABELS, DEFAULT_JOB_LABELS),
        )


NO_METRICS = MetricsSettings()


def _limit(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) > MAX_LABELS:
        raise ValidationError(name, f"must be a whole number from 0 to {MAX_LABELS}")
    return int(raw)
