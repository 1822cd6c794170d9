"""The dashboard's pages: plain function views over one cluster-cache snapshot per request.

Each view (1) takes a snapshot restricted to the namespaces the request may see
(``dashboard.access.visible_namespaces``), (2) computes the version of each refreshable fragment,
(3) answers 204 when an htmx poll already has that version (nothing is rendered), else (4) builds a
``ctx`` dict and renders either the whole page or, for an htmx request, the one ``{% partialdef %}``
fragment asked for (``page.html#name``): the first render and the refresh use the same markup.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import json
import threading
import time
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import yaml
from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.loader import get_template
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import get_text_list
from django.utils.translation import get_language, gettext_noop, ngettext
from django.utils.translation import gettext as _

# Read-only pages take GET and HEAD (require_safe: probes, link checkers, curl -I); set_theme,
# which sets a cookie, stays GET-only.
from django.views.decorators.http import require_GET, require_safe

from dashboard import presenters as p
from dashboard.access import visible_namespaces
from dashboard.hidden import as_text

PAGE_SIZE = 50
FRAGMENT_PARAM = "f"
VERSION_PARAM = "v"
# Relative ages shown in a fragment change with time even when no object does; this bucket (seconds)
# bounds how stale an unchanged-but-skipped fragment's "5m" can get.
AGE_BUCKET = 10


def get_cluster_cache():
    # Imported lazily: the cache starts informers on first use in a serving process, never at import.
    from dashboard.kube import get_cluster_cache as _get

    return _get()


# Memo keys name the cache by a token, not id(): a test's cache is garbage collected and a later
# one may get the same id, and with equal change counters a memo would then answer with the old
# cache's objects. Weak keys: a token never keeps a cache alive.
_CACHE_TOKENS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TOKEN_SEQ = itertools.count(1)


def _cache_token(cache) -> int:
    token = _CACHE_TOKENS.get(cache)
    if token is None:
        token = _CACHE_TOKENS.setdefault(cache, next(_TOKEN_SEQ))
    return token


def _snapshot(request: HttpRequest):
    return get_cluster_cache().snapshot(namespaces=visible_namespaces(request))


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

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._slots.clear()
            self.total = 0

    def __len__(self) -> int:
        return len(self._entries)


# --- fragment plumbing ------------------------------------------------------------------------


def _bucket(now: datetime) -> int:
    return int(now.timestamp() // AGE_BUCKET)


def _unchanged(request: HttpRequest, versions: dict[str, str]) -> HttpResponse | None:
    """204 for an htmx poll whose ``?v=`` equals the fragment's current version; 400 for an htmx
    request naming a fragment this page does not have (answering with the whole page would make
    htmx swap a full document into the fragment's place)."""
    frag = request.GET.get(FRAGMENT_PARAM)
    if request.htmx and frag and frag not in versions:
        resp = HttpResponse(
            _("Unknown fragment “%(f)s”.") % {"f": frag},
            status=400,
            content_type="text/plain; charset=utf-8",
        )
        patch_vary_headers(resp, ["HX-Request"])
        return resp
    if request.htmx and frag in versions and request.GET.get(VERSION_PARAM) == versions[frag]:
        resp = HttpResponse(status=204)
        patch_vary_headers(resp, ["HX-Request"])
        return resp
    return None


def _respond(
    request: HttpRequest, template: str, ctx: dict[str, Any], versions: dict[str, str], status: int = 200
) -> HttpResponse:
    frag = request.GET.get(FRAGMENT_PARAM)
    ctx["versions"] = versions
    if request.htmx and frag in versions:
        # The notices/"data as of" bar is defined once, in the base template.
        source = "dashboard/base.html" if frag == "notices" else template
        resp = render(request, f"{source}#{frag}", ctx, status=status)
    else:
        resp = render(request, template, ctx, status=status)
    patch_vary_headers(resp, ["HX-Request"])
    return resp


def _kind_states(snap, *kinds: str) -> tuple:
    return tuple((k, getattr(getattr(snap, k).state, "name", "")) for k in kinds)


def _versions(snap, now: datetime, kinds: tuple[str, ...], **fragments: str) -> dict[str, str]:
    """Fragment versions of a page plus the shared notices bar (kind states, "data as of")."""
    states = tuple(
        (
            k,
            getattr(getattr(snap, k).state, "name", ""),
            str(getattr(getattr(snap, k).state, "synced_at", "")),
            str(getattr(getattr(snap, k).state, "live_until", "")),
        )
        for k in kinds
    )
    return {**fragments, "notices": p.version_key(states, _bucket(now))}


KIND_LABELS = {
    "jobs": gettext_noop("Volcano Jobs"),
    "podgroups": gettext_noop("PodGroups"),
    "queues": gettext_noop("Queues"),
    "pods": gettext_noop("Pods"),
    "events": gettext_noop("Events"),
}


def _notice_text(name: str, category: str, label: str, has_data: bool = True) -> tuple[str, str]:
    """(text, level) of the notice for kinds in state ``name``; ``label`` names them ("Pods",
    or "Volcano Jobs, PodGroups and Pods" for a merged notice); ``has_data``: some were listed
    before (their last known objects are shown)."""
    if category == "unconfigured":
        return _(
            "The dashboard has no usable connection to a cluster yet, so %(kind)s cannot be loaded. "
            "It connects as soon as its kubeconfig file appears or changes."
        ) % {"kind": label}, "bad"
    if name == "unreachable" and not has_data:
        return _("The cluster is unreachable, so %(kind)s cannot be loaded yet.") % {"kind": label}, "bad"
    if category == "rejected" and name in ("stale", "unreachable", "forbidden"):
        # 401 or a TLS certificate the kubeconfig's CA does not verify: not an outage, and
        # waiting will not help until the credentials/CA in the kubeconfig are fixed.
        return _(
            "Credentials or trust rejected: the API server refused the dashboard's credentials, "
            "or its TLS certificate did not verify against the kubeconfig's certificate "
            "authority. %(kind)s shown are from the last successful sync, if any."
        ) % {"kind": label}, "bad"
    if name == "syncing":
        return _("Loading %(kind)s from the cluster…") % {"kind": label}, "info"
    if name == "stale":
        return _("%(kind)s may be out of date: the watch is reconnecting.") % {"kind": label}, "warn"
    if name == "forbidden":
        # The cache reads the cluster with the dashboard's own identity in every access mode
        # (access mode "none" has no viewer identity at all), so the refusal is the
        # dashboard's, not the viewer's: the error quoted below names that identity.
        return _(
            "The dashboard's own identity is not allowed to list %(kind)s in this cluster; "
            "an administrator must grant it that permission."
        ) % {"kind": label}, "bad"
    if name == "not_installed":
        return _("%(kind)s are not installed in this cluster (the CRD is missing).") % {"kind": label}, "bad"
    if name == "unreachable":
        return _("The cluster is unreachable; %(kind)s shown are from the last successful sync.") % {
            "kind": label
        }, "bad"
    return _("%(kind)s: state %(state)s.") % {"kind": label, "state": name}, "warn"


def _notices(snap, *kinds: str) -> list[dict]:
    """The notices for the kinds whose data is not live: syncing, stale, forbidden, not installed
    or unreachable (KindState of the cache contract). Kinds in the same state with the same error
    share one notice (an API server outage is one notice naming every kind, not five):
    ``kinds`` names them (``kind``: the same, space-separated), ``blocking_kinds`` those with no
    data at all (see _blocked), ``synced_at`` the oldest moment their data was last current."""
    groups: dict[tuple[str, str, str], list[tuple[str, Any]]] = {}
    for kind in kinds:
        state = getattr(snap, kind).state
        name = getattr(state, "name", "synced")
        if name == "synced":
            continue
        key = (name, getattr(state, "error_category", "") or "", getattr(state, "last_error", "") or "")
        groups.setdefault(key, []).append((kind, state))
    out = []
    for (name, category, err), members in groups.items():
        names = tuple(kind for kind, _state in members)
        label = get_text_list([_(KIND_LABELS.get(kind, kind)) for kind in names], _("and"))
        has_data = any(getattr(st, "synced_at", None) for _k, st in members)
        text, level = _notice_text(name, category, label, has_data)
        # "Last synced": when the data was last known current (the watch kept it current until
        # the kind left "synced"), the same moment "Data as of" uses.
        current = [
            t
            for _k, st in members
            if (t := getattr(st, "live_until", None) or getattr(st, "synced_at", None))
        ]
        since = [t for _k, st in members if (t := getattr(st, "since", None))]
        out.append(
            {
                "kind": " ".join(names),
                "kinds": names,
                "state": name,
                "level": level,
                "text": text,
                "error": err,
                "category": category,
                "since": min(since) if since else None,
                "synced_at": min(current) if current else None,
                "blocking_kinds": frozenset(
                    kind
                    for kind, st in members
                    if name in ("forbidden", "not_installed")
                    or (name in ("syncing", "unreachable") and getattr(st, "synced_at", None) is None)
                ),
            }
        )
    return out


_NOTICE_WORDS = {
    "syncing": gettext_noop("loading"),
    "stale": gettext_noop("may be out of date"),
    "forbidden": gettext_noop("forbidden"),
    "not_installed": gettext_noop("not installed"),
    "unreachable": gettext_noop("cluster unreachable"),
}
_LEVELS = ("info", "warn", "bad")


def _one_notice(notices: list[dict]) -> list[dict]:
    """The kiosk's notices as one line ("Volcano Jobs, PodGroups: may be out of date; Events:
    forbidden"): during an outage five separate banners would push the board off a wall display."""
    if len(notices) < 2:
        return notices
    by_state: dict[str, list[str]] = {}
    for n in notices:
        by_state.setdefault(n["state"], []).extend(_(KIND_LABELS.get(k, k)) for k in n["kinds"])
    text = "; ".join(
        f"{', '.join(labels)}: {_(_NOTICE_WORDS.get(state, state))}" for state, labels in by_state.items()
    )
    synced = [n["synced_at"] for n in notices if n.get("synced_at")]
    rank = {lv: i for i, lv in enumerate(_LEVELS)}
    return [
        {
            "kind": "all",
            "state": next(iter(by_state)) if len(by_state) == 1 else "mixed",
            "level": max((n["level"] for n in notices), key=lambda lv: rank.get(lv, 1)),
            "text": text,
            "error": "",
            "since": None,
            "synced_at": min(synced) if synced else None,
            "kinds": tuple(k for n in notices for k in n["kinds"]),
            "blocking_kinds": frozenset().union(*(n["blocking_kinds"] for n in notices)),
        }
    ]


def _blocked(notices: list[dict], kind: str) -> bool:
    return any(kind in n["blocking_kinds"] for n in notices)


# Kinds the cache can never read: they hold no objects (the informer clears them), so they have
# no data to be out of date; their own notice says they cannot be read.
_NO_DATA_STATES = frozenset({"forbidden", "not_installed"})


def _data_as_of(snap, now: datetime, *kinds: str) -> datetime | None:
    """ "Data as of": now while every readable kind is live (the watch keeps the cache current),
    else the oldest moment a kind that is not live was last known current (KindState.current_at:
    when it left "synced", else its last full list). Forbidden / not-installed kinds are skipped."""
    times = []
    for kind in kinds:
        state = getattr(snap, kind).state
        name = getattr(state, "name", "")
        if name == "synced" or name in _NO_DATA_STATES:
            continue
        times.append(getattr(state, "live_until", None) or getattr(state, "synced_at", None))
    if not times:
        return now
    known = [t for t in times if t]
    return min(known) if known else None


_KNOWN_PHASES = frozenset(p.JOB_PHASES) | frozenset(p.PODGROUP_PHASES)


def _phase_requested(phase: str, requested) -> bool:
    """Whether a phase filter (``?phase=``, the chips' values) selects ``phase``: as the cluster
    wrote it, or, for a phase with hidden characters, in the ``U+XXXX`` form the chips carry
    (dashboard/hidden.as_text). Known phases never need the second look."""
    return phase in requested or (phase not in _KNOWN_PHASES and as_text(phase) in requested)


def _base_ctx(request: HttpRequest, snap, now: datetime, kinds: tuple[str, ...], nav: str) -> dict[str, Any]:
    notices = _notices(snap, *kinds)
    return {
        "now": now,
        "nav": nav,
        "notices": notices,
        "data_as_of": _data_as_of(snap, now, *kinds),
        "poll_seconds": settings.VOLCANO_UI_POLL_SECONDS,
    }


def _pod_list(snap, fn_name: str, obj) -> list[dict]:
    fn = getattr(snap, fn_name, None)
    try:
        return list(fn(obj)) if fn else []
    except Exception:  # noqa: BLE001 - a malformed object must not turn a page into a 500
        return []


def _events(snap, *objs) -> list[dict]:
    out: list[dict] = []
    for obj in objs:
        if obj:
            try:
                out.extend(snap.events_for(obj))
            except Exception:  # noqa: BLE001
                continue
    return out


class _PlainDumper(yaml.SafeDumper):
    """A SafeDumper that never writes anchors and aliases (``&id001`` / ``*id001``).

    The cache stores equal sub-trees once and shares them (dashboard/kube/trim.py ``share``), so
    one object may hold the same dict twice (e.g. a container's requests and limits); PyYAML would
    print the second as an alias, which is not how kubectl or the API server shows the object.
    """

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _yaml(obj: dict) -> str:
    """``obj`` (a cached, trimmed object) as YAML text without managedFields or aliases."""
    clean = dict(obj)
    md = dict(p.as_dict(clean.get("metadata")))
    md.pop("managedFields", None)
    clean["metadata"] = md
    return yaml.dump(
        clean, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


# --- overview ---------------------------------------------------------------------------------


# {id(job): (job, when it entered its phase, namespace, name)} for the Pending and Failed Jobs of
# the last pass: parsing thousands of timestamps per overview recompute was its largest cost under
# churn. Objects are replaced on change, so identity means the same values; rebuilt per pass.
_SINCE: dict[int, tuple[dict, datetime | None, str, str]] = {}
_SINCE_NEXT: dict[int, tuple[dict, datetime | None, str, str]] = {}
_SINCE_MAX = 50_000


def _job_since_cached(job: dict) -> tuple[dict, datetime | None, str, str]:
    hit = _SINCE.get(id(job))
    if hit is None or hit[0] is not job:
        hit = (job, p.job_phase_since(job) or p.created_at(job), p.namespace_of(job), p.name_of(job))
    if len(_SINCE_NEXT) < _SINCE_MAX:
        _SINCE_NEXT[id(job)] = hit
    return hit


def _attention(snap, now: datetime, limit: int = 8) -> dict[str, list]:
    """The overview's "needs attention" lists; see ``_attention_uncached``."""
    global _SINCE, _SINCE_NEXT
    with _SINCE_LOCK:  # one pass at a time fills _SINCE_NEXT (the overview memo is single-flight too)
        _SINCE_NEXT = {}
        try:
            return _attention_uncached(snap, now, limit)
        finally:
            _SINCE, _SINCE_NEXT = _SINCE_NEXT, {}


_SINCE_LOCK = threading.Lock()


def _attention_uncached(snap, now: datetime, limit: int = 8) -> dict[str, list]:
    """The overview's "needs attention" lists (REFERENCE.md §1-§3 for the meaning of each phase).

    Reads the cache's indexes (kinds.py "phase", "crashloop", "below_gang"): the Pending and Failed
    Jobs, crash-looping pods and gangs below minMember are buckets, not walks over every object.
    """
    pending = []
    for job in snap.jobs.lookup("phase", "Pending"):
        _job, since, ns, name = _job_since_cached(job)
        # Unclamped: a start in the future (a wrong clock) is negative and shows as "—", not "0s".
        pending.append((-((now - since).total_seconds() if since else 0.0), ns, name, job))
    failed = []
    for job in snap.jobs.lookup("phase", "Failed"):
        _job, since, ns, name = _job_since_cached(job)
        failed.append((since or p._EPOCH, ns, name, job))
    # Longest wait first / newest failure first; (namespace, name) keys are unique, so the
    # comparison never reaches the dicts. Only the first ``limit`` are shown: no full sort.
    pending_total, failed_total = len(pending), len(failed)
    pending = [(-t[0], t[3]) for t in heapq.nsmallest(limit, pending)]
    failed = [(t[0] if t[0] is not p._EPOCH else None, t[3]) for t in heapq.nlargest(limit, failed)]
    pending_rows = []
    for wait, job in pending:
        pg = snap.podgroup_for_job(job)
        qname = p.as_str(p.spec_of(job).get("queue"))
        queue = snap.queues.get(None, qname) if qname else None
        # The same reading as the Job's page (ancestors, Inqueue reservations); the memo key of
        # this section follows the PodGroup and Queue collections, so it stays current.
        findings = p.why_pending(
            job,
            pg,
            queue,
            qname,
            _pod_list(snap, "pods_for_job", job),
            pg_state=snap.podgroups.state,
            queue_state=snap.queues.state,
            queue_lookup=lambda n: snap.queues.get(None, n),
            room=_gang_room(snap, queue, pg),
        )
        pending_rows.append(
            {
                "job": job,
                "wait": wait,
                "finding": findings[0] if findings else None,
                "since": p.job_phase_since(job),
            }
        )
    crash = []
    # The cache indexes crash-looping pods (kinds.py "crashloop"), so this is not a walk over all pods.
    for pod in snap.pods.lookup("crashloop", True):
        crash.append(p.pod_row(pod))
    crash.sort(key=lambda r: (-r.restarts, r.namespace, r.name))
    closed = [q for q in snap.queues.all() if p.as_str(p.status_of(q).get("state")) in ("Closed", "Closing")]
    closed.sort(key=p.name_of)
    below = []
    for pg in snap.podgroups.lookup("below_gang", True):
        gang = p.podgroup_gang(pg)
        if gang.ready < gang.min_available:  # the index's own test, re-checked with the pages' code
            below.append({"pg": pg, "gang": gang, "phase": p.podgroup_phase(pg)})
    below.sort(key=lambda r: (p.namespace_of(r["pg"]), p.name_of(r["pg"])))
    return {
        "pending": pending_rows,
        "pending_total": pending_total,
        "failed": [{"job": j, "at": at} for at, j in failed],
        "failed_total": failed_total,
        "crash": crash[:limit],
        "crash_total": len(crash),
        "closed": [{"queue": q, "state": p.queue_state(q)} for q in closed],
        "closed_total": len(closed),
        "below": below[:limit],
        "below_total": len(below),
    }


def _phase_cards(
    counter: Counter,
    order: list[str],
    phase_fn: Callable[[dict], p.Phase],
    always: frozenset[str] | None = None,
) -> list[dict]:
    """Count cards in phase order, then unknown phases; phases not in ``always`` only when non-zero."""
    cards = []
    for phase in order:
        if always is not None and phase not in always and not counter.get(phase):
            continue
        cards.append(
            {
                "phase": phase_fn({"status": {"phase": phase, "state": {"phase": phase}}}),
                "name": phase,
                "count": counter.get(phase, 0),
            }
        )
    for phase in sorted(k for k in counter if k not in order):
        cards.append(
            {
                "phase": phase_fn({"status": {"phase": phase, "state": {"phase": phase}}}),
                "name": phase,
                "count": counter[phase],
            }
        )
    return cards


# Per queue name: (the Queue object, its derived fields). Queue objects are replaced, never mutated,
# on change, so an identical object means identical bars (parse_quantity over every resource is the
# costly part of a queue row). Bounded by the number of queues; stale names are dropped per pass.
_QUEUE_FIELDS: dict[tuple[str, str], tuple[dict, dict]] = {}
_QUEUE_FIELDS_MAX = 4096


def _queue_fields(q: dict, name: str) -> dict:
    # Keyed by language too: the state label of a Queue without status is translated text.
    key = (name, get_language() or "")
    hit = _QUEUE_FIELDS.get(key)
    if hit is not None and hit[0] is q:
        return hit[1]
    bars = p.queue_resource_bars(q)
    fields = {
        "state": p.queue_state(q),
        "weight": p.to_int(p.spec_of(q).get("weight")) or 1,
        "parent": p.queue_parent(q),
        "bars": bars,
        "compact": p.compact_bars(bars),
        "has_gpu": any(b.name == "nvidia.com/gpu" for b in bars),
    }
    _QUEUE_FIELDS[key] = (q, fields)
    return fields


def _queue_pg_counts(snap) -> dict[str, Counter]:
    """PodGroup counts per queue and phase from the cache's (queue, phase) index (kinds.py
    "queue_phase"), restricted to the visible namespaces: no walk over the PodGroups."""
    out: dict[str, Counter] = {}
    for (queue, phase), n in snap.podgroups.count_by("queue_phase").items():
        out.setdefault(queue, Counter())[phase] += n
    return out


# The last queue tree: (its Queues' (name, spec.parent) pairs, the tree rows). Allocations change
# the Queue objects several times a minute; the tree only when a queue is added, removed or moved.
_TREE: tuple[tuple, list] = ((), [])


def _queue_tree(queues: list[dict]) -> list:
    global _TREE
    shape = tuple((_meta(q).get("name"), p.spec_of(q).get("parent"), id(q)) for q in queues)
    structure = tuple(item[:2] for item in shape)
    last_structure, last_rows = _TREE
    if last_structure == structure and len(last_rows) == len(queues):
        by_name = {item[0]: q for item, q in zip(shape, queues, strict=True)}
        return [dataclasses.replace(r, queue=by_name[_meta(r.queue).get("name")]) for r in last_rows]
    rows = p.queue_tree(queues)
    _TREE = (structure, rows)
    return rows


def _queue_summaries(snap, queues: list[dict]) -> list[dict]:
    """Summary rows of ``queues`` in tree order. The tree (depth, and the hints for a missing
    parent or a parent cycle) is always that of every Queue in ``snap``: a subset (a queue's
    children, the kiosk's focus) must not read as orphans of parents left out of the list."""
    per_queue = _queue_pg_counts(snap)
    everything = snap.queues.all()
    tree = _queue_tree(everything)
    if len(queues) != len(everything):
        wanted = {p.name_of(q) for q in queues}
        tree = [r for r in tree if p.name_of(r.queue) in wanted]
    rows = []
    for row in tree:
        q = row.queue
        name = p.as_str(_meta(q).get("name"))
        counts = per_queue.get(name) or Counter()
        rows.append(
            {
                "queue": q,
                "name": name,
                "depth": row.depth,
                "indent": row.indent,
                "deep": row.deep,
                "tree_parent": row.parent,
                "problem": row.problem,
                "cycle": row.cycle,
                "tree_key": row.problem_key,
                "has_children": row.has_children,
                **_queue_fields(q, name),
                "counts": counts,
                # A list, not the Counter: templates would resolve counts.items as counts["items"] == 0.
                "count_list": sorted(counts.items()),
                "pg_total": sum(counts.values()),
            }
        )
    if len(_QUEUE_FIELDS) > _QUEUE_FIELDS_MAX:  # queues come and go: start over rather than grow
        _QUEUE_FIELDS.clear()
    return rows


# Rendered HTML of one queue table row, per (template, language, queue name): valid while the
# Queue object (identity), its place in the tree and its PodGroup counts are the same. N viewers of
# /queues/ and of the overview then render only the rows that changed since anyone last looked
# (200 rows cost ~60 ms to render; a queue's allocation changes a few times a minute under churn).
# Rows hold no times and no per-user markup; the language is part of the key. LRU-bounded.
_ROW_HTML: OrderedDict[tuple, tuple[dict, tuple, str]] = OrderedDict()
_ROW_HTML_MAX = 2048
_ROW_LOCK = threading.Lock()


def _rows_html(rows: list[dict], template_name: str) -> SafeString:
    """The concatenated rendered rows of a queue table (``template_name`` renders one ``q``)."""
    lang = get_language() or ""
    parts = []
    tmpl = None
    for q in rows:
        key = (template_name, lang, q["name"])
        # tree_key: the row's missing-parent / parent-cycle hint depends on other Queues.
        valid = (q["depth"], q["has_children"], q["tree_key"], tuple(q["count_list"]))
        hit = _ROW_HTML.get(key)
        if hit is not None and hit[0] is q["queue"] and hit[1] == valid:
            parts.append(hit[2])
            continue
        if tmpl is None:
            tmpl = get_template(template_name)
        html = tmpl.render({"q": q, "pg_phases": p.PODGROUP_PHASE_ORDER})
        parts.append(html)
        with _ROW_LOCK:
            _ROW_HTML[key] = (q["queue"], valid, html)
            _ROW_HTML.move_to_end(key)
            while len(_ROW_HTML) > _ROW_HTML_MAX:
                _ROW_HTML.popitem(last=False)
    return mark_safe("".join(parts))  # noqa: S308 - template output, escaped when rendered


# Phases always shown on the overview (the transitional ones appear only while non-zero).
KEY_JOB_PHASES = frozenset({"Pending", "Running", "Completed", "Failed"})


@require_safe
def overview(request: HttpRequest) -> HttpResponse:
    snap = _snapshot(request)
    now = p.reference_now(snap)
    kinds = ("jobs", "podgroups", "queues", "pods", "events")
    states = _kind_states(snap, *kinds)
    b = _bucket(now)
    versions = {
        "counts": p.version_key(snap.jobs.version, snap.podgroups.version, snap.queues.version, states),
        "attention": p.version_key(
            snap.jobs.version, snap.podgroups.version, snap.pods.version, snap.queues.version, states, b
        ),
        "queues": p.version_key(snap.queues.version, snap.podgroups.version, states),
        "events": p.version_key(snap.events.version, states, b),
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, kinds, "overview")
    frag = request.GET.get(FRAGMENT_PARAM) if request.htmx else None
    ctx.update(
        _overview_ctx(snap, request, now, ctx["notices"], frozenset([frag]) if frag in versions else None)
    )
    return _respond(request, "dashboard/overview.html", ctx, versions)


# Bounded: each entry holds a computed section (at 10,000 Jobs the queue rows and attention lists
# are megabytes), and keys differ per namespace set and per change counter.
_MEMO_MAX = 32
_SECTION_MEMO: OrderedDict[tuple, Any] = OrderedDict()
# Per section (key without its change counters): (computed at, monotonic s; compute time, s; value).
_SECTION_LATEST: dict[tuple, tuple[float, float, Any]] = {}
# Per section (stale key): the key of its entry in _SECTION_MEMO.
_SECTION_KEYS: dict[tuple, tuple] = {}
_MEMO_LOCK = threading.Lock()
_clock = time.monotonic  # a name of its own so tests can drive the memo's staleness window
_FLIGHTS: dict[tuple, threading.Lock] = {}
# Per section (stale key): how many computations have finished; a request that sees it move while
# it waited for the section's lock takes the result computed meanwhile.
_SECTION_GEN: dict[tuple, int] = {}
# Stale reuse only pays where a recompute is expensive; cheap sections stay exact (and so do the
# small clusters tests use). A section may be reused for STALE_FACTOR × its compute time, at most
# STALE_MAX_SECONDS.
STALE_MIN_COMPUTE_SECONDS = 0.02
STALE_FACTOR = 5.0
STALE_MAX_SECONDS = 1.5


def _memo(key: tuple, compute: Callable[[], Any], *, stale_key: tuple | None = None) -> Any:
    """Reuse a computed section while the collections it reads are unchanged (``key`` holds their
    change counters): many open tabs and kiosks poll the same overview.

    Single-flight: concurrent requests for the same section wait for one computation (a lock per
    section) instead of each computing it, and with a ``stale_key`` a request that waited takes
    the result computed meanwhile even when the counters moved (it is newer than the request);
    the memo keeps at most ``_MEMO_MAX`` entries (LRU), and of a section with a ``stale_key`` only
    its newest.

    ``stale_key`` (the key without its change counters) opts an aggregate section in to bounded
    staleness: under churn the counters move on nearly every request, so an exact key would almost
    never hit. When the last computation of the section took at least
    ``STALE_MIN_COMPUTE_SECONDS``, its result is reused for ``STALE_FACTOR`` × that time, at most
    ``STALE_MAX_SECONDS``, even though the counters moved. Pages poll every few seconds and show
    "data as of", so a result up to ~1.5 s old is within what they already promise. Detail
    fragments pass no ``stale_key`` and stay exactly keyed.
    """
    with _MEMO_LOCK:
        if key in _SECTION_MEMO:
            _SECTION_MEMO.move_to_end(key)
            return _SECTION_MEMO[key]
        flight_id = stale_key if stale_key is not None else key
        arrived = _SECTION_GEN.get(flight_id, 0)
        flight = _FLIGHTS.setdefault(flight_id, threading.Lock())
    with flight:
        with _MEMO_LOCK:
            if key in _SECTION_MEMO:
                _SECTION_MEMO.move_to_end(key)
                return _SECTION_MEMO[key]
            if stale_key is not None and (latest := _SECTION_LATEST.get(stale_key)) is not None:
                at, took, value = latest
                if _SECTION_GEN.get(flight_id, 0) != arrived:
                    # Computed by a concurrent request while this one waited for it: at most as
                    # old as the wait. Under churn the counters differ between any two requests,
                    # so without this N concurrent viewers would each compute in turn.
                    return value
                if took >= STALE_MIN_COMPUTE_SECONDS and _clock() - at <= min(
                    STALE_MAX_SECONDS, STALE_FACTOR * took
                ):
                    return value
        started = _clock()
        value = compute()
        finished = _clock()
        with _MEMO_LOCK:
            if stale_key is not None:
                # One exact entry per section: an older counter's entry is never asked for again
                # but would keep the objects the cache has since replaced alive.
                previous = _SECTION_KEYS.get(stale_key)
                if previous is not None and previous != key:
                    _SECTION_MEMO.pop(previous, None)
                _SECTION_KEYS[stale_key] = key
                if len(_SECTION_KEYS) > 4 * _MEMO_MAX:
                    _SECTION_KEYS.clear()
            _SECTION_MEMO[key] = value
            _SECTION_MEMO.move_to_end(key)
            while len(_SECTION_MEMO) > _MEMO_MAX:
                _SECTION_MEMO.popitem(last=False)
            if stale_key is not None:
                _SECTION_LATEST[stale_key] = (finished, finished - started, value)
                _SECTION_GEN[stale_key] = _SECTION_GEN.get(stale_key, 0) + 1
                if len(_SECTION_GEN) > 4 * _MEMO_MAX:
                    _SECTION_GEN.clear()
                while len(_SECTION_LATEST) > _MEMO_MAX:
                    _SECTION_LATEST.pop(next(iter(_SECTION_LATEST)))
            # Locks of idle sections are dropped so per-namespace-set keys cannot pile up; a
            # waiter still holding a reference finishes on the old lock and finds the memo filled.
            if len(_FLIGHTS) > 4 * _MEMO_MAX:
                for k in [k for k, lk in _FLIGHTS.items() if not lk.locked()]:
                    del _FLIGHTS[k]
    return value


# Rendered "needs attention" lists per (computed lists, language, time zone, second): concurrent
# viewers share one computed value (see _memo), so they share its rendering too. Relative times
# are shown to the second at most, so keying on the second keeps them exact. Small and bounded.
_ATTENTION_HTML = SizedMemo(512 * 1024)


def _attention_html(attention: dict, now: datetime) -> SafeString:
    key = (id(attention), get_language() or "", timezone.get_current_timezone_name(), int(now.timestamp()))
    hit = _ATTENTION_HTML.get(key)
    if hit is not None and hit[0] is attention:
        return hit[1]
    html = mark_safe(  # noqa: S308 - template output, escaped when rendered
        get_template("dashboard/_attention.html").render({"attention": attention, "now": now})
    )
    _ATTENTION_HTML.put(key, (attention, html), 2 * len(html) + 200)
    return html


def _event_sort_time(ev: dict) -> str:
    # RFC 3339 strings in UTC sort as strings; the newest of lastTimestamp / series / eventTime.
    series = ev.get("series")
    series_last = series.get("lastObservedTime") if isinstance(series, dict) else None
    best = ""
    for value in (ev.get("lastTimestamp"), series_last, ev.get("eventTime"), ev.get("firstTimestamp")):
        if isinstance(value, str) and value[:19] > best[:19]:
            best = value
    return best


_EVENT_OBJECT_KINDS = {"Pod": "pods", "Job": "jobs", "PodGroup": "podgroups", "Queue": "queues"}


def _mark_missing(snap, rows: list) -> list:
    """Event rows whose involvedObject is not in the cache get ``object_missing`` (shown unlinked);
    done at render time because the objects change independently of the events."""
    out = []
    for row in rows:
        kind = _EVENT_OBJECT_KINDS.get(row.object_kind)
        if kind:
            view = getattr(snap, kind)
            obj = (
                view.get(None, row.object_name)
                if kind == "queues"
                else view.get(row.object_namespace, row.object_name)
            )
            row = dataclasses.replace(row, object_missing=p.absent_hint(obj, view.state))
        out.append(row)
    return out


# The overview lists the newest Warning of at most this many objects.
RECENT_WARNING_OBJECTS = 10


def _recent_warnings(snap) -> list:
    # The cache indexes Warning events (kinds.py "warning"); only the newest few hundred are turned
    # into rows (there may be tens of thousands). Ties in time are broken by (namespace, name) as
    # the former sort over all() did: newest first, then ascending names.
    warnings = heapq.nlargest(300, snap.events.lookup("warning", True), key=_warning_order)
    return p.latest_per_object(p.event_rows(warnings), limit=RECENT_WARNING_OBJECTS)


class _Desc(str):
    """A string that sorts in reverse (for a descending tiebreak inside nlargest)."""

    __slots__ = ()

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:
        return str.__lt__(self, other)


def _warning_order(ev: dict) -> tuple:
    meta = ev.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return (
        _event_sort_time(ev),
        _Desc(p.as_str(meta.get("namespace"))),
        _Desc(p.as_str(meta.get("name"))),
    )


def _locale_key() -> tuple[str, str]:
    """(language, time zone) of the request being served: memoised sections hold translated text
    (phase placeholders, why-pending findings, pod blockers), so viewers in different languages
    (or time zones) must never share one computed value."""
    return (get_language() or "", timezone.get_current_timezone_name())


def _overview_ctx(
    snap, request: HttpRequest, now: datetime, notices: list[dict], sections: frozenset[str] | None = None
) -> dict[str, Any]:
    """The overview's sections; ``sections`` limits the work to the fragment being refreshed."""

    def want(name: str) -> bool:
        return sections is None or name in sections

    base = (_cache_token(get_cluster_cache()), visible_namespaces(request), *_locale_key())
    ctx: dict[str, Any] = {
        "jobs_blocked": _blocked(notices, "jobs"),
        "pgs_blocked": _blocked(notices, "podgroups"),
        "queues_blocked": _blocked(notices, "queues"),
        "events_blocked": _blocked(notices, "events"),
    }
    if want("counts"):

        def counts() -> dict[str, Any]:
            # Counts per phase from the cache's phase indexes (kinds.py): O(buckets), no walk.
            job_counts = Counter(snap.jobs.count_by("phase"))
            pg_counts = Counter(snap.podgroups.count_by("phase"))
            return {
                "job_cards": _phase_cards(job_counts, p.JOB_PHASE_ORDER, p.job_phase, KEY_JOB_PHASES),
                "pg_cards": _phase_cards(pg_counts, p.PODGROUP_PHASE_ORDER, p.podgroup_phase),
                "job_total": len(snap.jobs),
                "pg_total": len(snap.podgroups),
                "queue_total": len(snap.queues),
            }

        ctx.update(
            _memo(
                ("counts", *base, snap.jobs.version, snap.podgroups.version, snap.queues.version),
                counts,
                stale_key=("counts", *base),
            )
        )
    if want("queues"):
        ctx["queue_rows"] = _memo(
            ("queues", *base, snap.queues.version, snap.podgroups.version),
            lambda: _queue_summaries(snap, snap.queues.all()),
            stale_key=("queues", *base),
        )
        ctx["queue_rows_html"] = _rows_html(ctx["queue_rows"], "dashboard/_queue_mini_row.html")
    if want("attention"):
        ctx["attention"] = attention = _memo(
            (
                "attention",
                *base,
                snap.jobs.version,
                snap.podgroups.version,
                snap.pods.version,
                snap.queues.version,
                _bucket(now),
            ),
            lambda: _attention(snap, now),
            stale_key=("attention", *base),
        )
        ctx["attention_html"] = _attention_html(attention, now)
    if want("events"):
        ctx["warnings"] = _memo(
            ("events", *base, snap.events.version),
            lambda: _recent_warnings(snap),
            stale_key=("events", *base),
        )
        ctx["warnings"] = _mark_missing(snap, ctx["warnings"])
    return ctx


# --- jobs list --------------------------------------------------------------------------------


def _meta(o: dict) -> dict:
    m = o.get("metadata")
    return m if isinstance(m, dict) else {}


def _status(o: dict) -> dict:
    st = o.get("status")
    return st if isinstance(st, dict) else {}


def _ts(value: Any) -> str:
    # API server timestamps are RFC 3339 in UTC ("2026-11-29T10:00:00Z"), which sort as strings:
    # no parsing for 10,000 sort keys.
    return value if isinstance(value, str) else ""


def _job_since(j: dict) -> str:
    state = _status(j).get("state")
    return _ts(state.get("lastTransitionTime")) if isinstance(state, dict) else ""


# Sort keys of the Jobs list; cheap on purpose (they run over every Job on a cache miss).
JOB_SORTS: dict[str, Callable[[dict], Any]] = {
    "name": lambda j: _meta(j).get("name") or "",
    "namespace": lambda j: _meta(j).get("namespace") or "",
    "phase": p.job_phase_name,
    "queue": lambda j: p.as_str(p.spec_of(j).get("queue")),
    "age": lambda j: _ts(_meta(j).get("creationTimestamp")),
    "inphase": _job_since,
    "pending": lambda j: p.to_int(_status(j).get("pending")),
    "running": lambda j: p.to_int(_status(j).get("running")),
    "failed": lambda j: p.to_int(_status(j).get("failed")),
    "retries": lambda j: p.to_int(_status(j).get("retryCount")),
}
# Sorted by a timestamp, where "ascending age" means the newest first.
INVERTED_SORTS = frozenset({"age", "inphase"})


class ListQuery:
    """Filter, sort and page state of a list page, read from (and written back to) the query string."""

    def __init__(
        self, request: HttpRequest, sorts: dict, default_sort: str = "age", known_phases: Iterable[str] = ()
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
        self.phases = [canonical.get(x.lower(), x) for x in get.getlist("phase") if x]
        self.text = get.get("q", "").strip()
        self.selector_text = get.get("selector", "").strip()
        self.selector_error = ""
        self.selector: list = []
        if self.selector_text:
            try:
                self.selector = p.parse_selector(self.selector_text)
            except p.SelectorError as exc:
                self.selector_error = str(exc)
        sort = get.get("sort", default_sort)
        key = sort.lstrip("-")
        self.sort = sort if key in sorts else default_sort
        self.sort_key = self.sort.lstrip("-")
        self.descending = self.sort.startswith("-")
        try:
            self.page = max(1, int(get.get("page", "1")))
        except ValueError:
            self.page = 1

    @property
    def active(self) -> bool:
        return bool(self.namespace or self.queue or self.phases or self.text or self.selector_text)

    def key(self) -> tuple:
        return (self.namespace, self.queue, tuple(self.phases), self.text, self.selector_text, self.sort)

    def matches(self, obj: dict, queue: str, phase: str, *, ignore_phase: bool = False) -> bool:
        if self.namespace and p.namespace_of(obj) != self.namespace:
            return False
        if self.queue and queue != self.queue and not (self.queue_marked and as_text(queue) == self.queue):
            return False
        if self.phases and not ignore_phase and not _phase_requested(phase, self.phases):
            return False
        if self.text:
            needle = self.text.lower()
            if needle not in p.name_of(obj).lower() and needle not in p.namespace_of(obj).lower():
                return False
        if self.selector_error:
            return False
        return not (self.selector and not p.selector_matches(p.labels_of(obj), self.selector))


# Filtered and sorted objects of a list page, reused while the collection is unchanged: a poll of
# page 1 at 10,000 Jobs must not re-sort everything (benchmark target <= 30 ms p50). An entry is a
# list of references to the cache's own objects (8 bytes each; the objects belong to the cache)
# plus the phase counts; a namespace-set/filter/sort combination per collection version.
# LIST_MEMO_BYTES bounds the whole memo (64 full lists of 10,000 (namespace, name) tuples used
# to take ~45 MB; now 64 full lists are ~5 MB and the budget evicts beyond it).
LIST_MEMO_BYTES = 8 * 1024 * 1024
_LIST_MEMO = SizedMemo(LIST_MEMO_BYTES)


def _list_entry_size(objs: list, counts: Counter) -> int:
    # list: 56 bytes + 8 per slot (sys.getsizeof); Counter: ~100 bytes per phase.
    return 56 + 8 * len(objs) + 100 * len(counts) + 200


# Per list kind: {id(obj): (obj, namespace, name, queue, phase, creationTimestamp)} of the last pass.
# Bounded by the number of objects of the kind (replaced whole on each pass, so deleted objects
# leave with the next pass).
_FIELDS: dict[tuple, dict[int, tuple]] = {}
# Sort keys read straight from those fields (index into the tuple).
_FIELD_SORTS = {"namespace": 1, "name": 2, "queue": 3, "phase": 4, "age": 5}


def _filtered(
    source: Callable[[], list[dict]], slot: tuple, version: Any, lq: ListQuery, queue_fn, phase_fn, sort_fn
):
    """(the matching objects in display order, counts per phase ignoring the phase filter).

    One pass over ``source()`` (already narrowed by the cache's namespace/queue index when a filter
    allows it) and one sort; the result is memoised on the collection's change counter
    (``version``), so the polls of an unchanged list cost only the page's rows. ``slot`` (kind,
    cache, namespaces, query) keeps one entry: the newest computed.
    """
    memo_key = (slot, version)
    hit = _LIST_MEMO.get(memo_key)
    if hit is not None:
        return hit
    counts: Counter = Counter()
    rows: list[tuple] = []
    phases = frozenset(lq.phases)
    # Only the namespace, text and selector filters need lq.matches; most views have none of them.
    check = bool(lq.namespace or lq.text or lq.selector_text)
    want_queue, queue_marked = lq.queue, lq.queue_marked
    append = rows.append
    # Per-object fields survive from the previous pass while the object is the very same dict (the
    # cache publishes unchanged objects by reference), so a change to one Job re-reads one Job.
    fields_key = (slot[0], id(queue_fn), id(phase_fn))
    previous = _FIELDS.get(fields_key, {})
    current: dict[int, tuple] = {}
    by_field = _FIELD_SORTS.get(lq.sort_key)
    for obj in source():
        entry = previous.get(id(obj))
        if entry is None or entry[0] is not obj:
            meta = obj.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            created = meta.get("creationTimestamp")
            entry = (
                obj,
                meta.get("namespace") or "",
                meta.get("name") or "",
                queue_fn(obj),
                phase_fn(obj),
                created if isinstance(created, str) else "",
            )
        current[id(obj)] = entry
        _obj, ns, name, queue, phase, created = entry
        if want_queue and queue != want_queue and not (queue_marked and as_text(queue) == want_queue):
            continue
        if check and not lq.matches(obj, queue, phase, ignore_phase=True):
            continue
        counts[phase] += 1
        if phases and not _phase_requested(phase, phases):
            continue
        # (sort key, namespace, name, object): ties broken by namespace/name, so the order is
        # stable; keys are unique, so the object itself is never compared.
        append((entry[by_field] if by_field else sort_fn(obj), ns, name, obj))
    _FIELDS[fields_key] = current
    rows.sort(reverse=lq.descending != (lq.sort_key in INVERTED_SORTS))
    objs = [row[3] for row in rows]
    result = (objs, counts)
    _LIST_MEMO.put(memo_key, result, _list_entry_size(objs, counts), slot=slot)
    return result


def _narrowed(snap, view, lq: ListQuery, in_queue: str) -> Callable[[], list[dict]]:
    """The objects a list must scan (called only on a memo miss): the namespace or queue index when
    filtered by one."""
    if lq.namespace:
        return lambda: view.in_namespace(lq.namespace)
    if lq.queue and not lq.queue_marked:  # the index knows spec.queue as written only
        return lambda: getattr(snap, in_queue)(lq.queue)
    return view.all


def _queue_missing(snap, name: str) -> str:
    """The hint shown beside a list row's queue name when that Queue is not in the cache ("" when
    it is, or when Queues cannot be read at all: then one notice says so, not every row)."""
    if not name or not snap.queues.state.is_usable:
        return ""
    return p.absent_hint(snap.queues.get(None, name), snap.queues.state)


def _job_row(snap, job: dict, now: datetime) -> dict:
    pg = snap.podgroup_for_job(job)
    pods = _pod_list(snap, "pods_for_job", job)
    status = p.status_of(job)
    return {
        "job": job,
        "name": p.name_of(job),
        "namespace": p.namespace_of(job),
        "phase": p.job_phase(job),
        "hints": p.job_health_hint(job, pods, pg),
        "queue": (queue := p.as_str(p.spec_of(job).get("queue"))),
        "queue_missing": _queue_missing(snap, queue),
        "gang": p.job_gang(job),
        "pending": p.to_int(status.get("pending")),
        "running": p.to_int(status.get("running")),
        "succeeded": p.to_int(status.get("succeeded")),
        "failed": p.to_int(status.get("failed")),
        "retries": p.to_int(status.get("retryCount")),
        "tasks": len(p.job_tasks(job)),
        "replicas": p.job_replicas(job),
        "created": p.created_at(job),
        "since": p.job_phase_since(job),
        "podgroup": pg,
    }


def _spec_queue(obj: dict) -> str:
    spec = obj.get("spec")
    queue = spec.get("queue") if isinstance(spec, dict) else ""
    return queue if isinstance(queue, str) else p.as_str(queue)


_job_queue = _spec_queue


@require_safe
def jobs(request: HttpRequest) -> HttpResponse:
    snap = _snapshot(request)
    now = p.reference_now(snap)
    lq = ListQuery(request, JOB_SORTS, known_phases=p.JOB_PHASES)
    kinds = ("jobs", "podgroups", "pods")
    states = _kind_states(snap, *kinds)
    versions = {
        "results": p.version_key(
            snap.jobs.version,
            snap.podgroups.version,
            snap.pods.version,
            snap.queues.version,  # a row's queue link depends on the Queue existing
            states,
            lq.key(),
            lq.page,
            _bucket(now),
        )
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, kinds, "jobs")
    slot = ("jobs", _cache_token(get_cluster_cache()), visible_namespaces(request), lq.key())
    keys, counts = _filtered(
        _narrowed(snap, snap.jobs, lq, "jobs_in_queue"),
        slot,
        snap.jobs.version,
        lq,
        _job_queue,
        p.job_phase_name,
        JOB_SORTS[lq.sort_key],
    )
    page = Paginator(keys, PAGE_SIZE).get_page(lq.page)
    # The memo's objects are this snapshot's (its key holds the collection's change counter).
    rows = [_job_row(snap, job, now) for job in page.object_list]
    ctx.update(
        {
            "lq": lq,
            "page": page,
            "rows": rows,
            "total": len(keys),
            "phase_counts": _phase_cards(counts, p.JOB_PHASE_ORDER, p.job_phase),
            # Still filtered literally (a newer Volcano may have phases this UI does not know).
            "unknown_phases": [x for x in lq.phases if x not in p.JOB_PHASES],
            "known_phases": p.JOB_PHASE_ORDER,
            "namespaces": snap.namespaces(),
            "queue_names": sorted(p.name_of(q) for q in snap.queues.all()),
            "blocked": _blocked(ctx["notices"], "jobs"),
            "sort_columns": JOB_SORTS.keys(),
        }
    )
    return _respond(request, "dashboard/jobs.html", ctx, versions)


# --- job detail ---------------------------------------------------------------------------------


def _unreadable(request: HttpRequest, snap, kind: str, *names: str) -> HttpResponse | None:
    """For a detail page whose object is not in the cache: when its kind cannot be read
    (``presenters.unreadable_reason``), the page with that kind's notice instead of a 404 that
    would claim the object is absent; 403 when forbidden, else 503. None when the kind is readable."""
    why = p.unreadable_reason(getattr(snap, kind).state)
    if not why:
        return None
    now = p.reference_now(snap)
    ctx = _base_ctx(request, snap, now, (kind,), kind)
    state_name = getattr(snap, kind).state.name
    # The page has no live fragment to poll: it reloads itself, soon while the first list is on its
    # way (a page opened right after start-up), slowly while the kind stays unreadable (RBAC or a
    # CRD may be fixed meanwhile). A plain <meta> refresh: no script, allowed by the CSP.
    retry = UNREADABLE_RETRY_SECONDS[0] if state_name == "syncing" else UNREADABLE_RETRY_SECONDS[1]
    ctx.update(
        {
            "kind_label": _(KIND_LABELS.get(kind, kind)),
            "why": why,
            "name": "/".join(names),
            "retry_seconds": retry,
        }
    )
    status = 403 if state_name == "forbidden" else 503
    resp = render(request, "dashboard/unreadable.html", ctx, status=status)
    if status == 503:
        resp["Retry-After"] = str(retry)
    patch_vary_headers(resp, ["HX-Request"])
    return resp


# Seconds before an "cannot be read" detail page reloads itself: (still loading, other reasons).
UNREADABLE_RETRY_SECONDS = (2, 15)


ALL_KINDS = ("jobs", "podgroups", "queues", "pods", "events")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: templates/404.html with the status bar of every page (the real "data as of" and
    the notices of kinds that are not live), so a 404 never says "No data yet" while the cache is
    synced. The message is the Http404's own (as Django's default handler shows it)."""
    message = exception.args[0] if exception.args and isinstance(exception.args[0], str) else ""
    polled = getattr(request, "htmx", False) and request.GET.get(FRAGMENT_PARAM)
    if isinstance(exception, ObjectNotFound) and polled:
        # A poll of an open detail page whose object was deleted (or renamed): the page keeps its
        # last known state, so it must say so; htmx does not swap a 404, app.js shows this body.
        resp = render(
            request,
            "dashboard/_gone.html",
            {
                "gone_text": _(
                    "This %(kind)s no longer exists (deleted or renamed); "
                    "the page shows its last known state."
                )
                % {"kind": exception.kind_label},
                "message": message,
            },
            status=404,
        )
        resp[GONE_HEADER] = "1"
        patch_vary_headers(resp, ["HX-Request"])
        return resp
    ctx: dict[str, Any] = {"exception": message or exception.__class__.__name__, "request_path": request.path}
    try:
        snap = _snapshot(request)
        ctx.update(_base_ctx(request, snap, p.reference_now(snap), ALL_KINDS, ""))
    except Exception:  # noqa: BLE001 - the 404 page must render even when the cache cannot be read
        ctx["hide_asof"] = True
    return render(request, "404.html", ctx, status=404)


class ObjectNotFound(Http404):
    """A detail page's object is not in the cache (its kind is readable): ``kind_label`` is the
    translated kind ("Job"), for the notice a live page shows when its object goes away."""

    def __init__(self, message: str, kind_label: str) -> None:
        super().__init__(message)
        self.kind_label = kind_label


def _or_404(obj, kind: str, snap, *names: str):
    if obj is None:
        message = _("%(kind)s %(name)s not found.") % {"kind": kind, "name": "/".join(names)}
        raise ObjectNotFound(message, kind)
    return obj


# Header of a fragment poll's 404 whose page object no longer exists; static/dashboard/app.js
# shows the response body (a notice) and stops polling that page.
GONE_HEADER = "X-Volcano-Gone"


def _gang_room(snap, queue, pg) -> p.GangRoom:
    """The gang's room in its queue and the queue's ancestors (p.gang_room), read from the
    snapshot's indexes: child queues by parent, Inqueue PodGroups by (queue, phase). A user limited
    to some namespaces sees only their PodGroups' reservations."""
    return p.gang_room(
        queue,
        pg,
        queue_lookup=lambda n: snap.queues.get(None, n),
        queue_children=snap.child_queues,
        inqueue_podgroups=lambda n: snap.podgroups.lookup("queue_phase", (n, "Inqueue")),
    )


@require_safe
def job_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    snap = _snapshot(request)
    job = snap.jobs.get(namespace, name)
    if job is None and (resp := _unreadable(request, snap, "jobs", namespace, name)):
        return resp
    job = _or_404(job, _("Job"), snap, namespace, name)
    now = p.reference_now(snap)
    pg = snap.podgroup_for_job(job)
    pods = _pod_list(snap, "pods_for_job", job)
    qname = p.as_str(p.spec_of(job).get("queue"))
    queue = snap.queues.get(None, qname) if qname else None
    # The queue's ancestors: their capability can make the gang impossible (p.never_start).
    ancestors = p.queue_ancestors(queue, lambda n: snap.queues.get(None, n))
    phase = p.job_phase(job)
    pending_like = p.job_phase_name(job) in ("Pending", "") or (
        pg is not None and p.podgroup_phase_name(pg) in ("Pending", "Inqueue", "Unknown") and not phase.final
    )
    room = _gang_room(snap, queue, pg) if pending_like else p.GangRoom()
    events = _events(snap, job, pg, *pods)
    kinds = ("jobs", "podgroups", "pods", "queues", "events")
    states = _kind_states(snap, *kinds)
    b = _bucket(now)
    pods_v = p.resource_versions(pods)
    versions = {
        "status": p.version_key(
            p.resource_versions([job, pg, queue, *ancestors]),
            p.resource_versions(room.read),
            pods_v,
            states,
            b,
        ),
        "pods": p.version_key(pods_v, states, b),
        "events": p.version_key(p.resource_versions(events), states, b),
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, ("jobs", "podgroups", "pods", "queues", "events"), "jobs")
    state = p.as_dict(p.status_of(job).get("state"))
    event_rows = p.event_rows(events)
    ctx.update(
        {
            "job": job,
            "name": name,
            "namespace": namespace,
            "phase": phase,
            "reason": p.as_str(state.get("reason")),
            "message": p.as_str(state.get("message")),
            "since": p.job_phase_since(job),
            "created": p.created_at(job),
            "gang": p.job_gang(job),
            "tasks": p.task_rows(job),
            "pg": pg,
            "pg_phase": p.podgroup_phase(pg) if pg else None,
            "pg_gang": p.podgroup_gang(pg) if pg else None,
            "pg_condition": p.unschedulable_condition(pg) if pg else None,
            "queue_name": qname,
            "queue": queue,
            "queue_missing": p.absent_hint(queue, snap.queues.state),
            "pg_missing": p.absent_hint(pg, snap.podgroups.state),
            "pg_unreadable": p.unreadable_reason(snap.podgroups.state),
            # The same hints as the Job's row in the lists (crash-looping pods, image pulls, ...).
            "hints": p.job_health_hint(job, pods, pg),
            "queue_state": p.queue_state(queue) if queue else None,
            "headroom": room.rows,
            "pending_like": pending_like,
            "findings": p.why_pending(
                job,
                pg,
                queue,
                qname,
                pods,
                pg_state=snap.podgroups.state,
                queue_state=snap.queues.state,
                queue_lookup=lambda n: snap.queues.get(None, n),
                room=room,
            )
            if pending_like
            else [],
            "warning_events": p.latest_per_object(
                (r for r in event_rows if r.warning), limit=8, by_message=True
            ),
            "pods": p.pod_rows(pods),
            "events": event_rows[:100],
            "events_total": len(event_rows),
            "timeline": p.job_timeline(job, now),
            "policies": [p.policy_text(x) for x in p.as_list(p.spec_of(job).get("policies"))],
            "plugins": p.job_plugins(job),
            "spec": p.spec_of(job),
            "status": p.status_of(job),
            "labels": sorted(p.labels_of(job).items()),
            "annotations": sorted(p.annotations_of(job).items()),
            "yaml": _yaml(job),
            "live": not phase.final,
            "min_resources": p.min_resources(pg) if pg else [],
        }
    )
    return _respond(request, "dashboard/job_detail.html", ctx, versions)


# --- queues -------------------------------------------------------------------------------------


@require_safe
def queues(request: HttpRequest) -> HttpResponse:
    snap = _snapshot(request)
    now = p.reference_now(snap)
    kinds = ("queues", "podgroups")
    states = _kind_states(snap, *kinds)
    versions = {"results": p.version_key(snap.queues.version, snap.podgroups.version, states)}
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, kinds, "queues")
    base = (_cache_token(get_cluster_cache()), visible_namespaces(request), *_locale_key())
    rows = _memo(
        ("queues", *base, snap.queues.version, snap.podgroups.version),
        lambda: _queue_summaries(snap, snap.queues.all()),
        stale_key=("queues", *base),
    )
    ctx.update(
        {
            "rows": rows,
            "rows_html": _rows_html(rows, "dashboard/_queue_row.html"),
            "blocked": _blocked(ctx["notices"], "queues"),
        }
    )
    return _respond(request, "dashboard/queues.html", ctx, versions)


@require_safe
def queue_detail(request: HttpRequest, name: str) -> HttpResponse:
    snap = _snapshot(request)
    queue = snap.queues.get(None, name)
    if queue is None and (resp := _unreadable(request, snap, "queues", name)):
        return resp
    queue = _or_404(queue, _("Queue"), snap, name)
    now = p.reference_now(snap)
    q_jobs = list(snap.jobs_in_queue(name))
    q_pgs = list(snap.podgroups_in_queue(name))
    # A queue that is its own parent is not its own child (presenters.queue_tree).
    children = [c for c in snap.child_queues(name) if p.name_of(c) != name]
    # Its place in the tree: the missing-parent / parent-cycle hint depends on other Queues.
    tree = _queue_summaries(snap, [queue])[0]
    events = _events(snap, queue)
    kinds = ("queues", "jobs", "podgroups", "events")
    states = _kind_states(snap, *kinds)
    b = _bucket(now)
    versions = {
        "status": p.version_key(
            p.resource_versions([queue, *children]), p.resource_versions(q_pgs), tree["tree_key"], states
        ),
        "jobs": p.version_key(p.resource_versions(q_jobs), p.resource_versions(q_pgs), states, b),
        "events": p.version_key(p.resource_versions(events), states, b),
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, kinds, "queues")
    job_rows = [_job_row(snap, j, now) for j in q_jobs]
    job_rows.sort(
        key=lambda r: (
            r["phase"].final,
            -(p.seconds_between(r["since"], now) or 0),
            r["namespace"],
            r["name"],
        )
    )
    pg_rows = [_pg_row(snap, g, now) for g in q_pgs]
    pg_rows.sort(key=lambda r: (r["phase"].final, -(r["wait"] or 0), r["namespace"], r["name"]))
    spec = p.spec_of(queue)
    ctx.update(
        {
            "queue": queue,
            "name": name,
            "state": p.queue_state(queue),
            "bars": p.queue_resource_bars(queue),
            "weight": p.to_int(spec.get("weight")) or 1,
            "parent": p.queue_parent(queue),
            "tree": tree,
            "parent_missing": tree["problem"] == "missing_parent",
            "reclaimable": spec.get("reclaimable"),
            "priority": spec.get("priority"),
            "dequeue": p.as_str(spec.get("dequeueStrategy")),
            "children": _queue_summaries(snap, children) if children else [],
            "counts": _phase_cards(
                Counter(p.podgroup_phase_name(g) for g in q_pgs), p.PODGROUP_PHASE_ORDER, p.podgroup_phase
            ),
            "job_rows": job_rows[:200],
            "job_total": len(job_rows),
            "pg_rows": pg_rows[:200],
            "pg_total": len(pg_rows),
            "events": p.event_rows(events, 100),
            "yaml": _yaml(queue),
            "labels": sorted(p.labels_of(queue).items()),
            "annotations": sorted(p.annotations_of(queue).items()),
        }
    )
    return _respond(request, "dashboard/queue_detail.html", ctx, versions)


# --- podgroups ----------------------------------------------------------------------------------


def _pg_row(snap, pg: dict, now: datetime) -> dict:
    job = snap.job_for_podgroup(pg)
    phase = p.podgroup_phase(pg)
    created = p.created_at(pg)
    status = p.status_of(pg)
    return {
        "pg": pg,
        "name": p.name_of(pg),
        "namespace": p.namespace_of(pg),
        "phase": phase,
        "queue": (queue := p.as_str(p.spec_of(pg).get("queue"))),
        "queue_missing": _queue_missing(snap, queue),
        "min_member": p.to_int(p.spec_of(pg).get("minMember")),
        "running": p.to_int(status.get("running")),
        "succeeded": p.to_int(status.get("succeeded")),
        "failed": p.to_int(status.get("failed")),
        "gang": p.podgroup_gang(pg),
        "job": job,
        "owner": p.owner_of(pg),
        "created": created,
        "wait": p.seconds_between(created, now) if phase.label in ("Pending", "Inqueue") else None,
        "unschedulable": p.unschedulable_condition(pg),
    }


PG_SORTS: dict[str, Callable[[dict], Any]] = {
    "name": lambda g: _meta(g).get("name") or "",
    "namespace": lambda g: _meta(g).get("namespace") or "",
    "phase": p.podgroup_phase_name,
    "queue": lambda g: p.as_str(p.spec_of(g).get("queue")),
    "age": lambda g: _ts(_meta(g).get("creationTimestamp")),
    "minmember": lambda g: p.to_int(p.spec_of(g).get("minMember")),
    "running": lambda g: p.to_int(_status(g).get("running")),
}


_pg_queue = _spec_queue


@require_safe
def podgroups(request: HttpRequest) -> HttpResponse:
    snap = _snapshot(request)
    now = p.reference_now(snap)
    lq = ListQuery(request, PG_SORTS, known_phases=p.PODGROUP_PHASES)
    kinds = ("podgroups", "jobs")
    states = _kind_states(snap, *kinds)
    versions = {
        "results": p.version_key(
            snap.podgroups.version,
            snap.jobs.version,
            snap.queues.version,
            states,
            lq.key(),
            lq.page,
            _bucket(now),
        )
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, kinds, "podgroups")
    slot = ("pgs", _cache_token(get_cluster_cache()), visible_namespaces(request), lq.key())
    keys, counts = _filtered(
        _narrowed(snap, snap.podgroups, lq, "podgroups_in_queue"),
        slot,
        snap.podgroups.version,
        lq,
        _pg_queue,
        p.podgroup_phase_name,
        PG_SORTS[lq.sort_key],
    )
    page = Paginator(keys, PAGE_SIZE).get_page(lq.page)
    rows = [_pg_row(snap, pg, now) for pg in page.object_list]
    ctx.update(
        {
            "lq": lq,
            "page": page,
            "rows": rows,
            "total": len(keys),
            "phase_counts": _phase_cards(counts, p.PODGROUP_PHASE_ORDER, p.podgroup_phase),
            "unknown_phases": [x for x in lq.phases if x not in p.PODGROUP_PHASES],
            "known_phases": p.PODGROUP_PHASE_ORDER,
            "namespaces": snap.namespaces(),
            "queue_names": sorted(p.name_of(q) for q in snap.queues.all()),
            "blocked": _blocked(ctx["notices"], "podgroups"),
        }
    )
    return _respond(request, "dashboard/podgroups.html", ctx, versions)


@require_safe
def podgroup_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    snap = _snapshot(request)
    pg = snap.podgroups.get(namespace, name)
    if pg is None and (resp := _unreadable(request, snap, "podgroups", namespace, name)):
        return resp
    pg = _or_404(pg, _("PodGroup"), snap, namespace, name)
    now = p.reference_now(snap)
    job = snap.job_for_podgroup(pg)
    pods = _pod_list(snap, "pods_for_podgroup", pg)
    qname = p.as_str(p.spec_of(pg).get("queue"))
    queue = snap.queues.get(None, qname) if qname else None
    ancestors = p.queue_ancestors(queue, lambda n: snap.queues.get(None, n))
    phase = p.podgroup_phase(pg)
    pending_like = phase.label in ("Pending", "Inqueue", "Unknown") or not phase.known
    room = _gang_room(snap, queue, pg) if pending_like else p.GangRoom()
    events = _events(snap, pg, *pods)
    kinds = ("podgroups", "jobs", "pods", "queues", "events")
    states = _kind_states(snap, *kinds)
    b = _bucket(now)
    pods_v = p.resource_versions(pods)
    versions = {
        "status": p.version_key(
            p.resource_versions([pg, job, queue, *ancestors]),
            p.resource_versions(room.read),
            pods_v,
            states,
            b,
        ),
        "pods": p.version_key(pods_v, states, b),
        "events": p.version_key(p.resource_versions(events), states, b),
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, ("podgroups", "jobs", "pods", "queues", "events"), "podgroups")
    event_rows = p.event_rows(events)
    ctx.update(
        {
            "pg": pg,
            "name": name,
            "namespace": namespace,
            "phase": phase,
            "gang": p.podgroup_gang(pg),
            "row": _pg_row(snap, pg, now),
            "job": job,
            "owner": p.owner_of(pg),
            "conditions": p.podgroup_conditions(pg),
            "min_task_member": sorted(
                (p.as_str(k), p.to_int(v)) for k, v in p.as_dict(p.spec_of(pg).get("minTaskMember")).items()
            ),
            "min_resources": p.min_resources(pg),
            "queue_name": qname,
            "queue": queue,
            "queue_missing": p.absent_hint(queue, snap.queues.state),
            "queue_state": p.queue_state(queue) if queue else None,
            "headroom": room.rows,
            "findings": p.why_pending(
                None,
                pg,
                queue,
                qname,
                pods,
                pg_state=snap.podgroups.state,
                queue_state=snap.queues.state,
                owner_job=job,
                queue_lookup=lambda n: snap.queues.get(None, n),
                room=room,
            )
            if pending_like
            else [],
            "pending_like": pending_like,
            "warning_events": p.latest_per_object(
                (r for r in event_rows if r.warning), limit=8, by_message=True
            ),
            "pods": p.pod_rows(pods),
            "events": event_rows[:100],
            "events_total": len(event_rows),
            "yaml": _yaml(pg),
            "live": not phase.final,
            "created": p.created_at(pg),
            "labels": sorted(p.labels_of(pg).items()),
            "annotations": sorted(p.annotations_of(pg).items()),
            "priority_class": p.as_str(p.spec_of(pg).get("priorityClassName")),
        }
    )
    return _respond(request, "dashboard/podgroup_detail.html", ctx, versions)


# --- pods ---------------------------------------------------------------------------------------


@require_safe
def pod_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    snap = _snapshot(request)
    pod = snap.pods.get(namespace, name)
    if pod is None and (resp := _unreadable(request, snap, "pods", namespace, name)):
        return resp
    pod = _or_404(pod, _("Pod"), snap, namespace, name)
    now = p.reference_now(snap)
    ann = p.annotations_of(pod)
    labels = p.labels_of(pod)
    group = ann.get("scheduling.k8s.io/group-name", "")
    pg = snap.podgroups.get(namespace, group) if group else None
    job_name = labels.get("volcano.sh/job-name") or ann.get("volcano.sh/job-name", "")
    job = snap.jobs.get(namespace, job_name) if job_name else None
    # A Volcano Job's pod names its queue in volcano.sh/queue-name; other workloads' pods in
    # scheduling.volcano.sh/queue-name, and their PodGroup has it too (REFERENCE.md §4).
    queue_name = (
        labels.get("volcano.sh/queue-name")
        or ann.get("volcano.sh/queue-name")
        or ann.get("scheduling.volcano.sh/queue-name")
        or (p.as_str(p.spec_of(pg).get("queue")) if pg else "")
    )
    events = _events(snap, pod)
    kinds = ("pods", "events")
    states = _kind_states(snap, *kinds)
    versions = {
        "status": p.version_key(p.resource_versions([pod, pg, job]), states, _bucket(now)),
        "events": p.version_key(p.resource_versions(events), states, _bucket(now)),
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, ("pods", "events"), "jobs")
    status = p.status_of(pod)
    containers = []
    statuses = {
        p.as_str(p.as_dict(c).get("name")): p.as_dict(c) for c in p.as_list(status.get("containerStatuses"))
    }
    for c in p.as_list(p.spec_of(pod).get("containers")):
        c = p.as_dict(c)
        cs = statuses.get(p.as_str(c.get("name")), {})
        state = p.as_dict(cs.get("state"))
        state_name = next(iter(state), "")
        detail = p.as_dict(state.get(state_name)) if state_name else {}
        last = p.as_dict(cs.get("lastState"))
        last_name = next(iter(last), "")
        containers.append(
            {
                "name": p.as_str(c.get("name")),
                "image": p.as_str(c.get("image")),
                "state": state_name,
                "reason": p.as_str(detail.get("reason")),
                "message": p.as_str(detail.get("message")),
                "ready": cs.get("ready") is True,
                "restarts": p.to_int(cs.get("restartCount")),
                "last": last_name,
                "last_reason": p.as_str(p.as_dict(last.get(last_name)).get("reason")) if last_name else "",
                "exit": p.exit_text(detail) if state_name == "terminated" else "",
                "last_exit": p.exit_text(p.as_dict(last.get(last_name))) if last_name == "terminated" else "",
                "requests": sorted(
                    (p.as_str(k), p.as_str(v))
                    for k, v in p.as_dict(p.as_dict(c.get("resources")).get("requests")).items()
                ),
            }
        )
    row = p.pod_row(pod)
    ctx.update(
        {
            "pod": pod,
            "name": name,
            "namespace": namespace,
            "row": row,
            "pg": pg,
            "job": job,
            "owner": p.owner_of(pod),
            "group_name": group,
            "job_name": job_name,
            "pg_missing": p.absent_hint(pg, snap.podgroups.state),
            "job_missing": p.absent_hint(job, snap.jobs.state),
            "queue_missing": p.absent_hint(
                snap.queues.get(None, queue_name) if queue_name else None, snap.queues.state
            ),
            "containers": containers,
            "conditions": [p.as_dict(c) for c in p.as_list(status.get("conditions"))],
            "events": p.event_rows(events, 100),
            "yaml": _yaml(pod),
            "live": row.status.label not in ("Succeeded", "Completed", "Failed"),
            "labels": sorted(labels.items()),
            "annotations": sorted(ann.items()),
            "phase_text": p.as_str(status.get("phase")),
            "pod_ip": p.as_str(status.get("podIP")),
            "created": p.created_at(pod),
            "queue_name": queue_name,
        }
    )
    return _respond(request, "dashboard/pod_detail.html", ctx, versions)


# --- kiosk --------------------------------------------------------------------------------------


# ?rotate=N: whole seconds per queue. The kiosk polls at most every N seconds, so the floor keeps a
# wall display from polling faster than once a second; an hour is the longest useful rotation.
KIOSK_ROTATE_MIN = 1
KIOSK_ROTATE_MAX = 3600


def _kiosk_rotate(raw: str | None) -> tuple[int, str]:
    """``?rotate=`` as (seconds, note): 0 = rotation off. The note (shown on the kiosk; "" when the
    value was used as given) says when the value was ignored (not a whole number, negative) or
    clamped to KIOSK_ROTATE_MIN..KIOSK_ROTATE_MAX, or that 0 turned rotation off."""
    if raw is None or raw.strip() == "":
        return 0, ""
    limits = {"min": KIOSK_ROTATE_MIN, "max": KIOSK_ROTATE_MAX}
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    shown = raw if len(raw) <= 40 else raw[:40] + "…"
    if value < 0:
        return 0, _(
            "?rotate=%(value)s ignored (give whole seconds from %(min)d to %(max)d, or 0): rotation off."
        ) % {"value": shown, **limits}
    if value == 0:
        return 0, _("?rotate=0: rotation off.")
    if value > KIOSK_ROTATE_MAX:
        return KIOSK_ROTATE_MAX, _(
            "?rotate=%(value)s is more than %(max)d: one queue every %(max)d seconds."
        ) % {"value": shown, **limits}
    return max(value, KIOSK_ROTATE_MIN), ""


# What the kiosk shows per list without script. The kiosk's type scales with the screen (app.css:
# the root font size follows the viewport height, capped by its width), so its layout measures the
# same in rem on every 16:9 screen; these caps are what fits the smallest supported one (1280×720),
# with room left for the one-line notice above the board ("may be out of date") and every pending
# Job's reason counted at its two-line maximum. A list longer than its cap shows its most important
# rows and says how many more there are: a wall display cannot scroll, and a silently cut list
# reads as complete.
KIOSK_QUEUE_ROWS = 11
KIOSK_WARNING_ROWS = 3
# "Needs attention" in lines: a group heading (which carries its "+ N more") and an item are one
# line each, a pending Job three (its name, then the first reason, at most two lines). Every
# group's heading and first item take at most 12 lines (all five groups), so every group shows.
KIOSK_ATTENTION_LINES = 17
KIOSK_ATTENTION_GROUPS = ("pending", "below", "crash", "failed", "closed")
# What the kiosk sends: more rows than the caps above (queues up to KIOSK_QUEUE_RENDER, attention
# everything in the overview's lists, at most _attention's limit per group), those beyond the caps
# with the ``hidden`` attribute. static/dashboard/kiosk.js then shows, in the same order of
# importance, as many as fit each panel on the screen at hand and sets the "+ N more" line from the
# texts the server wrote for every possible cut (``data-cuts``). 40 queue rows fill a panel on a
# 16:10 or 4:3 screen, which are taller in rem than 16:9.
KIOSK_QUEUE_RENDER = 40


def kiosk_queue_problem(row: dict) -> bool:
    """A queue the kiosk must never cut: Closed or Closing (REFERENCE.md §3 Queue states), any
    resource allocated above deserved or capability, or outside the real tree (missing parent,
    parent cycle). ``row``: a ``_queue_summaries`` row."""
    state = row["state"]
    if state.label in ("Closed", "Closing"):
        return True
    return bool(row["problem"]) or any(b.over for b in row["bars"])


def kiosk_queues(
    rows: list[dict], limit: int = KIOSK_QUEUE_ROWS, render: int = KIOSK_QUEUE_RENDER
) -> tuple[list[dict], int, int]:
    """The queue rows the kiosk sends, in tree order, as (rows, hidden, hidden problems) where the
    counts are those of the cut to ``limit`` (what shows without script).

    Importance (``kiosk_rank``, 0 first): every problem queue (kiosk_queue_problem) in tree order,
    then the top of the tree (the shallowest queues first, then tree order). A cut to N rows shows
    ranks 0..N-1: all rows when they fit in N, else N - 1 (the "+ N more" line takes a row's place).
    The rows sent are the cut to ``render``; those outside the cut to ``limit`` have
    ``kiosk_hidden``. A row whose parent may be left out while it shows (the parent ranks after it,
    or is not sent) gets ``kiosk_path`` (its ancestors, root first), so it still reads in place;
    ``kiosk_path_hidden`` says its parent shows in the cut to ``limit`` (kiosk.js decides per cut
    after that). ``hidden problems`` counts the problem queues left out (only when there are more
    of them than rows). Rows are copies; ``rows`` (shared with the overview's memo) is not changed."""
    total = len(rows)
    order = range(total)
    problems = [i for i in order if kiosk_queue_problem(rows[i])]
    problem_set = set(problems)
    ranked = problems + sorted(
        (i for i in order if i not in problem_set), key=lambda i: (rows[i]["depth"], i)
    )
    rank = {i: r for r, i in enumerate(ranked)}

    def cut(n: int) -> int:
        return total if total <= n else max(1, n - 1)

    base, sent = cut(limit), cut(max(render, limit))
    rank_by_name = {rows[i]["name"]: rank[i] for i in order}
    parent_of = {r["name"]: r["tree_parent"] for r in rows}
    out = []
    for i in sorted(ranked[:sent]):
        row, r = rows[i], rank[i]
        path: list[str] = []
        parent = row["tree_parent"]
        parent_rank = rank_by_name.get(parent, total) if parent else -1
        if parent and not row["problem"] and (parent_rank > r or parent_rank >= sent):
            seen = {row["name"]}
            while parent and parent not in seen and len(path) < 50:
                path.append(parent)
                seen.add(parent)
                parent = parent_of.get(parent, "")
            path.reverse()
        out.append(
            {
                **row,
                "kiosk_rank": r,
                "kiosk_hidden": r >= base,
                "kiosk_path": path,
                "kiosk_path_hidden": bool(path) and parent_rank < base,
            }
        )
    return out, total - base, max(0, len(problems) - base)


def kiosk_queue_cuts(sent: int, total: int, problems: int) -> list[list]:
    """The "+ N more" line of each cut of kiosk_queues' ``sent`` rows as [N, text]: item k is for
    the k + 1 most important rows shown (text "" when nothing is left out). ``total``: all queues; ``problems``:
    how many of them are problem queues (they rank first)."""
    return [[total - k, _queues_more_text(total - k, max(0, problems - k))] for k in range(1, sent + 1)]


def _queues_more_text(hidden: int, hidden_problems: int) -> str:
    if hidden <= 0:
        return ""
    text = ngettext("+ %(n)s more queue", "+ %(n)s more queues", hidden) % {"n": hidden}
    if hidden_problems:
        text += ngettext(
            ", %(n)s of them with a problem", ", %(n)s of them with problems", hidden_problems
        ) % {"n": hidden_problems}
    return text


# The "+ N more" line of each "needs attention" group (the msgids of _attention.html's).
_ATTENTION_MORE = {
    "pending": ("+ %(n)s more pending Job", "+ %(n)s more pending Jobs"),
    "below": ("+ %(n)s more gang below minMember", "+ %(n)s more gangs below minMember"),
    "crash": ("+ %(n)s more crash-looping pod", "+ %(n)s more crash-looping pods"),
    "failed": ("+ %(n)s more failed Job", "+ %(n)s more failed Jobs"),
    "closed": ("+ %(n)s more closed queue", "+ %(n)s more closed queues"),
}


def kiosk_attention(attention: dict, lines: int = KIOSK_ATTENTION_LINES) -> dict:
    """The "needs attention" lists for the kiosk, as a new dict with the same keys plus, per group,
    ``<group>_base``: how many of its items show without script (the cut to ``lines``, see
    KIOSK_ATTENTION_LINES), ``<group>_more``: how many of the group's total that cut leaves out
    (the kiosk says "+ N more" in the group's heading), and ``<group>_cuts``: the "+ N more" line
    for each number of items shown as JSON [N, text] pairs (item k: k + 1 shown; text "" when none
    is left out), for kiosk.js,
    which shows as many as fit. Every non-empty group keeps its heading and first item; the lines
    left go to the groups in turn (pending Jobs first), one item each round. The lists are sent
    whole. ``attention``: ``_attention``'s dict (not changed; the overview memoizes it)."""
    cost = {"pending": 3}
    totals = {
        "pending": attention.get("pending_total", 0),
        "below": attention.get("below_total", 0),
        "crash": attention.get("crash_total", 0),
        "failed": attention.get("failed_total", 0),
        "closed": attention.get("closed_total", len(attention.get("closed") or ())),
    }
    present = [g for g in KIOSK_ATTENTION_GROUPS if attention.get(g)]
    shown = dict.fromkeys(present, 1)

    def used() -> int:
        return sum(1 + shown[g] * cost.get(g, 1) for g in present)

    grew = True
    while grew:
        grew = False
        for g in present:
            if shown[g] >= len(attention[g]):
                continue
            shown[g] += 1
            if used() <= lines:
                grew = True
            else:
                shown[g] -= 1
    out = dict(attention)
    for g in KIOSK_ATTENTION_GROUPS:
        items = attention.get(g) or []
        out[f"{g}_base"] = shown.get(g, 0)
        out[f"{g}_more"] = max(0, totals[g] - shown[g]) if g in shown else 0
        one, many = _ATTENTION_MORE[g]
        cuts = []
        for k in range(1, len(items) + 1):
            n = max(0, totals[g] - k)
            cuts.append([n, ngettext(one, many, n) % {"n": n} if n else ""])
        out[f"{g}_cuts"] = json.dumps(cuts, ensure_ascii=False)
    return out


@require_safe
def kiosk(request: HttpRequest) -> HttpResponse:
    """Full-screen overview for an ops-room display. ``?rotate=N`` shows one queue at a time in
    detail, changing every N seconds; which queue is derived from the clock, so any refresh (or a
    restarted dashboard) continues the rotation without client state."""
    snap = _snapshot(request)
    now = p.reference_now(snap)
    rotate, rotate_note = _kiosk_rotate(request.GET.get("rotate"))
    kinds = ("jobs", "podgroups", "queues", "pods", "events")
    states = _kind_states(snap, *kinds)
    queue_list = sorted(snap.queues.all(), key=p.name_of)
    slot = int(time.time() // rotate) if rotate else 0
    versions = {
        "board": p.version_key(
            snap.jobs.version,
            snap.podgroups.version,
            snap.queues.version,
            snap.pods.version,
            snap.events.version,
            states,
            _bucket(now),
            slot,
        )
    }
    versions = _versions(snap, now, kinds, **versions)
    if resp := _unchanged(request, versions):
        return resp
    ctx = _base_ctx(request, snap, now, kinds, "kiosk")
    ctx.update(_overview_ctx(snap, request, now, ctx["notices"]))
    ctx["notices"] = _one_notice(ctx["notices"])
    focus = None
    if rotate and queue_list:
        q = queue_list[slot % len(queue_list)]
        focus = _queue_summaries(snap, [q])[0]
        focus["index"] = slot % len(queue_list) + 1
        focus["of"] = len(queue_list)
    kiosk_poll = (
        min(settings.VOLCANO_UI_POLL_SECONDS * 2, rotate) if rotate else settings.VOLCANO_UI_POLL_SECONDS * 2
    )
    all_queue_rows = ctx.get("queue_rows") or []
    queue_rows, queues_more, queue_problems_more = kiosk_queues(all_queue_rows)
    queue_cuts = kiosk_queue_cuts(
        len(queue_rows), len(all_queue_rows), sum(1 for r in all_queue_rows if kiosk_queue_problem(r))
    )
    warnings = ctx.get("warnings") or []
    attention = kiosk_attention(ctx["attention"])
    ctx.update(
        {
            "rotate": rotate,
            "rotate_note": rotate_note,
            "queue_rows": queue_rows,
            "queues_more": queues_more,
            "queue_problems_more": queue_problems_more,
            "queues_more_text": _queues_more_text(queues_more, queue_problems_more),
            "queue_cuts": json.dumps(queue_cuts, ensure_ascii=False),
            "warnings": warnings[:KIOSK_WARNING_ROWS],
            "warnings_more": max(0, len(warnings) - KIOSK_WARNING_ROWS),
            # _recent_warnings stops at its limit: more than it kept may exist.
            "warnings_more_or_more": len(warnings) >= RECENT_WARNING_OBJECTS,
            "attention": attention,
            # Rendered per request, not through _attention_html's cache: the cut lists are new
            # dicts each time, and at most a few dozen rows.
            "attention_html": mark_safe(  # noqa: S308 - template output, escaped when rendered
                get_template("dashboard/_attention.html").render(
                    {"attention": attention, "now": now, "kiosk": True}
                )
            ),
            "focus": focus,
            "force_theme": "dark",
            "kiosk_poll": kiosk_poll,
            "poll_seconds": kiosk_poll,
        }
    )
    return _respond(request, "dashboard/kiosk.html", ctx, versions)


# --- preferences --------------------------------------------------------------------------------

THEME_COOKIE = "vui_theme"


def current_theme(request: HttpRequest) -> str:
    value = request.COOKIES.get(THEME_COOKIE, "")
    return value if value in ("light", "dark") else ""


@require_GET
def set_theme(request: HttpRequest) -> HttpResponse:
    """Store the theme choice ("light", "dark" or "" for the system's) in a cookie and go back.
    static/js/app.js does the same without a round trip; this keeps the toggle working without JS."""
    theme = request.GET.get("theme", "")
    nxt = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        nxt = "/"
    resp = HttpResponseRedirect(nxt)
    if theme in ("light", "dark"):
        resp.set_cookie(THEME_COOKIE, theme, max_age=365 * 86400, samesite="Lax")
    else:
        resp.delete_cookie(THEME_COOKIE)
    return resp
