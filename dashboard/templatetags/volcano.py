"""Template tags of the dashboard: status badges, icons, relative times, object links, fragment polling.

Every tag escapes what it outputs (format_html); none trusts a value coming from the cluster.
"""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import quote, urlencode

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.hidden import as_text, reveal_html
from dashboard.presenters.phases import Phase
from dashboard.templatetags.volcano_bars import minibar, resbar
from dashboard.templatetags.volcano_copy import copy_button, is_long
from dashboard.templatetags.volcano_copy import middle_short as short
from dashboard.templatetags.volcano_icons import icon, icon_ref, icon_sprite, pct_class
from dashboard.volcano.time import CLOCK_SKEW_SECONDS, elapsed

register = template.Library()
# Icons and bars live in their own modules; the pages load them with the rest of this library.
for _tag in (icon, icon_ref, icon_sprite, resbar, minibar):
    register.simple_tag(_tag)
register.filter(pct_class)


@register.simple_tag
def badge(phase: Phase | None, extra: str = "", ref: bool = False) -> SafeString:
    """A status pill: icon + text, tone as colour (never colour alone). ``ref``: the icon from the
    page's sprite (``icon_sprite``), for rows repeated hundreds of times."""
    if phase is None:
        return mark_safe('<span class="badge tone-muted">—</span>')
    title = "" if phase.known else _("Phase not known to this dashboard; shown as reported")
    transitional = getattr(phase, "transitional", False)
    if transitional:
        title = _("Transitional phase: the controller is moving on to another phase")
    pill = format_html(
        '<span class="badge tone-{}{}{}"{}>{}<span>{}</span></span>',
        phase.tone,
        " badge-transitional" if transitional else "",
        " " + extra if extra else "",
        format_html(' title="{}"', title) if title else "",
        icon_ref(phase.icon) if ref else icon(phase.icon),
        reveal_html(phase.label),
    )
    if getattr(phase, "deleting", False):
        pill += format_html(
            ' <span class="badge tone-warn badge-deleting{}" title="{}">{}<span>{}</span></span>',
            " " + extra if extra else "",
            _("metadata.deletionTimestamp is set: Kubernetes is deleting this object"),
            icon("ban"),
            _("Deleting"),
        )
    return pill


def short_duration(seconds: float | None) -> str:
    """kubectl-style compact duration, whole units cut down, never rounded up: 45s, 1m52s, 2m52s
    (two units below 10 minutes, so a countdown never jumps), 12m, 3h5m, 2d4h, 400d. The one
    format of relative durations (static/dashboard/reltime.js follows the same steps)."""
    if seconds is None:
        return "—"
    s = int(max(0, seconds))
    if s < 60:
        return _("%(n)ds") % {"n": s}
    m, rest = divmod(s, 60)
    if m < 10 and rest:
        return _("%(m)dm%(s)ds") % {"m": m, "s": rest}
    if m < 60:
        return _("%(n)dm") % {"n": m}
    h, m = divmod(m, 60)
    if h < 24:
        return (_("%(h)dh%(m)dm") % {"h": h, "m": m}) if m and h < 10 else _("%(n)dh") % {"n": h}
    d, h = divmod(h, 24)
    if d < 10 and h:
        return _("%(d)dd%(h)dh") % {"d": d, "h": h}
    return _("%(n)dd") % {"n": d}


def clock_skew_seconds() -> float:
    """How far ahead of now a timestamp may be and still read "just now" (setting
    VOLCANO_UI_CLOCK_SKEW_SECONDS, default dashboard.volcano.time.CLOCK_SKEW_SECONDS)."""
    return float(getattr(settings, "VOLCANO_UI_CLOCK_SKEW_SECONDS", CLOCK_SKEW_SECONDS))


@register.simple_tag
def duration(seconds: float | None, start: datetime | None = None) -> str:
    """short_duration of a wait. A negative one (its start is in the future) within the clock
    skew allowance is a wait that just began ("0s"); beyond it "—", never a made-up length.
    ``start``: the wait goes on from that moment, so the text is a ticking ``<time data-rel>``."""
    if seconds is not None and seconds < 0:
        return short_duration(0) if -seconds <= clock_skew_seconds() else "—"
    if seconds is not None and isinstance(start, datetime):
        return _time(start, short_duration(seconds))
    return short_duration(seconds)


