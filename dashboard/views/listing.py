"""List pages (Jobs, PodGroups): filter, sort and page one kind, read from the query string.

One implementation serves every list: a ``ListSpec`` names what differs (the kind, its sort keys,
its phases, its row), ``list_page(request, spec)`` is the view body. Query string: ``ns``,
``queue``, ``phase`` (repeatable), ``q`` (name or namespace contains), ``selector`` (a label
selector), ``sort`` (a key of ``spec.sorts`` or ``spec.snap_sorts``, ``-`` for descending), ``page``.
"""

from __future__ import annotations

import bisect
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils.safestring import SafeString

from dashboard.access import visible_namespaces
from dashboard.hidden import as_text
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.clock import reference_now
from dashboard.presenters.paging import asked_page, page_note, sort_note
from dashboard.presenters.phases import Phase
from dashboard.presenters.selectors import SelectorError, parse_selector, selector_matches
from dashboard.presenters.sorting import attention_note, sort_options
from dashboard.presenters.versions import version_key
from dashboard.views import memo
from dashboard.views.fragments import Fragments, kind_states
from dashboard.views.notices import blocked, page_ctx
from dashboard.views.rows import get_cluster_cache, phase_cards, snapshot
from dashboard.volcano import objects, phases

PAGE_SIZE = 50
# Sorted by a timestamp, where "ascending age" means the newest first.
INVERTED_SORTS = frozenset({"age", "inphase"})
_KNOWN_PHASES = frozenset(phases.JOB_PHASES) | frozenset(phases.PODGROUP_PHASES)


def phase_requested(phase: str, requested: Iterable[str]) -> bool:
    """Whether a phase filter (``?phase=``, the chips' values) selects ``phase``: as the cluster
    wrote it, or, for a phase with hidden characters, in the ``U+XXXX`` form the chips carry
    (dashboard/hidden.as_text). Known phases never need the second look."""
    return phase in requested or (phase not in _KNOWN_PHASES and as_text(phase) in requested)


class ListQuery:
    """Filter, sort and page state of a list page, read from (and written back to) the query string."""

    def __init__(
        self,
        request: HttpRequest,
        sorts: Collection[str],
        default_sort: str = "age",
        known_phases: Iterable[str] = (),
    ) -> None:
        get = request.GET
        self.namespace = get.get("ns", "").strip()
        self.queue = get.get("queue", "").strip()
        # The queue filter as the page echoes it back (its <option>) when spec.queue has hidden
        # characters: the U+XXXX form of dashboard/hidden.as_text, which no Queue name (a DNS
        # subdomain) contains; such a filter also matches that form, as the phase chips do.
        self.queue_marked = "U+" in self.queue
        # A known phase in any letter case ("pending") means that phase, in its canonical spelling
        # ("Pending"); only genuinely unknown phases are kept as written and filtered literally.
        canonical = {k.lower(): k for k in known_phases}
        # Each phase once, in the order asked (``?phase=`` repeats, one per phase).
        self.phases = list(dict.fromkeys(canonical.get(x.lower(), x) for x in get.getlist("phase") if x))
        self.text = get.get("q", "").strip()
        self.selector_text = get.get("selector", "").strip()
        self.selector_error = ""
        self.selector: list = []
        if self.selector_text:
            try:
                self.selector = parse_selector(self.selector_text)
            except SelectorError as exc:
                self.selector_error = str(exc)
        sort = get.get("sort", "").strip() or default_sort
        key = sort.lstrip("-")
        self.sort = sort if key in sorts else default_sort
        self.sort_key = self.sort.lstrip("-")
        self.descending = self.sort.startswith("-")
        # As asked, for the notes when they are not used as given (presenters.paging).
        self.sort_asked = get.get("sort", "")
        self.page_asked = get.get("page", "")
        self.page, _valid = asked_page(self.page_asked)

    @property
    def active(self) -> bool:
        return bool(self.namespace or self.queue or self.phases or self.text or self.selector_text)

    def key(self) -> tuple:
        return (self.namespace, self.queue, tuple(self.phases), self.text, self.selector_text, self.sort)

    def queue_matches(self, queue: str) -> bool:
        return not self.queue or queue == self.queue or (self.queue_marked and as_text(queue) == self.queue)

    def matches(self, obj: dict, queue: str, phase: str, *, ignore_phase: bool = False) -> bool:
        if self.namespace and objects.namespace(obj) != self.namespace:
            return False
        if not self.queue_matches(queue):
            return False
        if self.phases and not ignore_phase and not phase_requested(phase, self.phases):
            return False
        if self.text:
            needle = self.text.lower()
            if needle not in objects.name(obj).lower() and needle not in objects.namespace(obj).lower():
                return False
        if self.selector_error:
            return False
        return not (self.selector and not selector_matches(objects.labels(obj), self.selector))


