"""A Job's or PodGroup's state in words (``dashboard.volcano.states``): what its phase means, the
counters checked against the pods, why there are no pods, and "stuck"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.volcano import states as vs
from dashboard.volcano.phases import RESUMABLE_JOB_PHASES, TRANSITIONAL_JOB_PHASES

# The Job's status counters, as their rows are labelled on the pages.
_COUNTER_WORDS = {
    "pending": "Pending",
    "running": "Running",
    "succeeded": "Succeeded",
    "failed": "Failed",
    "terminating": "Terminating",
}


def job_phase_note(phase: str) -> str:
    """What a Job phase means when the word alone does not say it ("" for the others)."""
    if phase in RESUMABLE_JOB_PHASES:
        return _("Aborted: its pods were released. It can be resumed (vcctl job resume).")
    if phase == "Restarting":
        return _("Transitional: the controller deletes the pods, then starts the Job again.")
    if phase == "Aborting":
        return _("Transitional: the controller releases the pods, then the Job is Aborted.")
    if phase == "Completing":
        return _("Transitional: the controller stops the remaining pods, then the Job is Completed.")
    if phase == "Terminating":
        return _("Transitional: the controller deletes the pods, then the Job is Terminated.")
    return ""


def wait_heading(question: vs.WaitQuestion) -> str:
    """The heading of the why-not-running card (``job_wait_question``); "" hides the card."""
    if question == "pending":
        return _("Why is this Job pending?")
    if question == "incomplete":
        return _("Why is this Job's gang not complete?")
    return ""


# The Job counters the gang bar adds up (volcano.gang.job_gang).
GANG_COUNTERS = ("running", "succeeded")


@dataclass(frozen=True)
class CounterNote:
    """The Job's counters checked against the pods: ``rows`` (label, reported, counted from the
    pods) of the counters that disagree, ``pods`` the pods counted, ``terminating`` the pods with
    a deletionTimestamp; ``lines`` the rows in words; ``text`` says so ("" when the counters agree);
    ``gang_disputed``: a counter the gang bar is made of (running, succeeded) is among them."""

    rows: tuple[tuple[str, int, int], ...]
    lines: tuple[str, ...]
    pods: int
    terminating: int
    text: str
    terminating_text: str
    gang_disputed: bool = False


def counter_note(
    job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], pods_readable: bool
) -> CounterNote:
    """``vs.counter_mismatches`` in words; nothing is claimed when pods cannot be read."""
    if not pods_readable:
        return CounterNote((), (), 0, 0, "", "")
    checks = vs.counter_mismatches(job, pods)
    rows = tuple((_(_COUNTER_WORDS[c.counter]), c.reported, c.observed) for c in checks)
    n = len(pods)
    text = ""
    if rows:
        text = ngettext(
            "The Job's counters disagree with the %(n)d pod the dashboard sees:",
            "The Job's counters disagree with the %(n)d pods the dashboard sees:",
            n,
        ) % {"n": n}
    terminating = len(vs.terminating_pods(pods))
    terminating_text = ""
    if terminating:
        terminating_text = ngettext(
            "%(n)d pod still terminating", "%(n)d pods still terminating", terminating
        ) % {"n": terminating}
    lines = tuple(counter_row_text(row) for row in rows)
    disputed = any(c.counter in GANG_COUNTERS for c in checks)
    return CounterNote(rows, lines, n, terminating, text, terminating_text, disputed)


def counter_row_text(row: tuple[str, int, int]) -> str:
    label, reported, observed = row
    return _("%(counter)s: %(reported)d reported, %(observed)d counted from the pods") % {
        "counter": label,
        "reported": reported,
        "observed": observed,
    }


def replica_note(job: Mapping[str, Any]) -> dict[str, Any] | None:
    """{"desired", "text"} when minAvailable exceeds the Job's replicas (``vs.replica_shortfall``)."""
    short = vs.replica_shortfall(job)
    if short is None:
        return None
    return {
        "desired": ngettext("%(n)d desired pod", "%(n)d desired pods", short.total) % {"n": short.total},
        "text": _("minAvailable (%(min)d) exceeds total replicas (%(total)d)")
        % {"min": short.min_available, "total": short.total},
    }


def no_pods_text(why: vs.NoPods) -> str:
    """Why a Job has no pods, in words (``vs.why_no_pods``)."""
    cause, phase = why.cause, why.phase
    if cause == "deleted":
        return _("No pods: the Job is being deleted.")
    if cause == "no_replicas":
        return _("No pods: the Job's tasks have 0 replicas in all, so it has no pods to create.")
    if cause == "finished":
        return _(
            "No pods: the Job is %(phase)s and its pods were removed (by its policies or a cleanup)."
        ) % {"phase": phase}
    if cause == "stopped":
        return _(
            "No pods: the Job is %(phase)s and its pods were released; resuming it creates them again."
        ) % {"phase": phase}
    if cause == "create_failed":
        return _("No pods: the PodGroup was admitted but creating the pods fails: %(message)s") % {
            "message": why.message
        }
    if cause == "not_admitted":
        return _("No pods. A Job whose PodGroup has not been admitted has no pods yet.")
    if cause == "no_podgroup":
        return _("No pods yet: the job controller has not created the Job's PodGroup.")
    return _("No pods.")


def podgroup_no_pods_text(pg: Mapping[str, Any], job: Mapping[str, Any] | None) -> str:
    """Why a PodGroup has no pods: its Volcano Job's reason when it has one, else "No pods."."""
    if job is None:
        return _("No pods.")
    return no_pods_text(vs.why_no_pods(job, pg, ()))


@dataclass(frozen=True)
class StuckView:
    """A stuck object in words: ``text`` (the headline), ``holders`` one line per pod it waits for,
    ``finalizers`` its own finalizers as text ("" without)."""

    phase: str
    seconds: float
    text: str
    holders: tuple[str, ...]
    finalizers: str
    since: datetime | None = None


def _holder_text(h: vs.Holder) -> str:
    if h.finalizers:
        return _("%(pod)s: %(status)s, finalizers %(finalizers)s") % {
            "pod": h.name,
            "status": h.status,
            "finalizers": ", ".join(h.finalizers),
        }
    return _("%(pod)s: %(status)s") % {"pod": h.name, "status": h.status}


def stuck_view(stuck: vs.Stuck | None, limit: int) -> StuckView | None:
    """``stuck`` (``vs.job_stuck`` / ``vs.podgroup_stuck``) in words, ``limit`` the threshold in
    seconds; None when not stuck."""
    if stuck is None:
        return None
    minutes = max(1, limit // 60)
    if stuck.phase in TRANSITIONAL_JOB_PHASES:
        text = ngettext(
            "Stuck: %(phase)s for longer than %(n)d minute.",
            "Stuck: %(phase)s for longer than %(n)d minutes.",
            minutes,
        ) % {"phase": stuck.phase, "n": minutes}
    else:
        text = ngettext(
            "Stuck: being deleted for longer than %(n)d minute.",
            "Stuck: being deleted for longer than %(n)d minutes.",
            minutes,
        ) % {"n": minutes}
    return StuckView(
        phase=stuck.phase,
        seconds=stuck.seconds,
        since=stuck.since,
        text=text,
        holders=tuple(_holder_text(h) for h in stuck.holders),
        finalizers=", ".join(stuck.finalizers),
    )