def _absolute(dt: datetime) -> str:
    # strftime rather than date_format: a list page formats hundreds of these.
    return timezone.localtime(dt).strftime("%Y-%m-%d %H:%M:%S %Z")


# ``data-rel`` of a relative time: static/dashboard/reltime.js re-renders its text as time passes
# ("age": "5m", "ago": "5m ago"), so a fragment's text need not change for its version to stay.
REL_AGE = "age"
REL_AGO = "ago"
REL_IN = "in"


def _time(dt: datetime, text: str, rel: str = REL_AGE) -> SafeString:
    return format_html(
        '<time datetime="{}" title="{}" data-rel="{}">{}</time>', dt.isoformat(), _absolute(dt), rel, text
    )


def _skewed(dt: datetime, words: bool, rel: str = REL_AGE) -> SafeString:
    """A timestamp further in the future than clock skew explains: its absolute time and the
    likely cause, never "in 2d" (nothing that happened can be in the future). The wrapper's
    ``data-rel-skew``: reltime.js replaces it by the relative time once the timestamp is within the
    allowance (the fragment's version does not change with time)."""
    when = format_html(
        '<time datetime="{}" class="clock-skew">{}</time> <span class="muted small">{}</span>',
        dt.isoformat(),
        _absolute(dt),
        _("(clock skew?)"),
    )
    if words:
        when = format_html("{} {}", _("unknown: starts"), when)
    return format_html(
        '<span data-rel-skew="{}" data-datetime="{}" data-title="{}">{}</span>',
        rel,
        dt.isoformat(),
        _absolute(dt),
        when,
    )


@register.simple_tag(takes_context=True)
def ago(context: template.Context, dt: datetime | None, suffix: bool = False) -> SafeString:
    """``<time>`` with a relative age ("5m", or "5m ago" with suffix) and the absolute time (in the
    configured time zone) on hover. Null timestamps render as a dash. A timestamp ahead of now
    within the clock skew allowance reads "just now"; one further ahead is shown as its absolute
    time with "(clock skew?)" (dashboard.volcano.time.elapsed)."""
    if not isinstance(dt, datetime):
        return format_html('<span class="muted" title="{}">—</span>', _("no timestamp"))
    now = context.get("now") or timezone.now()
    secs = elapsed(dt, now, clock_skew_seconds())
    rel = REL_AGO if suffix else REL_AGE
    if secs is None:
        return _skewed(dt, False, rel)
    if dt > now:
        return _time(dt, _("just now"), rel)
    text = short_duration(secs)
    return _time(dt, _("%(t)s ago") % {"t": text} if suffix else text, rel)


@register.simple_tag(takes_context=True)
def since(context: template.Context, dt: datetime | None, words: bool = False) -> SafeString:
    """Elapsed time since ``dt`` (time in phase, wait time), absolute start on hover, as ``ago``.
    With ``words`` (a sentence such as "in this phase for ...") a ``dt`` beyond the clock skew
    allowance reads "unknown: starts <absolute time> (clock skew?)"."""
    if words and isinstance(dt, datetime):
        now = context.get("now") or timezone.now()
        if elapsed(dt, now, clock_skew_seconds()) is None:
            return _skewed(dt, True)
    return ago(context, dt, False)


@register.simple_tag(takes_context=True)
def until(context: template.Context, dt: datetime | None) -> SafeString:
    """``<time>`` with the wait until a time that is meant to be ahead (a CronJob's next run): "in 5d",
    the absolute time on hover; once it has passed, "5m ago" (reltime.js ticks both). Null: a dash."""
    if not isinstance(dt, datetime):
        return format_html('<span class="muted" title="{}">—</span>', _("no timestamp"))
    now = context.get("now") or timezone.now()
    secs = (dt - now).total_seconds()
    if secs >= 0:
        return _time(dt, _("in %(t)s") % {"t": short_duration(secs)}, REL_IN)
    return _time(dt, _("%(t)s ago") % {"t": short_duration(-secs)}, REL_IN)


