"""The status bar of every page: the notices of kinds whose data is not live, and "data as of".

A kind's state is the cache's ``KindState`` (dashboard/kube/store.py): ``name`` one of synced,
syncing, stale, forbidden, not_installed, unreachable; ``error_category`` ("unconfigured",
"rejected", ...), ``last_error``, ``since``, ``synced_at`` (last full list), ``live_until`` (when
the kind left "synced"), ``waiting_since`` (a request the API server has not answered yet; the
last error is then the previous attempt's cause).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import get_text_list
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from dashboard.templatetags.volcano import absolute

KIND_LABELS = {
    "jobs": gettext_noop("Volcano Jobs"),
    "podgroups": gettext_noop("PodGroups"),
    "queues": gettext_noop("Queues"),
    "pods": gettext_noop("Pods"),
    "events": gettext_noop("Events"),
    "nodes": gettext_noop("Nodes"),
    "hypernodes": gettext_noop("HyperNodes"),
    "cronjobs": gettext_noop("Volcano CronJobs"),
    "jobflows": gettext_noop("JobFlows"),
    "jobtemplates": gettext_noop("JobTemplates"),
}
ALL_KINDS = ("jobs", "podgroups", "queues", "pods", "events")


def kind_label(kind: str) -> str:
    """The translated plural label of a kind ("Volcano Jobs")."""
    return _(KIND_LABELS.get(kind, kind))


def notice_text(name: str, category: str, label: str, has_data: bool = True) -> tuple[str, str]:
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


def waiting_text(since: datetime) -> SafeString:
    """The current truth of a kind whose request the API server has not answered since ``since``
    (KindState.waiting_since), where the last error names only how the previous attempt ended. The
    time is absolute, as "Last synced" is: the text stays true in a fragment rendered earlier."""
    when = format_html('<time datetime="{}">{}</time>', since.isoformat(), absolute(since))
    sentence = conditional_escape(_("Waiting for an answer from the API server since %(time)s."))
    return mark_safe(sentence % {"time": when})  # the sentence escaped, the time built escaped


def notices(snap: Any, *kinds: str) -> list[dict]:
    """The notices for the kinds whose data is not live: syncing, stale, forbidden, not installed
    or unreachable (KindState of the cache contract). Kinds in the same state with the same error
    share one notice (an API server outage is one notice naming every kind, not five):
    ``kinds`` names them (``kind``: the same, space-separated), ``blocking_kinds`` those with no
    data at all (see blocked), ``synced_at`` the oldest moment their data was last current,
    ``waiting_since`` the earliest request of theirs the API server has not answered yet (None:
    none waits) and ``waiting`` its sentence ("" when none), shown before ``error``, which is then
    the previous cause."""
    groups: dict[tuple[str, str, str], list[tuple[str, Any]]] = {}
    for kind in kinds:
        state = getattr(snap, kind).state
        name = getattr(state, "name", "synced")
        if name == "synced":
            continue
        key = (name, getattr(state, "error_category", "") or "", getattr(state, "last_error", "") or "")
        groups.setdefault(key, []).append((kind, state))
    return [_notice(name, category, err, members) for (name, category, err), members in groups.items()]


def _notice(name: str, category: str, err: str, members: list[tuple[str, Any]]) -> dict:
    names = tuple(kind for kind, _state in members)
    label = get_text_list([kind_label(kind) for kind in names], _("and"))
    has_data = any(getattr(st, "synced_at", None) for _k, st in members)
    text, level = notice_text(name, category, label, has_data)
    # "Last synced": when the data was last known current (the watch kept it current until
    # the kind left "synced"), the same moment "Data as of" uses.
    current = [
        t for _k, st in members if (t := getattr(st, "live_until", None) or getattr(st, "synced_at", None))
    ]
    since = [t for _k, st in members if (t := getattr(st, "since", None))]
    waiting = min((t for _k, st in members if (t := getattr(st, "waiting_since", None))), default=None)
    return {
        "kind": " ".join(names),
        "kinds": names,
        "state": name,
        "level": level,
        "text": text,
        "error": err,
        "category": category,
        "since": min(since) if since else None,
        "synced_at": min(current) if current else None,
        "waiting_since": waiting,
        "waiting": waiting_text(waiting) if waiting else "",
        "blocking_kinds": frozenset(
            kind
            for kind, st in members
            if name in ("forbidden", "not_installed")
            or (name in ("syncing", "unreachable") and getattr(st, "synced_at", None) is None)
        ),
    }


_NOTICE_WORDS = {
    "syncing": gettext_noop("loading"),
    "stale": gettext_noop("may be out of date"),
    "forbidden": gettext_noop("forbidden"),
    "not_installed": gettext_noop("not installed"),
    "unreachable": gettext_noop("cluster unreachable"),
}
_LEVELS = ("info", "warn", "bad")


def one_notice(found: list[dict]) -> list[dict]:
    """The kiosk's notices as one line ("Volcano Jobs, PodGroups: may be out of date; Events:
    forbidden"): during an outage five separate banners would push the board off a wall display."""
    if len(found) < 2:
        return found
    by_state: dict[str, list[str]] = {}
    for n in found:
        by_state.setdefault(n["state"], []).extend(kind_label(k) for k in n["kinds"])
    text = "; ".join(
        f"{', '.join(labels)}: {_(_NOTICE_WORDS.get(state, state))}" for state, labels in by_state.items()
    )
    synced = [n["synced_at"] for n in found if n.get("synced_at")]
    rank = {lv: i for i, lv in enumerate(_LEVELS)}
    return [
        {
            "kind": "all",
            "state": next(iter(by_state)) if len(by_state) == 1 else "mixed",
            "level": max((n["level"] for n in found), key=lambda lv: rank.get(lv, 1)),
            "text": text,
            "error": "",
            "since": None,
            "synced_at": min(synced) if synced else None,
            "waiting_since": None,  # one short line, without the causes
            "waiting": "",
            "kinds": tuple(k for n in found for k in n["kinds"]),
            "blocking_kinds": frozenset().union(*(n["blocking_kinds"] for n in found)),
        }
    ]


