"""Hidden control characters in text from the cluster, made visible.

Free text in Kubernetes objects (event and condition messages, reasons, phases, labels, annotation
values, owner names, images) is unvalidated, so it can carry characters that change how the text
around them reads without being seen themselves:

- C0 and C1 control characters other than tab, newline and carriage return (a NUL vanishes in an
  HTML page; an escape sequence does nothing visible);
- every Unicode format character (category Cf): zero-width space, joiners and word joiner, the
  byte-order mark, the soft hyphen, tag characters (U+E0000-U+E007F), and among them
- Unicode's bidirectional formatting characters: the marks U+200E/U+200F/U+061C, the embeddings
  and overrides U+202A-U+202E and the isolates U+2066-U+2069 (Unicode TR #9 §2). A right-to-left
  override makes "\u202egninnuR" read as "Running": the "Trojan Source" spoofing, CVE-2021-42574.

kubectl prints them raw. The dashboard shows each as a ``U+XXXX`` marker instead: the ``reveal``
template filter (templatetags/volcano.py; ``reveal_attr`` in attributes, ``<title>`` and
``<option>``, where markup cannot go) is applied to every field a cluster can fill with free text,
and to the query values a page echoes. Object names and namespaces are left as they are: the API
server admits only DNS labels/subdomains there (a name taken from an address, as on a 404, is
revealed). tests/pages/test_hostile_objects.py checks that no hidden character reaches any HTML
page, for every object its hypothesis strategies build (``find_hidden`` below).

Not done as a filter over whole responses: scanning a 150 KB list page for them costs ~2-3 ms in
Python's regular-expression engine, a tenth of the jobs page's budget (docs/benchmarks.md).
"""

from __future__ import annotations

import html
import re
import unicodedata

from django.utils.functional import Promise
from django.utils.html import escape
from django.utils.safestring import SafeString

# Controls, then every character of Unicode's general category Cf ("format": zero-width spaces and
# joiners, word joiner, byte-order mark, soft hyphen, bidi controls, tag characters U+E0000-U+E007F),
# which render as nothing or change how their neighbours read ("Runn\u200bing" reads "Running").
# tests/pages/test_hostile_objects.py checks this list against unicodedata.
_CHARS = (
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
HIDDEN = re.compile(f"[{_CHARS}]")


def find_hidden(text: str) -> list[str]:
    """Every hidden character in ``text``, in order (repeats included); [] when there is none.
    Tab, newline and carriage return are ordinary whitespace and are not reported. For checks
    over whole pages (tests/pages/test_hostile_objects.py)."""
    return HIDDEN.findall(text)


# The C0 controls and DEL have no Unicode character name; these are their ISO 6429 / ECMA-48
# names, as Unicode's NameAliases.txt lists them. C1 controls show as "control character".
_C0_NAMES = (
    "NULL",
    "START OF HEADING",
    "START OF TEXT",
    "END OF TEXT",
    "END OF TRANSMISSION",
    "ENQUIRY",
    "ACKNOWLEDGE",
    "BELL",
    "BACKSPACE",
    "CHARACTER TABULATION",
    "LINE FEED",
    "LINE TABULATION",
    "FORM FEED",
    "CARRIAGE RETURN",
    "SHIFT OUT",
    "SHIFT IN",
    "DATA LINK ESCAPE",
    "DEVICE CONTROL ONE",
    "DEVICE CONTROL TWO",
    "DEVICE CONTROL THREE",
    "DEVICE CONTROL FOUR",
    "NEGATIVE ACKNOWLEDGE",
    "SYNCHRONOUS IDLE",
    "END OF TRANSMISSION BLOCK",
    "CANCEL",
    "END OF MEDIUM",
    "SUBSTITUTE",
    "ESCAPE",
    "INFORMATION SEPARATOR FOUR",
    "INFORMATION SEPARATOR THREE",
    "INFORMATION SEPARATOR TWO",
    "INFORMATION SEPARATOR ONE",
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
        return SafeString("")
    if isinstance(value, Promise):
        value = str(value)
    # conditional_escape, inlined: Django's escape() goes through a lazy-argument wrapper that
    # costs more than the escaping itself, and list pages call this for several fields a row.
    text = value.__html__() if hasattr(value, "__html__") else html.escape(str(value))
    if HIDDEN.search(text):
        text = HIDDEN.sub(_html_marker, text)
    return SafeString(text)  # escaped above; the markers are our own markup


def as_text(value: object) -> str:
    """``value`` as plain text with every hidden character written ``U+XXXX``: for attribute
    values (data-phase, a filter checkbox's value), where markup cannot go. Filters that compare a
    submitted value with the cluster's (the phase chips) accept this form too."""
    text = "" if value is None else str(value)
    return HIDDEN.sub(lambda m: f"U+{ord(m.group()):04X}", text) if HIDDEN.search(text) else text