@register.simple_tag
def absolute(dt: datetime | None) -> str:
    return _absolute(dt) if isinstance(dt, datetime) else "—"


_ROUTES = {
    "job": "job_detail",
    "podgroup": "podgroup_detail",
    "queue": "queue_detail",
    "pod": "pod_detail",
    "node": "node_detail",
    "hypernode": "hypernode_detail",
    "cronjob": "cronjob_detail",
    "jobflow": "jobflow_detail",
    "jobtemplate": "jobtemplate_detail",
}


_URL_PATTERNS: dict[str, str] = {}
# What reverse() leaves unquoted in a path argument (django.urls.resolvers, RFC 3986 sub-delims).
_PATH_SAFE = "!$&'()*+,;=~:@"


def object_url(kind: str, *args: str) -> str:
    """URL of an object's page, or "" when the name cannot form one (empty, contains "/").

    reverse() once per route with placeholders, then quoting per call: list pages link hundreds
    of objects and reverse() is the slow part of that.
    """
    if not args or any(not isinstance(a, str) or not a or "/" in a for a in args):
        return ""
    pattern = _URL_PATTERNS.get(kind)
    if pattern is None:
        try:
            pattern = reverse(_ROUTES[kind], args=[f"\x00{i}\x00" for i in range(len(args))])
        except (NoReverseMatch, KeyError):
            return ""
        pattern = pattern.replace("%", "%%")
        for i in range(len(args)):
            pattern = pattern.replace(f"%%00{i}%%00", "%s")
        _URL_PATTERNS[kind] = pattern
    try:
        return pattern % tuple(quote(a, safe=_PATH_SAFE) for a in args)
    except TypeError:
        return ""


@register.simple_tag
def url_for(kind: str, *args: str) -> str:
    return object_url(kind, *args)


@register.simple_tag
def objlink(kind: str, *args: str, label: str | None = None, cls: str = "", missing: str = "") -> SafeString:
    """A link to an object's page showing its name (or ``label``); plain text when no page exists.
    ``missing`` (presenters.pending.absent_hint: the object is not in the cache) shows the name unlinked
    followed by that hint, instead of a link to a 404."""
    text = label if label is not None else (args[-1] if args else "")
    url = object_url(kind, *args)
    if not text:
        return mark_safe('<span class="muted">—</span>')
    text = reveal_html(text)  # a queue named in spec.queue is free text until it is found
    if missing:
        return format_html(
            '<span class="{}" data-missing>{}</span> <span class="muted small">{}</span>', cls, text, missing
        )
    if not url:
        return format_html('<span class="{}">{}</span>', cls, text)
    if kind == "podgroup" and label is None and is_long(name := args[-1]):  # <job>-<uid>: one line
        link = format_html('<a class="objlink" href="{}" title="{}">{}</a>', url, as_text(name), short(name))
        return link + copy_button(name, _("name"))
    return format_html('<a class="{}" href="{}">{}</a>', cls or "objlink", url, text)


@register.simple_tag(takes_context=True)
def poll(context: template.Context, fragment: str) -> SafeString:
    """htmx attributes that refresh a ``{% partialdef %}`` fragment in place.

    The request carries the version the page last saw (``?v=``); the view answers 204 without
    rendering when it is unchanged. static/js/app.js fires ``vui:poll`` on ``[data-poll]`` elements
    (adaptive: paused while the tab is hidden, backing off after errors). When the page is no longer
    live (a final phase), no polling attributes are written and the fragment stays as it is.
    """
    request = context["request"]
    versions = context.get("versions") or {}
    if fragment not in versions:  # e.g. the 404 page: nothing to refresh
        return format_html(' id="frag-{}"', fragment)
    params = [(k, v) for k, v in request.GET.lists() for v in v if k not in ("f", "v")]
    params += [("f", fragment), ("v", versions.get(fragment, ""))]
    url = request.path + "?" + urlencode(params)
    live = context.get("live", True)
    attrs = format_html(' id="frag-{}" hx-get="{}" hx-swap="outerHTML" hx-sync="this:drop"', fragment, url)
    if live:
        attrs += format_html(' hx-trigger="vui:poll" data-poll="{}"', fragment)
    return attrs