def blocked(found: list[dict], kind: str) -> bool:
    """Whether ``kind`` has no data at all (forbidden, not installed, or never listed yet)."""
    return any(kind in n["blocking_kinds"] for n in found)


# Kinds the cache can never read: they hold no objects (the informer clears them), so they have
# no data to be out of date; their own notice says they cannot be read.
_NO_DATA_STATES = frozenset({"forbidden", "not_installed"})


def data_as_of(snap: Any, now: datetime, *kinds: str) -> datetime | None:
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


def unavailable(snap: Any, *kinds: str) -> dict[str, str]:
    """{kind: why} for the kinds whose objects cannot be counted at all ("forbidden", "not
    installed", "still loading", "cluster unreachable": presenters.unreadable_reason): a count of
    them would be a 0 that means "unknown"."""
    from dashboard.presenters.pending import unreadable_reason

    out = {}
    for kind in kinds:
        why = unreadable_reason(getattr(snap, kind).state)
        if why:
            out[kind] = why
    return out


def scope(snap: Any) -> int | None:
    """How many namespaces the counts of ``snap`` cover when they are limited to the viewer's
    (access modes proxy and token: dashboard.access.visible_namespaces), else None (all)."""
    limited = getattr(snap, "namespaces_filter", None)
    return None if limited is None else len(limited)


def page_ctx(snap: Any, now: datetime, kinds: tuple[str, ...], nav: str) -> dict[str, Any]:
    """The context every page starts with: ``now``, ``nav`` (the highlighted menu entry), the
    ``notices`` and ``data_as_of`` of ``kinds``, ``unavailable`` (kinds that cannot be counted,
    with why), ``scope`` (the number of namespaces counts are limited to, None for all) and
    ``poll_seconds``."""
    return {
        "now": now,
        "nav": nav,
        "notices": notices(snap, *kinds),
        "data_as_of": data_as_of(snap, now, *kinds),
        "unavailable": unavailable(snap, *kinds),
        "scope": scope(snap),
        "poll_seconds": settings.VOLCANO_UI_POLL_SECONDS,
    }