@dataclass(frozen=True)
class ListSpec:
    """What one list page shows.

    ``kind``: the Snapshot attribute listed ("jobs"); ``kinds``: the kinds whose notices the page
    shows; ``depends``: the kinds whose change counters make up the results' version (a row reads
    them: PodGroups, pods, the queue link); ``in_queue(snap, name)``: the objects of one queue
    (the index the queue filter narrows to); ``sorts``: sort key -> function of an object (cheap:
    they run over every object on a memo miss); ``phase_name``: the phase as written,
    ``phase``: its ``presenters.phases.Phase``; ``row(snap, obj, now)``: the row dict of one object;
    ``active_phases``: the phases of the "Active" filter (every non-final one); ``default_sort``:
    the order without ``?sort=``; ``sort_columns``: sort key -> the (untranslated) header of its
    column where this list names it otherwise than presenters.sorting does ("State");
    ``snap_sorts``: sort keys whose value also reads the kinds of ``depends`` (a node's free GPUs
    read the pods on it), key -> a function of the snapshot giving the sort function;
    ``rows_html(rows, now)``: the page's rows rendered (``rows_html`` in the template), for lists
    whose rows are shared between viewers (memo.list_rows_html)."""

    kind: str
    nav: str
    template: str
    kinds: tuple[str, ...]
    depends: tuple[str, ...]
    in_queue: Callable[[Snapshot, str], list[dict]]
    sorts: dict[str, Callable[[dict], Any]]
    known_phases: frozenset[str]
    phase_order: Sequence[str]
    phase_name: Callable[[dict], str]
    phase: Callable[[dict], Phase]
    queue_of: Callable[[dict], str]
    row: Callable[[Snapshot, dict, datetime], dict]
    active_phases: tuple[str, ...] = ()
    default_sort: str = "age"
    sort_columns: dict[str, str] = field(default_factory=dict)
    snap_sorts: dict[str, Callable[[Snapshot], Callable[[dict], Any]]] = field(default_factory=dict)
    rows_html: Callable[[list[dict], datetime], SafeString] | None = None

    @property
    def sort_keys(self) -> tuple[str, ...]:
        """Every ``?sort=`` key of the list: ``sorts``, then ``snap_sorts``."""
        return (*self.sorts, *self.snap_sorts)


def list_page(request: HttpRequest, spec: ListSpec) -> HttpResponse:
    """The list page of ``spec`` (fragment ``results``: the phase chips, the table, the pager)."""
    snap = snapshot(request)
    now = reference_now(snap)
    lq = ListQuery(request, spec.sort_keys, default_sort=spec.default_sort, known_phases=spec.known_phases)
    states = kind_states(snap, *spec.kinds)
    frags = Fragments(
        request,
        snap,
        now,
        spec.kinds,
        results=lambda: version_key(
            *(getattr(snap, k).version for k in spec.depends), states, lq.key(), lq.page
        ),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, spec.kinds, spec.nav)
    ctx["lq"] = lq
    if frags.want("results"):
        ctx.update(_results(request, snap, now, lq, spec))
        ctx["blocked"] = blocked(ctx["notices"], spec.kind)
    if frags.asked is None:  # the filter form, outside the fragment
        ctx["namespaces"] = snap.namespaces()
        ctx["queue_names"] = sorted(objects.name(q) for q in snap.queues.all())
    return frags.respond(spec.template, ctx)


