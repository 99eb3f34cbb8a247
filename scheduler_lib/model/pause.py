"""Extension 8 (2026-12-01): a note on why a job is paused, and stopping after failures."""

from __future__ import annotations

from typing import Any

from scheduler_lib.model import wire

#: A note is for people reading the job: a sentence or a ticket link, not a document.
MAX_PAUSE_NOTE = 1024


def pause_note(value: Any, path: str) -> str:
    """Free text, at most `MAX_PAUSE_NOTE` characters (an empty one is how it is cleared
    besides null)."""
    return wire.string(value, path, max_length=MAX_PAUSE_NOTE, empty=True)
