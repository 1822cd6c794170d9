"""Phases ready for display: the wire value as label, a tone (colour) and an icon.

The phase tables and their classes (final, waiting, ...) are the domain's
(``dashboard.volcano.phases``); this module adds only tones and icons.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.utils.translation import gettext as _

from dashboard.volcano import phases as vp
from dashboard.volcano.objects import as_dict, as_str, is_deleting, status


@dataclass(frozen=True)
class Phase:
    """A phase ready for display: ``label`` is the wire value (or a placeholder), ``tone`` one of
    ok/warn/bad/info/done/muted (colour), ``icon`` an icon name; status is always text + icon."""

    label: str
    tone: str
    icon: str
    final: bool = False
    known: bool = True
    deleting: bool = False  # metadata.deletionTimestamp is set (finalizers still hold the object)
    # On the way to another phase (vp.TRANSITIONAL_JOB_PHASES): styled apart from final ones.
    transitional: bool = False


_JOB_LOOK = {
    "Pending": ("warn", "clock"),
    "Running": ("ok", "play"),
    "Restarting": ("warn", "refresh"),
    "Aborting": ("warn", "stop"),
    "Aborted": ("muted", "stop"),
    "Completing": ("info", "check"),
    "Completed": ("done", "check"),
    "Terminating": ("warn", "ban"),
    "Terminated": ("muted", "ban"),
    "Failed": ("bad", "cross"),
}
_PODGROUP_LOOK = {
    "Pending": ("warn", "clock"),
    "Inqueue": ("info", "enter"),
    "Running": ("ok", "play"),
    "Unknown": ("bad", "question"),
    "Completed": ("done", "check"),
}
_QUEUE_LOOK = {
    "Open": ("ok", "unlock"),
    "Closing": ("warn", "lock"),
    "Closed": ("bad", "lock"),
    "Unknown": ("muted", "question"),
}

# {phase: (tone, icon, final)} in the domain's lifecycle order.
JOB_PHASES: dict[str, tuple[str, str, bool]] = {
    p: (*_JOB_LOOK[p], p in vp.FINAL_JOB_PHASES) for p in vp.JOB_PHASES
}
JOB_PHASE_ORDER = list(JOB_PHASES)
PODGROUP_PHASES: dict[str, tuple[str, str, bool]] = {
    p: (*_PODGROUP_LOOK[p], p in vp.FINAL_PODGROUP_PHASES) for p in vp.PODGROUP_PHASES
}
PODGROUP_PHASE_ORDER = list(PODGROUP_PHASES)
QUEUE_STATES: dict[str, tuple[str, str, bool]] = {p: (*_QUEUE_LOOK[p], False) for p in vp.QUEUE_STATES}

POD_TONES = {
    "Running": "ok",
    "Succeeded": "done",
    "Completed": "done",
    "Pending": "warn",
    "ContainerCreating": "info",
    "PodInitializing": "info",
    "Terminating": "warn",
    "Failed": "bad",
    "Error": "bad",
    "CrashLoopBackOff": "bad",
    "ImagePullBackOff": "bad",
    "ErrImagePull": "bad",
    "OOMKilled": "bad",
    "Unknown": "muted",
}
TONE_ICONS = {
    "ok": "play",
    "warn": "clock",
    "bad": "cross",
    "info": "info",
    "done": "check",
    "muted": "question",
}


def phase_of_table(table: dict[str, tuple[str, str, bool]], value: Any) -> Phase:
    """``value`` looked up in a phase table; an unknown phase string is shown verbatim, never
    guessed at, and no value at all reads "No status"."""
    label = as_str(value)
    if not label:
        return Phase(_("No status"), "muted", "question", known=False)
    if label in table:
        tone, icon, final = table[label]
        return Phase(label, tone, icon, final)
    return Phase(label, "muted", "question", known=False)


def _marked(phase: Phase, obj: Mapping) -> Phase:
    return replace(phase, deleting=True) if is_deleting(obj) else phase


def _of_object(table: dict[str, tuple[str, str, bool]], obj: Mapping, value: Any, unreported: str) -> Phase:
    """``phase_of_table`` of a value read from ``obj``'s status. A status with other fields and
    no such value (a Queue whose ``allocated`` the scheduler wrote while the controller that
    writes ``state`` was down) reads ``unreported``; "No status" is for an absent or empty status."""
    phase = phase_of_table(table, value)
    if not as_str(value) and status(obj):
        phase = replace(phase, label=unreported)
    return _marked(phase, obj)


def job_phase(job: Mapping) -> Phase:
    value = as_dict(status(job).get("state")).get("phase")
    phase = _of_object(JOB_PHASES, job, value, _("Phase not reported"))
    if phase.known and phase.label in vp.TRANSITIONAL_JOB_PHASES:
        phase = replace(phase, transitional=True)
    return phase


def podgroup_phase(pg: Mapping) -> Phase:
    return _of_object(PODGROUP_PHASES, pg, status(pg).get("phase"), _("Phase not reported"))


def queue_state(queue: Mapping) -> Phase:
    return _of_object(QUEUE_STATES, queue, status(queue).get("state"), _("State not reported"))


def pod_phase(status_text: str) -> Phase:
    """A pod's STATUS column text (``pod_display_status``) with its tone."""
    tone = POD_TONES.get(status_text)
    if tone is None:
        if status_text.startswith("Init:"):
            tone = "bad" if ("Error" in status_text or "BackOff" in status_text) else "info"
        elif (
            "BackOff" in status_text or "Err" in status_text or status_text.startswith(("Signal", "ExitCode"))
        ):
            tone = "bad"
        else:
            tone = "muted"
    return Phase(status_text or _("Unknown"), tone, TONE_ICONS[tone])


def phase_counts(objs: Iterable[Mapping], phase_fn: Callable[[Mapping], str]) -> Counter[str]:
    return Counter(phase_fn(o) for o in objs)