def _results(request: HttpRequest, snap: Snapshot, now: datetime, lq: ListQuery, spec: ListSpec) -> dict:
    view = getattr(snap, spec.kind)
    slot = (spec.kind, memo.cache_token(get_cluster_cache()), visible_namespaces(request), lq.key())
    sort_fn = spec.sorts.get(lq.sort_key)
    version: Any = view.version
    if sort_fn is None:  # a snap sort: its values change with the kinds it reads
        sort_fn = spec.snap_sorts[lq.sort_key](snap)
        version = (view.version, *(getattr(snap, k).version for k in spec.depends))
    objs, counts = filtered(_narrowed(snap, spec, lq), slot, version, lq, spec, sort_fn)
    page = Paginator(objs, PAGE_SIZE).get_page(lq.page)
    # The memo's objects are this snapshot's (its key holds the collection's change counter).
    rows = [spec.row(snap, obj, now) for obj in page.object_list]
    return {
        "page": page,
        "rows": rows,
        "rows_html": spec.rows_html(rows, now) if spec.rows_html else "",
        "total": len(objs),
        "phase_counts": phase_choices(phase_cards(counts, spec.phase_order, spec.phase), lq, spec),
        "active_phases": list(spec.active_phases),
        "active_selected": bool(lq.phases) and set(lq.phases) == set(spec.active_phases),
        "sort_options": sort_options(spec.sort_keys, lq.sort, spec.sort_columns),
        "sort_note": attention_note() if lq.sort_key == "attention" else "",
        "query_notes": [
            note
            for note in (
                sort_note(lq.sort_asked, spec.sort_keys, spec.default_sort),
                page_note(lq.page_asked, page.number, page.paginator.num_pages),
            )
            if note
        ],
        # Still filtered literally (a newer Volcano may have phases this UI does not know).
        "unknown_phases": [x for x in lq.phases if x not in spec.known_phases],
        "known_phases": spec.phase_order,
        "sort_columns": spec.sort_keys,
        # ?ns= of a namespace outside the viewer's: its objects are not shown, whether or not it has
        # any, so "No Jobs match" would be a claim the page cannot make.
        "ns_hidden": bool(lq.namespace)
        and snap.namespaces_filter is not None
        and lq.namespace not in snap.namespaces_filter,
    }


def phase_choices(cards: list[dict], lq: ListQuery, spec: ListSpec) -> list[dict]:
    """The phase cards of a list (``rows.phase_cards``) as filter choices: each with ``selected``
    (the filter asks for it) and ``toggled`` (the ``?phase=`` values with it added, or removed
    when selected); phases asked for that no card shows (unknown, with no match) come last."""
    out = []
    for card in cards:
        name = card["name"]
        selected = phase_requested(name, lq.phases)
        if selected:
            toggled = [x for x in lq.phases if not phase_requested(name, (x,))]
        else:
            toggled = [*lq.phases, name]
        out.append({**card, "selected": selected, "toggled": toggled})
    shown = {card["name"] for card in cards}
    for name in lq.phases:
        if name not in shown and not any(phase_requested(s, (name,)) for s in shown):
            phase = spec.phase({"status": {"phase": name, "state": {"phase": name}}})
            toggled = [x for x in lq.phases if x != name]
            out.append({"phase": phase, "name": name, "count": 0, "selected": True, "toggled": toggled})
    return out


def _narrowed(snap: Snapshot, spec: ListSpec, lq: ListQuery) -> Callable[[], list[dict]]:
    """The objects a list must scan (called only on a memo miss): the namespace or queue index when
    filtered by one."""
    view = getattr(snap, spec.kind)
    if lq.namespace:
        return lambda: view.in_namespace(lq.namespace)
    if lq.queue and not lq.queue_marked:  # the index knows spec.queue as written only
        return lambda: spec.in_queue(snap, lq.queue)
    return view.all


# Per list kind: {id(obj): (obj, namespace, name, queue, phase, creationTimestamp)} of the last pass.
# Bounded by the number of objects of the kind (replaced whole on each pass, so deleted objects
# leave with the next pass).
LIST_FIELDS: dict[str, dict[int, tuple]] = {}
# Sort keys read straight from those fields (index into the tuple).
_FIELD_SORTS = {"namespace": 1, "name": 2, "queue": 3, "phase": 4, "age": 5}
# Per list kind: (sort key, {id(obj): (obj, the key's value)}) of the last pass sorted by a key
# that is not one of those fields (the default "attention" among them), reused the same way.
SORT_VALUES: dict[str, tuple[str, dict[int, tuple]]] = {}
# RFC 3339 text with every digit d written 9 - d: sorts the newest first (times as text, unparsed).
NEWEST_FIRST = str.maketrans("0123456789", "9876543210")


