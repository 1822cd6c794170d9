"""The pages' memos: computed sections, filtered lists and rendered HTML reused across requests.

Many open tabs and kiosks poll the same pages; these memos let them share one computation (and
one rendering) while the collections read are unchanged. Every memo is bounded.

- ``cache_token(cache)``: the name of a cache inside memo keys.
- ``SizedMemo``: a thread-safe LRU bounded by estimated bytes (the list memo ``LIST_MEMO``).
- ``SingleFlight``: concurrent requests for one slot share one computation (the lists' passes).
- ``section(key, compute, stale_key=...)``: single-flight memo of an aggregate section
  (``SECTIONS``, a ``SectionMemo``), with bounded staleness for expensive ones.
- ``queue_rows_html(rows, template)``: rendered queue table rows, per queue.
- ``hypernode_rows_html(rows)``: rendered HyperNode tree rows, per row.
- ``list_rows_html(template, rows, now, shown)``: rendered Jobs and PodGroups list rows, per row.
- ``attention_html(attention, now)``: the rendered "needs attention" lists.
- ``locale_key()``: the (language, time zone) a memoised value holds text for.
- ``viewer_key(request)``: what a rendering depends on besides the cache (shared pages, fragments).
- ``PerObject``: a value derived from each cached object, kept while the object is the same.
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.template.loader import get_template
from django.urls import get_script_prefix
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from dashboard import access
from dashboard.templatetags.volcano import clock_skew_seconds, short_duration
from dashboard.views.prefs import THEME_COOKIE
from dashboard.volcano import phases
from dashboard.volcano.time import elapsed

# Memo keys name the cache by a token, not id(): a test's cache is garbage collected and a later
# one may get the same id, and with equal change counters a memo would then answer with the old
# cache's objects. Weak keys: a token never keeps a cache alive.
_CACHE_TOKENS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TOKEN_SEQ = itertools.count(1)


def cache_token(cache: object) -> int:
    """A number naming ``cache`` for as long as it lives, never reused by another cache."""
    token = _CACHE_TOKENS.get(cache)
    if token is None:
        token = _CACHE_TOKENS.setdefault(cache, next(_TOKEN_SEQ))
    return token


def locale_key() -> tuple[str, str]:
    """(language, time zone) of the request being served: memoised sections hold translated text
    (phase placeholders, why-pending findings, pod blockers), so viewers in different languages
    (or time zones) must never share one computed value."""
    return (get_language() or "", timezone.get_current_timezone_name())


def viewer_key(request: HttpRequest, *, identity: bool = True, drop: tuple[str, ...] = ()) -> tuple:
    """What a rendering for ``request`` depends on besides the cache's objects: the cache, the
    path and query (without the ``drop`` parameters), what the viewer may see
    (``access.visible_namespaces``) and, with ``identity``, who they are (else None), the
    language and time zone (``locale_key``), the theme cookie and the script prefix. Viewers
    with equal keys may be answered from one rendering."""
    from dashboard.kube import get_cluster_cache

    query = tuple(sorted((k, tuple(v)) for k, v in request.GET.lists() if k not in drop))
    return (
        cache_token(get_cluster_cache()),
        request.path,
        query,
        access.visible_namespaces(request),
        access.current_identity(request) if identity else None,
        *locale_key(),
        request.COOKIES.get(THEME_COOKIE, ""),
        get_script_prefix(),
    )


class SizedMemo:
    """A thread-safe LRU memo bounded by an estimated size in bytes rather than by entry count:
    a filtered list of 10,000 Jobs and one of 3 differ a thousandfold, so a count bound either
    wastes memory or evicts the small entries for nothing. ``put(key, value, size)`` evicts the
    least recently used entries until the total is within ``budget``; an entry larger than the
    whole budget is not kept. ``size`` is the caller's estimate (see each caller).

    ``put(..., slot=...)``: an entry replaces the slot's previous entry. Callers whose keys hold a
    collection's change counter pass the key without it as the slot: an entry for an older counter
    is never asked for again, yet it would keep the objects it references alive (objects the cache
    has since replaced) until the budget pushes it out."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.total = 0
        self._entries: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self._slots: dict[tuple, tuple] = {}  # slot -> its entry's key
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Any:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: tuple, value: Any, size: int, slot: tuple | None = None) -> None:
        with self._lock:
            self._drop(key)
            if slot is not None:
                previous = self._slots.pop(slot, None)
                if previous is not None:
                    self._drop(previous)
            if size > self.budget:
                return
            self._entries[key] = (value, size)
            self.total += size
            if slot is not None:
                self._slots[slot] = key
            while self.total > self.budget:
                self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.total -= old[1]
            if len(self._slots) > 2 * len(self._entries) + 64:
                # Slots whose entry the budget evicted: forget them (their keys are gone).
                self._slots = {s: k for s, k in self._slots.items() if k in self._entries}

    def values(self) -> list[tuple[tuple, Any]]:
        """(key, value) of every entry, least recently used first (a copy, for measurements)."""
        with self._lock:
            return [(k, v) for k, (v, _size) in self._entries.items()]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._slots.clear()
            self.total = 0

    def __len__(self) -> int:
        return len(self._entries)


