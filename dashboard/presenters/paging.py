"""What a list or table says when its page number in the query string was not used as asked.

``?page=`` (list pages) and ``?pod_page=`` (the pods table of a Job or PodGroup) are clamped to
the pages there are; a value that is not a whole number from 1 reads page 1. Either way the page
says which page it shows instead, so a bookmark or a typed URL never shows another page silently.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

from dashboard.hidden import as_text

# A query value as a note quotes it: at most this many characters.
QUOTED_MAX = 40
# A whole number as a query string gives it: ASCII digits only (``int`` also reads "+2", " 2",
# "1_000" and other scripts' digits such as "２", none of which a link of these pages writes).
_DIGITS = re.compile(r"[0-9]+")
# Digits beyond these are read as this many nines (``int`` refuses strings of 4,300 digits and
# more; no page or tail reaches this number).
_MAX_DIGITS = 18


def quoted(raw: str) -> str:
    """A query value as a note quotes it: hidden characters (a right-to-left override, a NUL)
    written ``U+XXXX`` (dashboard.hidden.as_text), at most QUOTED_MAX characters."""
    text = as_text(raw)
    return text if len(text) <= QUOTED_MAX else text[:QUOTED_MAX] + "…"


def whole_number(raw: str) -> int | None:
    """``raw`` as a whole number written in ASCII digits (at most 10**18 - 1: a longer one reads
    as that), None when it is not one."""
    if not _DIGITS.fullmatch(raw):
        return None
    return int(raw) if len(raw) <= _MAX_DIGITS else 10**_MAX_DIGITS - 1


def asked_page(raw: str | None) -> tuple[int, bool]:
    """``raw`` (a page number from the query string) as (the page to show, whether it was a whole
    number from 1): absent or empty is (1, True); anything else not such a number is (1, False)."""
    value = raw or ""
    if not value:
        return 1, True
    number = whole_number(value)
    return (number, True) if number is not None and number >= 1 else (1, False)


def page_note(raw: str | None, shown: int, pages: int) -> str:
    """The note for ``?page=raw`` when the page shown is not the one asked ("" when it is, or
    when none was asked)."""
    value = raw or ""
    number, valid = asked_page(value)
    if not value or (valid and number == shown):
        return ""
    return _("There is no page “%(asked)s”: showing page %(shown)d of %(pages)d.") % {
        "asked": quoted(value),
        "shown": shown,
        "pages": pages,
    }


def sort_note(raw: str | None, known: list[str] | tuple[str, ...], default: str) -> str:
    """The note for ``?sort=raw`` when it names no sort of the list ("" when it does or when none
    was asked): the list is in its default order."""
    value = raw or ""
    if not value.strip() or value.strip().lstrip("-") in known:
        return ""
    return _("Unknown sort “%(asked)s”: sorted by %(default)s instead. Sorts: %(known)s.") % {
        "asked": quoted(value),
        "default": default,
        "known": ", ".join(known),
    }