def _fields(obj: dict, spec: ListSpec) -> tuple:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    created = meta.get("creationTimestamp")
    return (
        obj,
        meta.get("namespace") or "",
        meta.get("name") or "",
        spec.queue_of(obj),
        spec.phase_name(obj),
        created if isinstance(created, str) else "",
    )


# Per list slot (kind, cache, namespaces, query): the last pass's judgement of every object it
# read, {id(obj): (obj, phase counted or None, row or None)}, its rows in ascending order and its
# phase counts. The next pass over a changed collection re-judges only the objects the cache
# replaced, added or removed, and moves their rows in the sorted list, instead of sorting 10,000
# rows again. The order is the same as a full sort's: (sort value, namespace, name) is unique.
# Bounded: the slots most recently used (about 2 MB each at 10,000 Jobs).
_PASSES: OrderedDict[tuple, tuple[dict[int, tuple], list[tuple], Counter]] = OrderedDict()
PASSES_MAX = 4
_PASSES_LOCK = threading.Lock()
# Beyond this share of changed objects a full pass (one sort) is cheaper than moving each row.
PATCH_SHARE = 0.25


def filtered(
    source: Callable[[], list[dict]],
    slot: tuple,
    version: Any,
    lq: ListQuery,
    spec: ListSpec,
    sort_fn: Callable[[dict], Any] | None = None,
) -> tuple[list[dict], Counter]:
    """(the matching objects in display order, counts per phase ignoring the phase filter).

    One pass over ``source()`` (already narrowed by the cache's namespace/queue index when a filter
    allows it); the result is memoised (memo.LIST_MEMO) on the collection's change counter
    (``version``; with a snap sort, also those of the kinds it reads), so the polls of an
    unchanged list cost only the page's rows. ``slot`` (kind, cache, namespaces, query) keeps one
    entry: the newest computed. A changed collection is patched from the slot's last pass
    (``_PASSES``) when only a few objects changed, else sorted afresh; a request that finds the
    slot being computed takes that result (``LIST_FLIGHTS``). ``sort_fn``: the value of
    ``lq.sort_key`` of an object (by default ``spec.sorts``'s).
    """
    memo_key = (slot, version)
    hit = memo.LIST_MEMO.get(memo_key)
    if hit is not None:
        return hit
    return LIST_FLIGHTS.run(slot, lambda: _pass(source, slot, memo_key, lq, spec, sort_fn))


# Concurrent viewers of one list under churn share a pass (memo.SingleFlight).
LIST_FLIGHTS = memo.SingleFlight()


def _pass(
    source: Callable[[], list[dict]],
    slot: tuple,
    memo_key: tuple,
    lq: ListQuery,
    spec: ListSpec,
    sort_fn: Callable[[dict], Any] | None,
) -> tuple[list[dict], Counter]:
    if (hit := memo.LIST_MEMO.get(memo_key)) is not None:
        return hit
    judge = _Judge(lq, spec, sort_fn)
    # A snap sort's value may change while the object stays the same: never patched.
    patchable = lq.sort_key in spec.sorts
    passed = _patched(source, slot, judge) if patchable else None
    if passed is None:
        passed = _full_pass(source, spec, judge, patchable)
    entries, rows, counts = passed
    if patchable:
        with _PASSES_LOCK:
            _PASSES[slot] = passed
            _PASSES.move_to_end(slot)
            while len(_PASSES) > PASSES_MAX:
                _PASSES.popitem(last=False)
    objs = [row[3] for row in rows]
    if lq.descending != (lq.sort_key in INVERTED_SORTS):
        objs.reverse()  # keys are unique: the same order as a descending sort
    result = (objs, counts)
    memo.LIST_MEMO.put(memo_key, result, memo.list_entry_size(objs, counts), slot=slot)
    return result