# Filtered and sorted objects of a list page, reused while the collection is unchanged: a poll of
# page 1 at 10,000 Jobs must not re-sort everything (benchmark target <= 30 ms p50). An entry is a
# list of references to the cache's own objects (8 bytes each; the objects belong to the cache)
# plus the phase counts; a namespace-set/filter/sort combination per collection version.
# LIST_MEMO_BYTES bounds the whole memo (64 full lists of 10,000 Jobs are ~5 MB).
LIST_MEMO_BYTES = 8 * 1024 * 1024
LIST_MEMO = SizedMemo(LIST_MEMO_BYTES)


class SingleFlight:
    """One computation at a time per slot, shared by the requests that waited for it.

    ``run(slot, compute)``: when another request is computing the slot, wait for it and take its
    result; it finished after this request arrived, so it is at most as old as the wait. Under
    churn the change counters differ between any two requests, so without this N concurrent
    viewers of one list would each compute it in turn. Otherwise compute. A result is kept only
    while requests for its slot are in flight (it holds objects the cache may have replaced);
    ``max_slots`` bounds the idle slots' locks and counters."""

    def __init__(self, max_slots: int = 64) -> None:
        self.max_slots = max_slots
        self._lock = threading.Lock()
        self._flights: dict[tuple, threading.Lock] = {}
        self._finished: dict[tuple, int] = {}  # slot -> computations finished
        self._in_flight: dict[tuple, int] = {}  # slot -> requests in run()
        self._results: dict[tuple, Any] = {}  # slot -> newest result, while requests are in run()

    def run(self, slot: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:
            flight = self._flights.setdefault(slot, threading.Lock())
            arrived = self._finished.get(slot, 0)
            self._in_flight[slot] = self._in_flight.get(slot, 0) + 1
        try:
            with flight:
                with self._lock:
                    finished = self._finished.get(slot, 0)
                    if finished != arrived:
                        return self._results[slot]
                value = compute()
                with self._lock:
                    self._finished[slot] = finished + 1
                    self._results[slot] = value
                return value
        finally:
            with self._lock:
                left = self._in_flight.pop(slot) - 1
                if left:
                    self._in_flight[slot] = left
                else:
                    self._results.pop(slot, None)
                if len(self._flights) > self.max_slots:
                    for k in [k for k in self._flights if k not in self._in_flight]:
                        del self._flights[k]
                        self._finished.pop(k, None)

    def __len__(self) -> int:
        return len(self._flights)


def list_entry_size(objs: list, counts: Counter) -> int:
    """Estimated bytes of a list memo entry: list 56 + 8 per slot (sys.getsizeof), ~100 a phase."""
    return 56 + 8 * len(objs) + 100 * len(counts) + 200


# --- per-object values -----------------------------------------------------------------------


class PerObject:
    """A value derived from each cached object, reused while the cache holds the very same dict.

    The cache replaces an object on change and never mutates it, so the same dict means the same
    fields: a walk over 20,000 Events derives the value (parses timestamps) only for the objects
    that changed since the previous walk. ``derive`` must read the object alone (one PerObject
    per set of other inputs). Entries are {id(obj): (obj, value)}; an entry keeps its object
    alive, so a walk that finds the memo holding more than an eighth (plus ``SLACK``) beyond the
    objects the last walk read keeps only those it reads: replaced and deleted objects leave.
    Dict reads and writes are atomic: concurrent walks are safe (at worst a value is derived
    twice)."""

    SLACK = 256

    def __init__(self, derive: Callable[[Any], Any]) -> None:
        self.derive = derive
        self._entries: dict[int, tuple[Any, Any]] = {}
        self._walked = 0  # objects of the last walk

    def newest(self, objs: Iterable[Any]) -> Any:
        """The largest non-None derived value over ``objs``; None when every value is None."""
        entries = self._entries
        get = entries.get
        derive = self.derive
        # Pruning costs an insert per object: only when the memo has outgrown the last walk.
        limit = self._walked + self._walked // 8 + self.SLACK
        kept: dict[int, tuple[Any, Any]] | None = {} if len(entries) > limit else None
        newest = None
        walked = 0
        for obj in objs:
            walked += 1
            key = id(obj)
            hit = get(key)
            if hit is None or hit[0] is not obj:
                hit = (obj, derive(obj))
                entries[key] = hit
            if kept is not None:
                kept[key] = hit
            value = hit[1]
            if value is not None and (newest is None or value > newest):
                newest = value
        if kept is not None:
            self._entries = kept
        self._walked = walked
        return newest

    def __len__(self) -> int:
        return len(self._entries)


# --- sections ---------------------------------------------------------------------------------

# Stale reuse only pays where a recompute is expensive; cheap sections stay exact (and so do the
# small clusters tests use). A section may be reused for STALE_FACTOR × its compute time, at most
# STALE_MAX_SECONDS.
STALE_MIN_COMPUTE_SECONDS = 0.02
STALE_FACTOR = 5.0
STALE_MAX_SECONDS = 1.5


class SectionMemo:
    """The state of ``section()``: at most ``max_entries`` computed sections (LRU).

    ``entries``: key -> value; ``latest``: stale key -> (finished at, monotonic s; compute time,
    s; value); ``keys``: stale key -> its entry's key; ``flights``: one computation at a time per
    stale key (or per key without one), whose result the requests that waited for it take;
    ``clock``: the monotonic clock staleness is measured with."""

    def __init__(self, max_entries: int = 32) -> None:
        self.max_entries = max_entries
        self.entries: OrderedDict[tuple, Any] = OrderedDict()
        self.latest: dict[tuple, tuple[float, float, Any]] = {}
        self.keys: dict[tuple, tuple] = {}
        self.flights = SingleFlight(max_slots=4 * max_entries)
        self.clock: Callable[[], float] = time.monotonic
        self.lock = threading.Lock()

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.latest.clear()
            self.keys.clear()

    def get(self, key: tuple, compute: Callable[[], Any], stale_key: tuple | None = None) -> Any:
        hit = self._exact(key)
        if hit is not None:
            return hit[0]

        def fresh_or_recent() -> Any:
            # Runs alone for its flight: a request that waited meanwhile takes this result, at
            # most as old as its wait (under churn the counters differ between any two requests).
            hit = self._exact(key)
            if hit is not None:
                return hit[0]
            if stale_key is not None:
                with self.lock:
                    latest = self.latest.get(stale_key)
                if latest is not None:
                    at, took, value = latest
                    if took >= STALE_MIN_COMPUTE_SECONDS and self.clock() - at <= min(
                        STALE_MAX_SECONDS, STALE_FACTOR * took
                    ):
                        return value
            started = self.clock()
            value = compute()
            finished = self.clock()
            with self.lock:
                self._store(key, value, stale_key, finished, finished - started)
            return value

        return self.flights.run(stale_key if stale_key is not None else key, fresh_or_recent)

    def _exact(self, key: tuple) -> tuple[Any] | None:
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return (self.entries[key],)
        return None

    def _store(self, key: tuple, value: Any, stale_key: tuple | None, finished: float, took: float) -> None:
        limit = self.max_entries
        if stale_key is not None:
            # One exact entry per section: an older counter's entry is never asked for again
            # but would keep the objects the cache has since replaced alive.
            previous = self.keys.get(stale_key)
            if previous is not None and previous != key:
                self.entries.pop(previous, None)
            self.keys[stale_key] = key
            if len(self.keys) > 4 * limit:
                self.keys.clear()
        self.entries[key] = value
        self.entries.move_to_end(key)
        while len(self.entries) > limit:
            self.entries.popitem(last=False)
        if stale_key is not None:
            self.latest[stale_key] = (finished, took, value)
            while len(self.latest) > limit:
                self.latest.pop(next(iter(self.latest)))


# Bounded: each entry holds a computed section (at 10,000 Jobs the queue rows and attention lists
# are megabytes), and keys differ per namespace set and per change counter.
SECTIONS = SectionMemo(max_entries=32)


def section(key: tuple, compute: Callable[[], Any], *, stale_key: tuple | None = None) -> Any:
    """Reuse a computed section while the collections it reads are unchanged (``key`` holds their
    change counters): many open tabs and kiosks poll the same overview.

    Single-flight: concurrent requests for the same section wait for one computation (a lock per
    section) instead of each computing it, and with a ``stale_key`` a request that waited takes
    the result computed meanwhile even when the counters moved (it is newer than the request);
    the memo keeps at most ``SECTIONS.max_entries`` entries (LRU), and of a section with a
    ``stale_key`` only its newest.

    ``stale_key`` (the key without its change counters) opts an aggregate section in to bounded
    staleness: under churn the counters move on nearly every request, so an exact key would almost
    never hit. When the last computation of the section took at least
    ``STALE_MIN_COMPUTE_SECONDS``, its result is reused for ``STALE_FACTOR`` × that time, at most
    ``STALE_MAX_SECONDS``, even though the counters moved. Pages poll every few seconds and show
    "data as of", so a result up to ~1.5 s old is within what they already promise. Detail
    fragments pass no ``stale_key`` and stay exactly keyed.
    """
    return SECTIONS.get(key, compute, stale_key)


# --- rendered HTML ----------------------------------------------------------------------------

# Rendered HTML of one queue table row, per (template, language, queue name): valid while the
# Queue object (identity), its place in the tree and its PodGroup counts are the same. N viewers of
# /queues/ and of the overview then render only the rows that changed since anyone last looked
# (200 rows cost ~60 ms to render; a queue's allocation changes a few times a minute under churn).
# Rows hold no times and no per-user markup; the language is part of the key. LRU-bounded.
ROW_HTML: OrderedDict[tuple, tuple[dict, tuple, str]] = OrderedDict()
ROW_HTML_MAX = 2048
_ROW_LOCK = threading.Lock()


def queue_rows_html(
    rows: list[dict], template_name: str, columns: tuple = (), sparks: dict | None = None
) -> SafeString:
    """The concatenated rendered rows of a queue table (``template_name`` renders one ``q``, a
    queue summary row; ``columns``, the table's resource columns, is given to it as ``res_columns``
    and ``res_other``; ``sparks``, {queue: views.sparklines.Spark} or None for no sparkline column,
    as ``spark`` and ``sparks_on``). A row's sparkline is part of its key: it changes once per
    history sample at most."""
    lang = get_language() or ""
    parts = []
    tmpl = None
    for q in rows:
        key = (template_name, lang, q["name"])
        # tree_key: the row's missing-parent / parent-cycle hint depends on other Queues.
        valid = (
            q["depth"],
            q["has_children"],
            q["tree_key"],
            tuple(q["count_list"]),
            q.get("pgs_unavailable", ""),
            columns,
            None if sparks is None else sparks.get(q["name"], ""),
        )
        hit = ROW_HTML.get(key)
        if hit is not None and hit[0] is q["queue"] and hit[1] == valid:
            parts.append(hit[2])
            continue
        if tmpl is None:
            tmpl = get_template(template_name)
        res_columns, res_other = columns or ((), False)
        html = tmpl.render(
            {
                "q": q,
                "pg_phases": phases.PODGROUP_PHASES,
                "res_columns": res_columns,
                "res_other": res_other,
                "sparks_on": sparks is not None,
                "spark": valid[-1],
            }
        )
        parts.append(html)
        with _ROW_LOCK:
            ROW_HTML[key] = (q["queue"], valid, html)
            ROW_HTML.move_to_end(key)
            while len(ROW_HTML) > ROW_HTML_MAX:
                ROW_HTML.popitem(last=False)
    return mark_safe("".join(parts))  # noqa: S308 - template output, escaped when rendered


# Rendered HTML of one HyperNode tree row, per (language, row position, HyperNode name): valid
# while the HyperNode object and the shown gangs' PodGroup and Job objects (identity) and the row's
# resolved nodes, depth and counts are the same. The tree has one full row per HyperNode (200 at
# scale, each with up to a dozen node links and ten gangs) and a one-line row per other place a
# HyperNode is a member; under churn few rows' gangs change between polls, so viewers render only
# those. Rows hold no times and no per-user markup. LRU-bounded.
HN_ROW_HTML: OrderedDict[tuple, tuple[tuple, tuple, str]] = OrderedDict()
HN_ROW_HTML_MAX = 2048


def row_still_valid(hit: tuple | None, idents: tuple, valid: tuple) -> bool:
    """A remembered row ``(idents, valid, html)`` still renders as the row now: the same objects
    (identity: the cache replaces an object on change) and equal other values."""
    return (
        hit is not None
        and hit[1] == valid
        and len(hit[0]) == len(idents)
        and all(a is b for a, b in zip(hit[0], idents, strict=True))
    )


def hypernode_rows_html(rows: list[dict]) -> SafeString:
    """The concatenated rendered rows of the HyperNode tree (``dashboard/_hypernode_row.html``
    renders one ``r``, a row of views.topology._tree_rows)."""
    lang = get_language() or ""
    parts = []
    tmpl = None
    for i, r in enumerate(rows):
        key = (lang, i, r["name"])
        gangs = r.get("gangs") or ()
        idents = (r.get("hn"), *(o for g in gangs for o in (g["pg"], g["job"])))
        valid = (
            r["depth"],
            r["cycle"],
            r.get("shared"),
            r.get("shown_under"),
            r.get("resolved"),
            tuple(r.get("nodes") or ()),
            r.get("more_nodes"),
            tuple(r.get("missing") or ()),
            tuple((g["pods"], g["nodes"]) for g in gangs),
            r.get("more_gangs"),
        )
        hit = HN_ROW_HTML.get(key)
        if row_still_valid(hit, idents, valid):
            assert hit is not None
            parts.append(hit[2])
            continue
        if tmpl is None:
            tmpl = get_template("dashboard/_hypernode_row.html")
        html = tmpl.render({"r": r})
        parts.append(html)
        with _ROW_LOCK:
            HN_ROW_HTML[key] = (idents, valid, html)
            HN_ROW_HTML.move_to_end(key)
            while len(HN_ROW_HTML) > HN_ROW_HTML_MAX:
                HN_ROW_HTML.popitem(last=False)
    return mark_safe("".join(parts))  # noqa: S308 - template output, escaped when rendered


# Rendered HTML of one list table row (Jobs, PodGroups), per (row template, language, time zone,
# URL prefix, namespace, name): valid while the objects the row reads are the same (identity: the
# cache replaces an object on change) and the other values it shows are equal (hints, missing-
# object notes, its ages' texts). N viewers of a list page then render only the rows that changed
# since anyone last looked. An entry keeps its objects alive until replaced or pushed out by the
# budget (2 MB holds ~1,000 Job rows of ~1 KB).
LIST_ROW_HTML = SizedMemo(2 * 1024 * 1024)


def ago_step(dt: datetime | None, now: datetime) -> tuple:
    """What of the ``ago``/``since`` tags' output at ``now`` depends on ``now`` (the rest is ``dt``
    in the time zone): equal steps give equal output. The relative text itself, from the one
    duration format (``short_duration``), without rendering the tag's HTML."""
    if not isinstance(dt, datetime):
        return ("none",)
    secs = elapsed(dt, now, clock_skew_seconds())
    if secs is None:
        return ("skew",)
    if dt > now:
        return ("now",)
    return ("ago", short_duration(secs))


def list_rows_html(
    template_name: str,
    rows: list[dict],
    now: datetime,
    shown: Callable[[dict, datetime], tuple[tuple, tuple]],
) -> SafeString:
    """The concatenated rendered rows of a list table. ``template_name`` renders one ``r`` (a row
    dict with ``namespace`` and ``name``) at ``now``; ``shown(r, now)`` is (the objects the row
    reads, compared by identity; every other value it shows that those objects do not decide,
    compared by equality)."""
    lang, tz = locale_key()
    prefix = get_script_prefix()
    parts = []
    tmpl = None
    for r in rows:
        key = (template_name, lang, tz, prefix, r["namespace"], r["name"])
        idents, valid = shown(r, now)
        hit = LIST_ROW_HTML.get(key)
        if row_still_valid(hit, idents, valid):
            assert hit is not None
            parts.append(hit[2])
            continue
        if tmpl is None:
            tmpl = get_template(template_name)
        html = tmpl.render({"r": r, "now": now})
        parts.append(html)
        LIST_ROW_HTML.put(key, (idents, valid, html), 2 * len(html) + 200)
    return mark_safe("".join(parts))  # noqa: S308 - template output, escaped when rendered


# Rendered "needs attention" lists per (computed lists, language, time zone, second): concurrent
# viewers share one computed value (see section()), so they share its rendering too. Relative
# times are shown to the second at most, so keying on the second keeps them exact. Small, bounded.
ATTENTION_HTML = SizedMemo(512 * 1024)


def attention_html(attention: dict, now: datetime) -> SafeString:
    """``dashboard/_attention.html`` rendered for the overview's "needs attention" dict."""
    key = (id(attention), get_language() or "", timezone.get_current_timezone_name(), int(now.timestamp()))
    hit = ATTENTION_HTML.get(key)
    if hit is not None and hit[0] is attention:
        return hit[1]
    html = mark_safe(  # noqa: S308 - template output, escaped when rendered
        get_template("dashboard/_attention.html").render({"attention": attention, "now": now})
    )
    ATTENTION_HTML.put(key, (attention, html), 2 * len(html) + 200)
    return html


# Rendered fragments shared between viewers (views.fragments.Fragments): N tabs polling one Job
# cost one render per version. An entry is the response body (bytes) and its content type, keyed by
# (cache token, fragment, version, path, query, visibility, language, time zone, theme). 4 MB holds
# ~400 Job status cards of ~10 KB; least recently used first out.
FRAGMENT_HTML_BYTES = 4 * 1024 * 1024
FRAGMENT_HTML = SizedMemo(FRAGMENT_HTML_BYTES)
