"""Template tags of the Queue resource bars (presenters.resources.ResourceBar): ``resbar`` and
``minibar``, also registered in the ``volcano`` library the pages load.

Every tag escapes what it outputs (format_html); none trusts a value coming from the cluster.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from dashboard.hidden import as_text, reveal_html
from dashboard.templatetags.volcano_icons import icon, pct_class

register = template.Library()


@register.simple_tag
def resbar(bar, detail: bool = False, compact: bool = False, named: bool = True) -> SafeString:
    """One Queue resource (presenters.resources.ResourceBar): allocated (the fill) against guarantee,
    deserved and capability (markers), with the numbers as text. A tag rather than an include:
    the Queues page draws hundreds of them. ``compact`` (the Queues list, 600 bars): two short
    lines (the numbers; the bar and its percentage), the markers without hover titles (the bar's
    ``aria-label`` names all four values, the queue's page shows them with the full legend), and
    the name only when ``named`` (a column header names it otherwise). Resource names (keys of the
    ResourceLists) and values that are no quantity (shown verbatim) are free text: hidden
    characters in them are revealed (dashboard/hidden.py)."""
    if compact:
        return _resbar_compact(bar, named)
    return format_html(
        '<div class="resbar tone-{}"><div class="resbar-head"><span class="resbar-name">{}</span>'
        '<span class="resbar-nums">{}</span></div>{}{}</div>',
        bar.tone,
        reveal_html(bar.name),
        _resbar_numbers(bar),
        _resbar_track(bar, compact),
        _resbar_legend(bar) if detail else SafeString(""),
    )


def _resbar_compact(bar, named: bool) -> SafeString:
    """The Queues list's bar: allocated / deserved, then the bar with its percentage (and the
    capability's value when the percentage is of it). Nothing to compare against: the amount with
    a mark that the list explains once (queues.html)."""
    name = format_html('<span class="resbar-name">{}</span>', reveal_html(bar.name)) if named else ""
    nums = format_html("<strong>{}</strong>", reveal_html(bar.allocated))
    if not bar.has_ref and not bar.invalid:
        return format_html(
            '<div class="resbar resbar-compact tone-{}" data-noref><div class="resbar-head">{}'
            '<span class="resbar-nums">{}<sup class="noref-mark">*</sup></span></div></div>',
            bar.tone,
            name,
            nums,
        )
    if bar.deserved != "—":
        nums += format_html(" / {}", reveal_html(bar.deserved))
    warn = SafeString("")
    if bar.deserved_over_cap:
        warn = format_html(
            '<div class="resbar-warn warn-text small" data-deserved-over-cap>{}{}</div>',
            icon("alert"),
            _("deserved exceeds capability"),
        )
    if bar.over_cap and bar.pct is None:
        warn += format_html('<div class="small">{}</div>', _over_capability(bar))
    return format_html(
        '<div class="resbar resbar-compact tone-{}"><div class="resbar-head">{}'
        '<span class="resbar-nums">{}</span></div><div class="resbar-line">{}{}</div>{}</div>',
        bar.tone,
        name,
        nums,
        _resbar_track(bar, True),
        _resbar_pct(bar),
        warn,
    )


def _resbar_pct(bar) -> SafeString:
    """The percentage and what it is of: "46% of deserved", or "0% of capability 4" with the
    capability's value (the only place the list shows it)."""
    if bar.pct is None:
        return SafeString("")
    of_cap = bar.pct_of == "capability"
    return format_html(
        ' <span class="resbar-pct{}">{}{}%{}</span>{}',
        " is-over" if bar.over else "",
        icon("alert") if bar.over else "",
        bar.pct_text,
        " " + (_("of capability") if of_cap else _("of deserved")),
        format_html(' <span class="resbar-cap">{}</span>', reveal_html(bar.capability)) if of_cap else "",
    )


def _resbar_numbers(bar) -> SafeString:
    """The bar's head: allocated, deserved, and the percentage (of deserved, or of capability with
    the capability's value)."""
    nums = format_html("<strong>{}</strong>", reveal_html(bar.allocated))
    if bar.deserved != "—":
        nums += format_html(' / {} <span class="muted">{}</span>', reveal_html(bar.deserved), _("deserved"))
    if bar.pct is not None:
        nums += format_html(" ·{}", _resbar_pct(bar))
    if bar.deserved_over_cap:
        nums += format_html(
            ' <span class="resbar-warn warn-text" data-deserved-over-cap>{}{}</span>',
            icon("alert"),
            _("deserved exceeds capability"),
        )
    return nums + _over_capability(bar)


def _over_capability(bar) -> SafeString:
    """The words "above capability" when the allocation is over the capability (a capability of 0
    has no percentage to show it)."""
    if not bar.over_cap:
        return SafeString("")
    return format_html(
        ' <span class="resbar-warn bad-text" data-over-cap>{}{}</span>', icon("alert"), _("above capability")
    )


def _resbar_track(bar, compact: bool) -> SafeString:
    """The bar itself: the fill and the markers, or a note when there is nothing to draw against."""
    if bar.invalid:
        # A value is no usable amount (shown verbatim in the numbers): no bar drawn from guesses.
        return format_html(
            '<div class="resbar-noref small muted" data-invalid>{}</div>',
            reveal_html(_("no bar: %(values)s") % {"values": bar.invalid_text}),
        )
    if not bar.has_ref:
        return format_html(
            '<div class="resbar-noref small muted">{}</div>',
            _("allocated; no guarantee, deserved or capability set"),
        )
    marks = SafeString("")
    for at, cls, word, value in (
        (bar.guarantee_at, "mark-g", _("guarantee"), bar.guarantee),
        (bar.deserved_at, "mark-d", _("deserved"), bar.deserved),
        (bar.capability_at, "mark-c", _("capability"), bar.capability),
    ):
        if at is not None and compact:
            marks += format_html('<span class="mark {} {}"></span>', cls, pct_class(at, "l"))
        elif at is not None:
            marks += format_html(
                '<span class="mark {} {}" title="{} {}"></span>',
                cls,
                pct_class(at, "l"),
                word,
                as_text(value),
            )
    label = _("%(n)s: allocated %(a)s, deserved %(d)s, guarantee %(g)s, capability %(c)s") % {
        "n": bar.name,
        "a": bar.allocated,
        "d": bar.deserved,
        "g": bar.guarantee,
        "c": bar.capability,
    }
    return format_html(
        '<div class="resbar-track" role="img" aria-label="{}"><div class="resbar-fill {}"></div>{}</div>',
        as_text(label),
        pct_class(bar.fill),
        marks,
    )


def _resbar_reference(bar) -> SafeString:
    """What the bar's percentage measures against, stated under the bar on a Queue's page."""
    if bar.pct is None or bar.invalid:
        return SafeString("")
    if bar.deserved_over_cap:
        ref_text = _(
            "Percentage: allocated ÷ capability %(c)s, the effective share (deserved %(d)s exceeds "
            "the capability, so the queue can never reach it). The bar runs from 0 to the largest value."
        ) % {"c": bar.capability, "d": bar.deserved}
    elif bar.pct_of == "capability":
        ref_text = _(
            "Percentage: allocated ÷ capability %(c)s (no deserved set). "
            "The bar runs from 0 to the largest value."
        ) % {"c": bar.capability}
    else:
        ref_text = _("Percentage: allocated ÷ deserved %(d)s. The bar runs from 0 to the largest value.") % {
            "d": bar.deserved
        }
    return format_html('<div class="resbar-ref small muted">{}</div>', reveal_html(ref_text))


def _resbar_legend(bar) -> SafeString:
    """The full legend under a bar on a Queue's page: what the percentage measures against, then
    each value with its key colour."""
    return _resbar_reference(bar) + format_html(
        '<div class="resbar-legend small"><span><i class="key key-a"></i>{} {}</span> '
        '<span><i class="key key-g"></i>{} {}</span> <span><i class="key key-d"></i>{} {}</span> '
        '<span><i class="key key-c"></i>{} {}</span></div>',
        _("allocated"),
        reveal_html(bar.allocated),
        _("guarantee"),
        reveal_html(bar.guarantee),
        _("deserved"),
        reveal_html(bar.deserved),
        _("capability"),
        reveal_html(bar.capability),
    )


@register.simple_tag
def minibar(bar) -> SafeString:
    """A compact resource cell for the overview's queue table: allocated, % of deserved, a thin bar."""
    if bar is None:
        return mark_safe('<span class="muted">—</span>')
    pct = SafeString("")
    if bar.pct is not None:
        pct = format_html(
            ' <span class="{}">{}{}%</span>',
            "is-over" if bar.over else "",
            icon("alert") if bar.over else "",
            bar.pct_text,
        )
    if bar.over_cap and bar.pct is None:
        pct += _over_capability(bar)
    track = SafeString("")
    if bar.has_ref and not bar.invalid:
        mark = (
            format_html('<span class="mark mark-d {}"></span>', pct_class(bar.deserved_at, "l"))
            if bar.deserved_at is not None
            else ""
        )
        track = format_html(
            '<span class="minibar-track"><span class="minibar-fill {}"></span>{}</span>',
            pct_class(bar.fill),
            mark,
        )
    title = _("%(n)s: allocated %(a)s, deserved %(d)s, capability %(c)s") % {
        "n": bar.name,
        "a": bar.allocated,
        "d": bar.deserved,
        "c": bar.capability,
    }
    return format_html(
        '<div class="minibar tone-{}" title="{}"><span class="minibar-text"><strong>{}</strong>{}'
        "</span>{}</div>",
        bar.tone,
        as_text(title),
        reveal_html(bar.allocated),
        pct,
        track,
    )
