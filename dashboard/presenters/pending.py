"""Why a Job or PodGroup is not running, in words: the domain's facts
(``dashboard.volcano.pending``) as translated findings; and the pages' "cannot be read" hints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.presenters.queues import room_row
from dashboard.volcano.nodes import NodeBar
from dashboard.volcano.pending import Fact
from dashboard.volcano.quantities import format_quantity, resource_sort_key


@dataclass
class Finding:
    """One plain-words reason, ``level`` in info/warn/bad; ``verbatim`` is a message quoted as the
    cluster wrote it."""

    level: str
    text: str
    verbatim: str = ""
    items: list[str] = field(default_factory=list)
    # PodGroups (namespace, name) the finding names as links under ``podgroups_label``, and how
    # many more there are beyond them.
    podgroups: list[tuple[str, str]] = field(default_factory=list)
    podgroups_label: str = ""
    podgroups_more: int = 0
    # When the condition quoted in ``verbatim`` became current (None: not known).
    verbatim_at: datetime | None = None
    # The fact's kind (dashboard.volcano.pending.FACT_KINDS), for pages that mark what it is about.
    kind: str = ""


# PodGroups a "no room" finding links to by name; the rest are counted ("+ 3 more").
NO_ROOM_PODGROUP_LINKS = 3
# Pod problems listed under one finding; the count names them all.
POD_PROBLEMS_LISTED = 10


# -- "does not exist" claims -----------------------------------------------------------------------


def unreadable_reason(state: Any) -> str:
    """Why the cache cannot say whether an object of a kind exists: "" when it can (the kind is
    synced, or stale with data), else a short reason ("forbidden", "not installed", "still loading",
    "cluster unreachable"). ``state`` is a cache ``KindState`` (or None). Every "does not exist" /
    "none" claim about an object checks its kind here first: absence from a kind the cache cannot
    read proves nothing."""
    name = getattr(state, "name", "synced") if state is not None else "synced"
    has_data = getattr(state, "synced_at", None) is not None
    if name == "forbidden":
        return _("forbidden")
    if name == "not_installed":
        return _("not installed")
    if name == "syncing" and not has_data:
        return _("still loading")
    if name == "unreachable" and not has_data:
        return _("cluster unreachable")
    return ""


def absent_hint(obj: Mapping | None, state: Any) -> str:
    """ "" when ``obj`` is in the cache (link to it); else the hint shown beside its unlinked name:
    "(not found)" when the kind is readable, "(cannot be read: <reason>)" when it is not
    (``unreadable_reason``). A link to an object the cache does not hold would lead to a 404."""
    if obj is not None:
        return ""
    why = unreadable_reason(state)
    if why:
        return _("(cannot be read: %(why)s)") % {"why": why}
    return _("(not found)")


# -- facts in words ----------------------------------------------------------------------------------


def _never_text(fact: Fact) -> str:
    v = fact.values
    if fact.kind == "job_no_tasks":
        return _(
            "This Job has no tasks: nothing to schedule. (Volcano's admission webhook rejects a Job "
            "without tasks; it exists only if the webhook was off.)"
        )
    if fact.kind == "min_available_above_replicas":
        return ngettext(
            "This will never start: minAvailable (%(min)d) is more than the Job's "
            "%(total)d replica in all tasks, so the gang can never be complete. "
            "(Volcano's admission webhook rejects such a Job; it exists only if the "
            "webhook was off.)",
            "This will never start: minAvailable (%(min)d) is more than the Job's "
            "%(total)d replicas in all tasks, so the gang can never be complete. "
            "(Volcano's admission webhook rejects such a Job; it exists only if the "
            "webhook was off.)",
            v["total"],
        ) % {"min": v["min"], "total": v["total"]}
    if fact.kind == "min_member_above_replicas":
        return ngettext(
            "This will never start: the PodGroup's minMember (%(min)d) is more than the "
            "Job's %(total)d replica in all tasks, so the gang can never be complete.",
            "This will never start: the PodGroup's minMember (%(min)d) is more than the "
            "Job's %(total)d replicas in all tasks, so the gang can never be complete.",
            v["total"],
        ) % {"min": v["min"], "total": v["total"]}
    return ngettext(
        "This will never start as it is: the PodGroup's minMember (%(min)d) is more "
        "than the %(n)d pod that exists for it, so the gang can never be complete "
        "unless its owner creates more pods.",
        "This will never start as it is: the PodGroup's minMember (%(min)d) is more "
        "than the %(n)d pods that exist for it, so the gang can never be complete "
        "unless its owner creates more pods.",
        v["n"],
    ) % {"min": v["min"], "n": v["n"]}


def _capability_finding(fact: Fact) -> Finding:
    qname = fact.values["queue"]
    items = []
    for lim in fact.limits:
        values = {
            "res": lim.resource,
            "need": format_quantity(lim.resource, lim.need),
            "cap": format_quantity(lim.resource, lim.capability),
            "queue": lim.queue,
        }
        if lim.queue == qname:
            items.append(_("%(res)s: needs %(need)s, capability %(cap)s") % values)
        else:
            items.append(
                _("%(res)s: needs %(need)s, capability %(cap)s (set on ancestor queue “%(queue)s”)") % values
            )
    text = _(
        "This will never start: the gang's minimum resources exceed the capability of "
        "queue “%(queue)s” (a hard limit), so it can never be admitted unless the "
        "capability is raised:"
    ) % {"queue": qname}
    return Finding("bad", text, items=items)


def _cluster_finding(fact: Fact) -> Finding:
    items = [
        _("%(res)s: needs %(need)s, the whole cluster has %(total)s allocatable")
        % {"res": res, "need": format_quantity(res, need), "total": format_quantity(res, total)}
        for res, need, total in fact.short
    ]
    n = fact.values["nodes"]
    text = ngettext(
        "This will not start as the cluster stands: the gang's minimum resources are more than "
        "the allocatable of the whole cluster (%(n)d node together):",
        "This will not start as the cluster stands: the gang's minimum resources are more than "
        "the allocatable of the whole cluster (%(n)d nodes together):",
        n,
    ) % {"n": n}
    return Finding("bad", text, items=items, kind=fact.kind)


def _bar_text(bar: NodeBar) -> str:
    values: dict[str, object] = {"n": bar.nodes, "node": bar.example}
    if bar.kind == "too_small":
        values["short"] = "; ".join(
            _("%(res)s at most %(have)s allocatable, needs %(need)s")
            % {"res": res, "have": format_quantity(res, have), "need": format_quantity(res, need)}
            for res, have, need in bar.short
        )
        return (
            ngettext(
                "%(n)d node is too small: %(short)s (%(node)s)",
                "%(n)d nodes are too small: %(short)s (e.g. %(node)s)",
                bar.nodes,
            )
            % values
        )
    if bar.kind == "selector":
        return (
            ngettext(
                "%(n)d node does not match its nodeSelector (%(node)s)",
                "%(n)d nodes do not match its nodeSelector (e.g. %(node)s)",
                bar.nodes,
            )
            % values
        )
    if bar.kind == "taint" and bar.taint is not None:
        t = bar.taint
        values["taint"] = f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
        return (
            ngettext(
                "%(n)d node has the taint %(taint)s, which the pod does not tolerate (%(node)s)",
                "%(n)d nodes have the taint %(taint)s, which the pod does not tolerate (e.g. %(node)s)",
                bar.nodes,
            )
            % values
        )
    return (
        ngettext(
            "%(n)d node is cordoned (unschedulable) (%(node)s)",
            "%(n)d nodes are cordoned (unschedulable) (e.g. %(node)s)",
            bar.nodes,
        )
        % values
    )


def _task_finding(fact: Fact) -> Finding:
    request = fact.values["request"]
    text = _(
        "This will not start as the cluster stands: no node can ever take a pod of task "
        "“%(task)s” (requests %(request)s):"
    ) % {
        "task": fact.values["task"],
        "request": ", ".join(
            f"{res} {format_quantity(res, request[res])}" for res in sorted(request, key=resource_sort_key)
        )
        or "—",
    }
    return Finding("bad", text, items=[_bar_text(b) for b in fact.bars], kind=fact.kind)


def _no_room_finding(fact: Fact) -> Finding:
    depth, qname, own = fact.values["depth"], fact.values["queue"], fact.values["own"]
    items = []
    holders: dict[tuple[str, str], None] = {}
    for row in fact.rows:
        r = room_row(row)
        values = {
            "res": r["resource"],
            "need": r["need"],
            "left": r["left"],
            "cap": r["capability"],
            "alloc": r["allocated"],
            "reserved": r["reserved"],
            "n": len(r["reservers"]),
        }
        if r["reservers"]:
            items.append(
                ngettext(
                    "%(res)s: needs %(need)s, %(left)s left (capability %(cap)s, allocated "
                    "%(alloc)s, reserved %(reserved)s by %(n)d Inqueue PodGroup)",
                    "%(res)s: needs %(need)s, %(left)s left (capability %(cap)s, allocated "
                    "%(alloc)s, reserved %(reserved)s by %(n)d Inqueue PodGroups)",
                    len(r["reservers"]),
                )
                % values
            )
        else:
            items.append(
                _("%(res)s: needs %(need)s, %(left)s left (capability %(cap)s, allocated %(alloc)s)") % values
            )
        holders.update(dict.fromkeys(tuple(k) for k in r["reservers"]))
    if depth == 0:
        text = _("No room in queue “%(queue)s” for the gang's minimum resources:") % {"queue": qname}
    elif depth == 1:
        text = _(
            "No room in parent queue “%(queue)s” (its capability covers “%(own)s” and every "
            "other queue below it) for the gang's minimum resources:"
        ) % {"queue": qname, "own": own}
    else:
        text = _(
            "No room in ancestor queue “%(queue)s” (its capability covers “%(own)s” and every "
            "other queue below it) for the gang's minimum resources:"
        ) % {"queue": qname, "own": own}
    names = list(holders)
    return Finding(
        "bad",
        text,
        items=items,
        podgroups=names[:NO_ROOM_PODGROUP_LINKS],
        podgroups_label=ngettext(
            "Reserved by the Inqueue PodGroup:", "Reserved by the Inqueue PodGroups:", len(names)
        )
        if names
        else "",
        podgroups_more=max(0, len(names) - NO_ROOM_PODGROUP_LINKS),
    )


def _differs_finding(fact: Fact) -> Finding:
    v = fact.values
    items = []
    for row in fact.rows:
        r = room_row(row)
        values = {"res": r["resource"], "need": r["need"], "left": r["left"], "queue": r["queue"]}
        values |= {"cap": r["capability"], "alloc": r["allocated"], "reserved": r["reserved"] or "0"}
        items.append(
            _(
                "%(res)s in “%(queue)s”: needs %(need)s; capability %(cap)s − allocated %(alloc)s − "
                "reserved %(reserved)s leaves %(left)s"
            )
            % values
        )
    text = _(
        "The scheduler's view differs: it reports no room in queue “%(queue)s”, while the queue's "
        "numbers leave room for the gang:"
    ) % {"queue": v["queue"]}
    leftovers = v["leftovers"]
    if leftovers:
        hold = ", ".join(f"{res} {format_quantity(res, amount)}" for res, amount in v["hold"].items())
        items.append(
            ngettext(
                "%(n)d Running PodGroup in this queue has fewer pods than its minMember and no owner "
                "(possible leftover); it holds minResources %(hold)s, which the scheduler may still count.",
                "%(n)d Running PodGroups in this queue have fewer pods than their minMember and no owner "
                "(possible leftovers); they hold minResources %(hold)s, which the scheduler may still count.",
                len(leftovers),
            )
            % {"n": len(leftovers), "hold": hold}
        )
    names = [(x.namespace, x.name) for x in leftovers]
    return Finding(
        "warn",
        text,
        fact.verbatim,
        items=items,
        podgroups=names[:NO_ROOM_PODGROUP_LINKS],
        podgroups_label=ngettext("Possible leftover:", "Possible leftovers:", len(names)) if names else "",
        podgroups_more=max(0, len(names) - NO_ROOM_PODGROUP_LINKS),
        verbatim_at=fact.verbatim_at,
        kind=fact.kind,
    )


def _inqueue_text(fact: Fact) -> str:
    size = fact.values["min"]
    if size is None:
        return _(
            "The PodGroup was admitted (Inqueue), but its minMember is not a valid gang size "
            "(negative or not a whole number): how many pods the scheduler waits for is unknown."
        )
    if size == 0:
        return _(
            "The PodGroup was admitted (Inqueue) with minMember 0: there is no gang, the scheduler "
            "places each pod on its own, and none is placed yet."
        )
    if fact.values["never"]:
        text = ngettext(
            "The PodGroup was admitted (Inqueue), but the scheduler cannot "
            "place the whole gang of %(min)d pod.",
            "The PodGroup was admitted (Inqueue), but the scheduler cannot "
            "place the whole gang of %(min)d pods.",
            size,
        )
    else:
        text = ngettext(
            "The PodGroup was admitted (Inqueue), but the scheduler cannot yet "
            "place the whole gang of %(min)d pod.",
            "The PodGroup was admitted (Inqueue), but the scheduler cannot yet "
            "place the whole gang of %(min)d pods.",
            size,
        )
    return text % {"min": size}


def _component_text(fact: Fact) -> str:
    v = fact.values
    values = {"ready": v["ready"], "desired": v["desired"], "name": v["component"]}
    if v["component"] == "volcano-scheduler":
        return (
            _(
                "The Volcano scheduler is not running (%(ready)d/%(desired)d ready): nothing will be "
                "admitted or placed until it is back."
            )
            % values
        )
    return (
        _(
            "The Volcano controller manager (%(name)s) is not running (%(ready)d/%(desired)d ready): "
            "the Job's PodGroup and pods are not created, nor its status updated, until it is back."
        )
        % values
    )


def _simple_text(fact: Fact) -> str:
    v = fact.values
    kind = fact.kind
    if kind == "component_down":
        return _component_text(fact)
    if kind == "job_no_status":
        return _("The Volcano job controller has not processed this Job yet (it has no status).")
    if kind == "podgroups_unreadable":
        return _("PodGroups cannot be read (%(why)s), so the Job's PodGroup cannot be checked.") % {
            "why": v["why"]
        }
    if kind == "podgroup_missing":
        return _(
            "No PodGroup exists for this Job yet. The job controller creates "
            "one before any pod; until then the scheduler cannot consider it."
        )
    if kind == "podgroup_no_status":
        return _("The scheduler has not looked at the PodGroup yet (no status).")
    if kind == "podgroup_pending" and v["pods_exist"]:
        return _(
            "The PodGroup is Pending: queue “%(queue)s” has not admitted it yet, "
            "so the scheduler does not place its pods."
        ) % {"queue": v["queue"]}
    if kind == "podgroup_pending":
        return _(
            "The PodGroup is Pending: queue “%(queue)s” has not admitted it yet, so no pods are created."
        ) % {"queue": v["queue"]}
    if kind == "podgroup_inqueue":
        return _inqueue_text(fact)
    if kind == "podgroup_unknown":
        return _(
            "Some pods are running but the gang was found unschedulable in the latest scheduling session."
        )
    if kind == "podgroup_unschedulable":
        return _("The scheduler reports the gang as unschedulable.")
    if kind == "queues_unreadable":
        return _("Queue “%(queue)s” cannot be checked: Queues cannot be read (%(why)s).") % {
            "queue": v["queue"],
            "why": v["why"],
        }
    if kind == "queue_missing":
        return _("Queue “%(queue)s” does not exist (or is not visible).") % {"queue": v["queue"]}
    if kind == "queue_not_open":
        return _("Queue “%(queue)s” is %(state)s: it admits no new work.") % {
            "queue": v["queue"],
            "state": v["state"],
        }
    return _never_text(fact)


def finding(fact: Fact) -> Finding:
    """One fact of dashboard.volcano.pending in words."""
    if fact.kind == "capability":
        return _capability_finding(fact)
    if fact.kind == "cluster_too_small":
        return _cluster_finding(fact)
    if fact.kind == "no_node_for_task":
        return _task_finding(fact)
    if fact.kind == "no_room":
        return _no_room_finding(fact)
    if fact.kind == "scheduler_differs":
        return _differs_finding(fact)
    if fact.kind == "pod_problems":
        n = len(fact.blockers)
        return Finding(
            "warn",
            ngettext("%(n)d pod reports a problem:", "%(n)d pods report problems:", n) % {"n": n},
            items=list(fact.blockers[:POD_PROBLEMS_LISTED]),
        )
    return Finding(
        fact.level, _simple_text(fact), fact.verbatim, verbatim_at=fact.verbatim_at, kind=fact.kind
    )


def findings(facts: Iterable[Fact]) -> list[Finding]:
    """The facts of dashboard.volcano.pending (``why_pending``, ``never_start``) in words, in
    their order."""
    return [finding(f) for f in facts]
