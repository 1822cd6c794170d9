"""What a list or table says when its page number in the query string was not used as asked.

``?page=`` (list pages) and ``?pod_page=`` (the pods table of a Job or PodGroup) are clamped to
the pages there are; a value that is not a whole number from 1 reads page 1. Either way the page
says which page it shows instead, so a bookmark or a typed URL never shows another page silently.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

# A query value as a note quotes it: at most this many characters.
QUOTED_MAX = 40


def asked_page(raw: str | None) -> tuple[int, bool]:
    """``raw`` (a page number from the query string) as (the page to show, whether it was a whole
    number from 1): absent or empty is (1, True); anything else not such a number is (1, False)."""
    value = (raw or "").strip()
    if not value:
        return 1, True
    try:
        number = int(value)
    except ValueError:
        return 1, False
    return (number, True) if number >= 1 else (1, False)


def page_note(raw: str | None, shown: int, pages: int) -> str:
    """The note for ``?page=raw`` when the page shown is not the one asked ("" when it is, or
    when none was asked)."""
    value = (raw or "").strip()
    number, valid = asked_page(value)
    if not value or (valid and number == shown):
        return ""
    quoted = value if len(value) <= QUOTED_MAX else value[:QUOTED_MAX] + "…"
    return _("There is no page “%(asked)s”: showing page %(shown)d of %(pages)d.") % {
        "asked": quoted,
        "shown": shown,
        "pages": pages,
    }


def sort_note(raw: str | None, known: list[str] | tuple[str, ...], default: str) -> str:
    """The note for ``?sort=raw`` when it names no sort of the list ("" when it does or when none
    was asked): the list is in its default order."""
    value = (raw or "").strip()
    if not value or value.lstrip("-") in known:
        return ""
    quoted = value if len(value) <= QUOTED_MAX else value[:QUOTED_MAX] + "…"
    return _("Unknown sort “%(asked)s”: sorted by %(default)s instead. Sorts: %(known)s.") % {
        "asked": quoted,
        "default": default,
        "known": ", ".join(known),
    }