class _Judge:
    """How one list query judges an object: ``of(obj, entry)`` is (obj, the phase it counts
    under or None when filtered out, its row (sort value, namespace, name, obj) or None when the
    phase filter hides it); ``entry`` is the object's ``_fields``."""

    def __init__(self, lq: ListQuery, spec: ListSpec, sort_fn: Callable[[dict], Any] | None) -> None:
        self.lq = lq
        self.spec = spec
        self.wanted = frozenset(lq.phases)
        # Only the namespace, text and selector filters need lq.matches; most views have none.
        self.check = bool(lq.namespace or lq.text or lq.selector_text)
        self.by_field = _FIELD_SORTS.get(lq.sort_key)
        self.sort_fn = sort_fn if sort_fn is not None else spec.sorts[lq.sort_key]
        last = SORT_VALUES.get(spec.kind)
        reuse = lq.sort_key in spec.sorts and last is not None and last[0] == lq.sort_key
        self.previous_values: dict[int, tuple] = last[1] if reuse and last else {}
        self.values: dict[int, tuple] = {}

    def of(self, obj: dict, entry: tuple) -> tuple:
        lq = self.lq
        _obj, ns, name, queue, phase, _created = entry
        if lq.queue and not lq.queue_matches(queue):
            return (obj, None, None)
        if self.check and not lq.matches(obj, queue, phase, ignore_phase=True):
            return (obj, None, None)
        if self.wanted and not phase_requested(phase, self.wanted):
            return (obj, phase, None)
        # Ties broken by namespace/name, so the order is stable; keys are unique, so the object
        # itself is never compared.
        if self.by_field:
            return (obj, phase, (entry[self.by_field], ns, name, obj))
        known = self.previous_values.get(id(obj))
        value = known[1] if known is not None and known[0] is obj else self.sort_fn(obj)
        self.values[id(obj)] = (obj, value)
        return (obj, phase, (value, ns, name, obj))


def _full_pass(
    source: Callable[[], list[dict]], spec: ListSpec, judge: _Judge, patchable: bool
) -> tuple[dict[int, tuple], list[tuple], Counter]:
    counts: Counter = Counter()
    rows: list[tuple] = []
    entries: dict[int, tuple] = {}
    # Per-object fields survive from the previous pass while the object is the very same dict (the
    # cache publishes unchanged objects by reference), so a change to one Job re-reads one Job.
    previous = LIST_FIELDS.get(spec.kind, {})
    current: dict[int, tuple] = {}
    for obj in source():
        entry = previous.get(id(obj))
        if entry is None or entry[0] is not obj:
            entry = _fields(obj, spec)
        current[id(obj)] = entry
        judged = judge.of(obj, entry)
        entries[id(obj)] = judged
        if judged[1] is not None:
            counts[judged[1]] += 1
            if judged[2] is not None:
                rows.append(judged[2])
    LIST_FIELDS[spec.kind] = current
    if not judge.by_field and patchable:
        SORT_VALUES[spec.kind] = (judge.lq.sort_key, judge.values)
    rows.sort()
    return entries, rows, counts


def _patched(
    source: Callable[[], list[dict]], slot: tuple, judge: _Judge
) -> tuple[dict[int, tuple], list[tuple], Counter] | None:
    """The slot's last pass brought up to date with ``source()``, or None when there is none or
    too much changed. The last pass's lists are shared with other requests: copied, never changed."""
    last = _PASSES.get(slot)
    if last is None:
        return None
    before, old_rows, old_counts = last
    entries: dict[int, tuple] = {}
    added: list[tuple] = []
    get = before.get
    for obj in source():
        key = id(obj)
        judged = get(key)
        if judged is None or judged[0] is not obj:
            # A replaced object has a new identity; the old one stays alive in ``before``, so
            # its id cannot be taken by another object meanwhile.
            judged = judge.of(obj, _fields(obj, judge.spec))
            added.append(judged)
        entries[key] = judged
    if len(entries) - len(added) == len(before):
        removed: list[tuple] = []
    else:
        removed = [j for key, j in before.items() if entries.get(key) is not j]
    if not added and not removed:
        return before, old_rows, old_counts
    if len(added) + len(removed) > PATCH_SHARE * max(len(entries), 1):
        return None
    counts = Counter(old_counts)
    rows = list(old_rows)
    for _obj, phase, row in removed:
        if phase is not None:
            counts[phase] -= 1
            if not counts[phase]:
                del counts[phase]
        if row is not None:
            i = bisect.bisect_left(rows, row)
            if i >= len(rows) or rows[i] is not row:
                return None  # not where a sort puts it: sort afresh
            del rows[i]
    for _obj, phase, row in added:
        if phase is not None:
            counts[phase] += 1
        if row is not None:
            bisect.insort(rows, row)
    return entries, rows, counts
