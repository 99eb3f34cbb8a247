"""Keep an action's secrets out of everything we write down about it.

Secrets are write-only (the standards), yet outcome messages quote what targets and SDKs say,
and those can contain our own credentials: an echo endpoint returns the Authorization header,
an SDK connection error quotes the request URL with the SAS token in its query string. So
instead of trusting each message source, every outcome message is scrubbed of every secret
value the action holds, in the encodings it travels in, plus derived values (a Basic header,
an OAuth access token) that the executors register.

"The encodings it travels in": a target that echoes a request back usually does so inside
JSON, where `"`, `\\`, control characters and (by the encoder's taste) `/`, non-ASCII and
HTML-sensitive characters are escaped (`\\"`, `\\/`, `\\u00e9`, `\\u00E9`), or in a URL or
form, percent-encoded (either hex case, `+` for a space), or in HTML as a character
reference. So each secret is matched by a pattern in which every character may appear in
any of those forms, mixed, rather than by a list of whole-string encodings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

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
        """Also hide `value`, in every encoding (and a SAS token's parameter values)."""
        if not value:
            return
        self._values.add(value)
        if "=" in value:  # a SAS token: its signature may be re-encoded on its way to a message
            for _, param in parse_qsl(value.lstrip("?")):
                if len(param) >= 16:
                    self._values.add(param)

    def __call__(self, text: str) -> str:
        # Longest first, so that a secret containing another is masked whole.
        for value in sorted(self._values, key=len, reverse=True):
            text = _pattern(value).sub(MASK, text)
        return _SAS_SIGNATURE.sub(r"\g<1>" + MASK, text)


@functools.lru_cache(maxsize=256)
def _pattern(value: str) -> re.Pattern[str]:
    """`value` with each character in any of its encoded forms (see the module docstring)."""
    return re.compile("".join(_char_forms(c) for c in value))


#: Characters JSON writes as a backslash and a letter.
_JSON_LETTER = {"\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
_HTML_NAMED = {'"': "&quot;", "&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&#39;|&apos;"}


def _hex(number: int, width: int) -> str:
    """`number` in hex, either case, as a pattern."""
    return "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


def _char_forms(c: str) -> str:
    """Every form of `c`. JSON escapes may be nested (JSON in a JSON string: `\\u00e9`
    becomes `\\\\u00e9`), so an escape's backslash may be any run of backslashes."""
    code = ord(c)
    forms = [re.escape(c)]
    if c in '"/\\':
        forms.append(r"\\+" + re.escape(c))
    if c in _JSON_LETTER:
        forms.append(r"\\+" + _JSON_LETTER[c])
    if code > 0xFFFF:  # JSON escapes it as a UTF-16 surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        forms.append(rf"\\+u{_hex(high, 4)}\\+u{_hex(low, 4)}")
    else:
        forms.append(rf"\\+u{_hex(code, 4)}")
    forms.append("".join(f"%{_hex(b, 2)}" for b in c.encode("utf-8")))
    if c == " ":
        forms.append(r"\+")
    forms.append(f"&#0*{code};|&#[xX]0*{_hex(code, 1)};")
    if c in _HTML_NAMED:
        forms.append(_HTML_NAMED[c])
    return "(?:" + "|".join(forms) + ")"


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
