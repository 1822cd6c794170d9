"""Hidden control characters in text from the cluster, made visible.

Free text in Kubernetes objects (event and condition messages, reasons, phases, labels, annotation
values, owner names, images) is unvalidated, so it can carry characters that change how the text
around them reads without being seen themselves:

- C0 and C1 control characters other than tab, newline and carriage return (a NUL vanishes in an
  HTML page; an escape sequence does nothing visible);
- Unicode's bidirectional formatting characters: the marks U+200E/U+200F/U+061C, the embeddings
  and overrides U+202A-U+202E and the isolates U+2066-U+2069 (Unicode TR #9 §2). A right-to-left
  override makes "\u202egninnuR" read as "Running": the "Trojan Source" spoofing, CVE-2021-42574.

kubectl prints them raw. The dashboard shows each as a ``U+XXXX`` marker instead, in two places
that share the character set below: the ``reveal`` template filter (a styled marker with the
character's Unicode name, for the free-text fields) and ``reveal_hidden_middleware``, a net over
every HTML response that replaces whatever is left with a plain-text marker (safe in any HTML
context, attribute values included, since it contains no markup characters).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe

_CHARS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
HIDDEN = re.compile(f"[{_CHARS}]")
# The same set in UTF-8, for response bodies (bytes): one-byte C0 controls and DEL, then the
# two-byte C1 controls and U+061C, then the three-byte marks, embeddings, overrides and isolates.
HIDDEN_UTF8 = re.compile(
    rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)


# The C0 controls and DEL have no Unicode character name; these are their ISO 6429 / ECMA-48
# names, as Unicode's NameAliases.txt lists them. C1 controls show as "control character".
_C0_NAMES = (
    "NULL", "START OF HEADING", "START OF TEXT", "END OF TEXT", "END OF TRANSMISSION", "ENQUIRY",
    "ACKNOWLEDGE", "BELL", "BACKSPACE", "CHARACTER TABULATION", "LINE FEED", "LINE TABULATION",
    "FORM FEED", "CARRIAGE RETURN", "SHIFT OUT", "SHIFT IN", "DATA LINK ESCAPE",
    "DEVICE CONTROL ONE", "DEVICE CONTROL TWO", "DEVICE CONTROL THREE", "DEVICE CONTROL FOUR",
    "NEGATIVE ACKNOWLEDGE", "SYNCHRONOUS IDLE", "END OF TRANSMISSION BLOCK", "CANCEL",
    "END OF MEDIUM", "SUBSTITUTE", "ESCAPE", "INFORMATION SEPARATOR FOUR",
    "INFORMATION SEPARATOR THREE", "INFORMATION SEPARATOR TWO", "INFORMATION SEPARATOR ONE",
)


def char_name(char: str) -> str:
    """The name of ``char``: its Unicode name ("RIGHT-TO-LEFT OVERRIDE"), the control name for C0
    controls and DEL ("NULL", "ESCAPE", "DELETE"), else "control character" (C1 controls)."""
    code = ord(char)
    if code < 0x20:
        return _C0_NAMES[code]
    if code == 0x7F:
        return "DELETE"
    return unicodedata.name(char, "control character")


def _html_marker(match: re.Match) -> str:
    char = match.group()
    return f'<span class="ctl" title="{escape(char_name(char))}">U+{ord(char):04X}</span>'


def reveal_html(value: object) -> SafeString:
    """``value`` as escaped HTML (str() of it, unless already safe markup; None gives ""), with
    every hidden character as ``<span class="ctl" title="NAME">U+XXXX</span>``."""
    if value is None:
        return mark_safe("")
    text = conditional_escape(value)  # a SafeString (our own markup) is kept as it is
    if HIDDEN.search(text):
        text = HIDDEN.sub(_html_marker, text)
    return mark_safe(text)  # noqa: S308 - escaped above; the markers are our own markup


def _text_marker(match: re.Match) -> bytes:
    return b"[U+%04X]" % ord(match.group().decode("utf-8"))


def reveal_in_body(body: bytes) -> bytes:
    """``body`` (UTF-8 HTML) with every hidden character replaced by the text ``[U+XXXX]``."""
    return HIDDEN_UTF8.sub(_text_marker, body) if HIDDEN_UTF8.search(body) else body


def reveal_hidden_middleware(get_response: Callable[[HttpRequest], HttpResponse]):
    """Replace hidden characters left in an HTML response (see the module docstring) with
    ``[U+XXXX]``. Only complete ``text/html`` bodies; streaming and other types pass untouched.
    One regular-expression scan per page (a fraction of a millisecond for a 200 KB list page)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if (
            not getattr(response, "streaming", False)
            and response.get("Content-Type", "").startswith("text/html")
            and response.content
        ):
            revealed = reveal_in_body(response.content)
            if revealed is not response.content:
                response.content = revealed
        return response

    return middleware
