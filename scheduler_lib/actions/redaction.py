"""Keep an action's secrets out of everything we write down about it.

Secrets are write-only (the standards), yet outcome messages quote what targets and SDKs say,
and those can contain our own credentials: an echo endpoint returns the Authorization header,
an SDK connection error quotes the request URL with the SAS token in its query string. So
instead of trusting each message source, every outcome message is scrubbed of every secret
value the action holds, in the encodings it travels in, plus derived values (a Basic header,
an OAuth access token) that the executors register.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus

#: Property names that hold secrets anywhere in an action (compared case-insensitively).
SECRET_PROPERTIES = frozenset({"password", "pfx", "secret", "sastoken", "saskey"})

MASK = "***"

#: A SAS signature in any URL, even one built from a token we were not told about.
_SAS_SIGNATURE = re.compile(r"(?i)(\bsig=)[^&\s'\"<>]+")


class Redactor:
    """Replaces known secret values with `***`; call it on any text before it is stored."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        for value in secrets:
            self.add(value)

    @classmethod
    def from_action(cls, action: Mapping[str, Any]) -> Redactor:
        """A redactor for every secret property found anywhere in `action`."""
        return cls(_secret_values(action))

    def add(self, value: str | None) -> None:
        """Also hide `value`, as is and URL-encoded (and a SAS token's parameter values)."""
        if not value:
            return
        self._values.update({value, quote(value, safe=""), quote_plus(value)})
        if "=" in value:  # a SAS token: its signature may be re-encoded on its way to a message
            for _, param in parse_qsl(value.lstrip("?")):
                if len(param) >= 16:
                    self._values.update({param, quote(param, safe=""), quote_plus(param)})

    def __call__(self, text: str) -> str:
        # Longest first, so that a secret containing another is masked whole.
        for value in sorted(self._values, key=len, reverse=True):
            text = text.replace(value, MASK)
        return _SAS_SIGNATURE.sub(r"\g<1>" + MASK, text)


def _secret_values(node: Any) -> Iterable[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if isinstance(key, str) and key.lower() in SECRET_PROPERTIES and isinstance(value, str):
                yield value
            else:
                yield from _secret_values(value)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from _secret_values(item)
