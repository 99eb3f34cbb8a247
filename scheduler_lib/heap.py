"""A worker's startup objects set aside from the cyclic garbage collector's full scans.

A worker imports the app and builds its runtime once (`function_app.py`; the local host
the same): some 110,000 objects that live as long as the process (modules, classes, the
SDKs' clients, the API's routes). CPython's collector walks every object of its oldest
generation at each full collection, and occurrences in flight (a batch's members hold
their jobs, requests and answers for the seconds they wait for their second) promote
enough objects into it to start one every few hundred occurrences: 150-200 ms of CPU each
on the 2-core machine of docs/cost.md, nearly all of it spent walking those startup objects,
that is 0.4 ms per occurrence of a batch run in-process (`docs/cost.md`, "The startup heap
frozen (eleventh step)").

`gc.freeze()` moves every object there is to a permanent generation that collections skip;
CPython documents it for objects that live for the process. The collection just before it
keeps the import's own garbage out. Frozen objects are still freed when nothing refers to
them (reference counting is untouched); what the collector can no longer free is a cycle
among them that becomes garbage later, which objects built to live for the process do not
form. Objects made afterwards (every occurrence's) are collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> int:
    """Collect what the start left as garbage, then freeze the rest; how many objects are
    frozen. Called once by each entry point, after the runtime is built (never by library
    code: a test process builds many runtimes and must keep collecting them)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