@register.filter
def reveal(value: object) -> SafeString:
    """``value`` as escaped text with every hidden control character (C0/C1 controls, bidi marks,
    embeddings, overrides and isolates) shown as a visible ``U+XXXX`` marker, its Unicode name as
    title, instead of acting on the text: dashboard/hidden.py says which and why. None gives ""."""
    return reveal_html(value)


# Characters of a message shown before the rest is folded away (~4 lines of an events table).
CLIP_CHARS = 400


@register.filter
def clip(value: object, limit: int = CLIP_CHARS) -> SafeString:
    """``value`` revealed (see ``reveal``), with text beyond ``limit`` characters (default
    CLIP_CHARS) folded into a ``<details class="clip">`` the reader can open: one event message of
    a few thousand characters must not push the rest of the page ~4,000 px down. Nothing is
    dropped; the page holds the whole (cache-trimmed, dashboard/kube/trim.py) text."""
    text = "" if value is None else str(value)
    try:
        limit = max(1, int(limit))
    except (TypeError, ValueError):
        limit = CLIP_CHARS
    if len(text) <= limit + 80:  # not worth a fold for a few words
        return reveal_html(text)
    # Cut at a space near the limit when there is one, so a word is not split.
    cut = text.rfind(" ", limit - 60, limit)
    cut = cut if cut > 0 else limit
    more = len(text) - cut
    return format_html(
        '<details class="clip"><summary>{}<span class="clip-more">… {}</span></summary>{}</details>',
        reveal_html(text[:cut]),
        ngettext("(%(n)s more character)", "(%(n)s more characters)", more) % {"n": f"{more:,}"},
        reveal_html(text[cut:]),
    )


register.filter("middle_short", short)


@register.filter
def reveal_attr(value: object) -> str:
    """``value`` for an HTML attribute: hidden control characters written as plain ``U+XXXX``
    (dashboard/hidden.as_text); escaped by the template as usual."""
    return as_text(value)


@register.filter
def bar_named(bars: list, name: str):
    """The bar of resource ``name`` in ``bars`` (ResourceBars), or None."""
    return next((b for b in bars if b.name == name), None)


@register.filter
def bars_not_in(bars: list, names: list):
    """The bars of ``bars`` whose resource is not in ``names`` (the Queues list's "other" column)."""
    return [b for b in bars if b.name not in names]


@register.filter
def get_item(mapping: dict, key: str):
    try:
        return mapping.get(key, 0)
    except AttributeError:
        return 0


def _base_params(request) -> dict[str, list[str]]:
    # Computed once per request: a list page asks for a dozen links (sort headers, chips, pages).
    cached = getattr(request, "_vui_query_base", None)
    if cached is None:
        cached = {k: v for k, v in request.GET.lists() if k not in ("f", "v")}
        request._vui_query_base = cached
    return cached


@register.simple_tag(takes_context=True)
def query(context: template.Context, **changes) -> str:
    """The current query string with ``changes`` applied (None, "" or an empty list removes a key,
    a list gives a repeated key); page resets to 1 unless given. Used for sort headers, pagination
    and filter chips, so filter state stays in the URL."""
    data = dict(_base_params(context["request"]))
    if "page" not in changes:
        data.pop("page", None)
    for key, value in changes.items():
        values = [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]
        if value is None or not [v for v in values if v]:
            data.pop(key, None)
        else:
            data[key] = [v for v in values if v]
    pairs = [(k, v) for k, vs in data.items() for v in vs]
    return "?" + urlencode(pairs) if pairs else "?"


