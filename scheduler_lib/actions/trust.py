"""The CA bundle an HTTPS attempt trusts, loaded once per version of its file, not per attempt.

Every attempt sends through a new session (`pinned`: a pooled connection, which may carry
one job's client certificate, is never reused for another job), and urllib3 made a new
SSLContext for each new connection and loaded the CA bundle into it: certifi's ~140
certificates, 10-30 ms of CPU per HTTPS attempt on a small instance, more than the rest of
an occurrence. Only that trust store is shared now: sessions, connections and client
certificates stay per attempt, and each handshake verifies the target's certificate and
host name as before (urllib3 sets the context's verify mode, always CERT_REQUIRED here, on
every connection it wraps). A bundle replaced at its path (another inode, size or mtime) is
loaded again; one that cannot be read or parsed is left to urllib3, which fails the attempt
as it always did.
"""

from __future__ import annotations

import os
import ssl
import stat
import threading

from urllib3.util.ssl_ import create_urllib3_context

#: Bundles kept at most (a worker trusts one or two: the default, a test's or an operator's).
LIMIT = 8

_lock = threading.Lock()
_contexts: dict[tuple[str, int, int, int], ssl.SSLContext] = {}


def trust_context(path: str) -> ssl.SSLContext | None:
    """A verifying client context trusting the CA file (or directory) at `path`, as urllib3
    builds one for a connection; None if it cannot be read or parsed."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    key = (path, found.st_ino, found.st_size, found.st_mtime_ns)
    with _lock:
        context = _contexts.get(key)
    if context is not None:
        return context
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    try:
        if stat.S_ISDIR(found.st_mode):
            context.load_verify_locations(capath=path)
        else:
            context.load_verify_locations(cafile=path)
    except (OSError, ValueError):  # ssl.SSLError is an OSError
        return None
    with _lock:
        if len(_contexts) >= LIMIT:
            _contexts.clear()
        _contexts[key] = context
    return context
