"""Logging set-up for the entry points: one structured line per event, optional export
to Application Insights through OpenTelemetry.

Library modules log with `extra={"job": ..., "occurrence": ..., "tag": ...}`; the
formatter appends those as `key=value` pairs, so every dispatcher and executor line can be
searched by job and occurrence, and App Insights receives them as custom dimensions.
Nothing here ever formats a job definition, so no secret can reach a log line.
"""

from __future__ import annotations

import logging
import sys

from scheduler_lib.config import Settings

#: Extra attributes rendered as `key=value` (and exported as custom dimensions).
CONTEXT_FIELDS = ("job", "occurrence", "tag", "action", "attempt", "outcome", "duration_ms")

#: Azure SDK loggers that would print request URLs (SAS tokens) and headers at INFO.
_NOISY = ("azure.core.pipeline.policies.http_logging_policy", "azure.identity", "azure.servicebus")


class ContextFormatter(logging.Formatter):
    """`2026-03-04T09:00:00Z INFO scheduler.execute message job=... occurrence=...`"""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s", "%Y-%m-%dT%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        pairs = [
            f"{name}={getattr(record, name)}"
            for name in CONTEXT_FIELDS
            if getattr(record, name, None) is not None
        ]
        return f"{line} {' '.join(pairs)}" if pairs else line


def configure_logging(
    settings: Settings, *, console: bool = True, export: bool = True, level: int = logging.INFO
) -> None:
    """Log in the structured format (`console`: to stderr) and, with `export`, to App
    Insights when a connection string is set. The Functions worker passes False for both:
    the host captures logging, and the worker exports to App Insights itself
    (`PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY`), so a second exporter would send every
    record twice."""
    root = logging.getLogger()
    if console and not any(isinstance(h.formatter, ContextFormatter) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(ContextFormatter())
        root.addHandler(handler)
    root.setLevel(level)
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.WARNING)
    if export and settings.appinsights_connection_string:
        from azure.monitor.opentelemetry import configure_azure_monitor

        configure_azure_monitor(connection_string=settings.appinsights_connection_string)
