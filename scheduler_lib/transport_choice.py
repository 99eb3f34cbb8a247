"""`SCHEDULER_STORAGE_TRANSPORT`: what the storage clients send their requests through
(`storage_account.service_client`). `pooled`, the default: `storage_transport.PoolTransport`,
kept-alive `http.client` connections under azure-core's transport interface, a third less
client CPU per request (docs/cost.md, "SDK request CPU (seventh step)"). `requests`:
azure-core's own `RequestsTransport` on a `requests` session, as before it: the operator's
way back, without a redeploy, should a network path ever treat the two differently. Its own
module, as `precision` is, so that `config.py` stays a reader of plain settings."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from scheduler_lib.precision import read_choice


class TransportChoice(StrEnum):
    POOLED = "pooled"
    REQUESTS = "requests"


def read_transport(env: Mapping[str, str]) -> TransportChoice:
    """The setting's value (default `pooled`), or a ValidationError naming it."""
    return read_choice(env, "SCHEDULER_STORAGE_TRANSPORT", TransportChoice, TransportChoice.POOLED)