@register.simple_tag
def gang(g) -> SafeString:
    """The gang bar (running pods against minAvailable, the marker) — the markup of
    dashboard/_gang.html as a tag, because list pages draw one per row."""
    if g is None:
        return mark_safe('<span class="muted">—</span>')
    if not getattr(g, "known", True):
        return format_html(
            '<span class="muted gang-unknown" title="{}">—</span>', _("no pod counts reported yet")
        )
    if getattr(g, "outcome", ""):
        return format_html('<div class="gang gang-final"><span class="gang-text">{}</span></div>', g.outcome)
    # An unknown counter or size (None: negative, or no integer) reads "—", never 0.
    running = "—" if g.running is None else g.running
    min_available = "—" if g.min_available is None else g.min_available
    title = ngettext(
        "%(r)s running, minAvailable %(m)s, %(t)s replica",
        "%(r)s running, minAvailable %(m)s, %(t)s replicas",
        g.total,
    ) % {
        "r": running,
        "m": min_available,
        "t": g.total,
    }
    label = _("%(r)s of minAvailable %(m)s running") % {"r": running, "m": min_available}
    marker = (
        format_html('<div class="gang-min {}"></div>', pct_class(g.min_at, "l")) if g.min_available else ""
    )
    return format_html(
        '<div class="gang{}" title="{}"><div class="gang-track" role="img" aria-label="{}">'
        '<div class="gang-fill {}{}"></div>{}</div>'
        '<span class="gang-text"><strong>{}</strong>/{}</span></div>',
        # Short only when known to be: an unknown counter or size proves nothing.
        "" if g.met or getattr(g, "gangless", False) or not getattr(g, "trusted", True) else " gang-short",
        title,
        label,
        pct_class(g.fill),
        " is-met" if g.met else "",
        marker,
        running,
        min_available,
    )


@register.simple_tag(takes_context=True)
def theme_attr(context: template.Context) -> SafeString:
    """``data-theme`` on <html> from the theme cookie, so the chosen theme applies before any script
    runs (no flash); absent means "follow prefers-color-scheme"."""
    request = context.get("request")
    value = context.get("force_theme") or (
        request.COOKIES.get("vui_theme", "") if request is not None else ""
    )
    if value in ("light", "dark"):
        return format_html(' data-theme="{}"', value)
    return mark_safe("")


@register.simple_tag(takes_context=True)
def theme_next(context: template.Context) -> str:
    """The theme the no-JS toggle link switches to."""
    request = context.get("request")
    value = request.COOKIES.get("vui_theme", "") if request is not None else ""
    return "light" if value == "dark" else "dark"


@register.simple_tag(takes_context=True)
def sort_th(context: template.Context, key: str, label: str, cls: str = "") -> SafeString:
    """A sortable column header: a link toggling the sort in the query string, aria-sort set."""
    lq = context.get("lq")
    current = getattr(lq, "sort", "")
    active = current.lstrip("-") == key
    desc = current.startswith("-")
    new = (key if desc else f"-{key}") if active else key
    aria = ("descending" if desc else "ascending") if active else "none"
    arrow = ("▼" if desc else "▲") if active else ""
    href = query(context, sort=new)
    return format_html(
        '<th scope="col" class="{}" aria-sort="{}">'
        '<a href="{}">{}<span aria-hidden="true">{}</span></a></th>',
        cls,
        aria,
        href,
        label,
        (" " + arrow) if arrow else "",
    )


def reltime_words() -> dict[str, object]:
    """The words of ``short_duration`` and ``ago`` in the request's language, for
    static/dashboard/reltime.js (the same formats, so the browser's text matches the server's)."""
    return {
        "s": _("%(n)ds"),
        "ms": _("%(m)dm%(s)ds"),
        "m": _("%(n)dm"),
        "hm": _("%(h)dh%(m)dm"),
        "h": _("%(n)dh"),
        "dh": _("%(d)dd%(h)dh"),
        "d": _("%(n)dd"),
        "ago": _("%(t)s ago"),
        "in": _("in %(t)s"),
        "now": _("just now"),
        "skew": clock_skew_seconds(),
    }


@register.simple_tag(takes_context=True)
def reltime_script(context: template.Context) -> SafeString:
    """The script that keeps relative times ticking: the words (``reltime_words``) and the page's
    "now" (epoch milliseconds; the pages' clock is the cluster's, which need not be the browser's)
    as data attributes (no inline scripts)."""
    now = context.get("now")
    now_ms = int(now.timestamp() * 1000) if isinstance(now, datetime) else ""
    return format_html(
        '<script src="{}" data-words="{}" data-now="{}" defer></script>',
        static("dashboard/reltime.js"),
        json.dumps(reltime_words(), ensure_ascii=False),
        now_ms,
    )
