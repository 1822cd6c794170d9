""" "Why did this Job fail?" in words, from the facts of ``dashboard.volcano.failure``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.presenters.pending import Finding
from dashboard.volcano.failure import Failure, Termination, explain_failure
from dashboard.volcano.podrecords import ContainerEnd, PodRecord

# Failed containers listed by name; the rest are counted.
TERMINATIONS_LISTED = 10


@dataclass
class FailureView:
    """The card: ``findings`` most decisive first, ``containers`` the failed containers (for the
    log links and the lazily loaded last lines), ``first`` the earliest failure."""

    findings: list[Finding] = field(default_factory=list)
    containers: list[Termination] = field(default_factory=list)
    more: int = 0
    first: Termination | None = None


def termination_text(t: Termination | ContainerEnd) -> str:
    """ "OOMKilled, exit code 137" / "Error, exit code 1, signal 9": what ended the container."""
    parts = [t.reason or _("terminated")]
    if t.exit_code:
        parts.append(_("exit code %(code)s") % {"code": t.exit_code})
    if t.signal:
        parts.append(_("signal %(sig)s") % {"sig": t.signal})
    return ", ".join(parts)


def _policy_finding(f: Failure) -> Finding | None:
    # One whole sentence per scope: a language puts the task's name where its grammar wants it.
    restart = [p for p in f.policies if p.action == "RestartJob"]
    if restart and f.retries_exhausted:
        p = restart[0]
        values = {
            "trigger": p.trigger,
            "task": p.scope,
            "n": f.restarts,
            "next": f.restarts + 1,
            "max": f.max_retry,
            "default": "" if f.max_retry_set else _(" (Volcano's default)"),
        }
        if p.scope:
            text = ngettext(
                "A pod failed (%(trigger)s), and the policy of task %(task)s restarts the Job (RestartJob). "
                "Volcano restarted it %(n)s time; restart number %(next)s reached maxRetry "
                "%(max)s%(default)s, so the Job is Failed.",
                "A pod failed (%(trigger)s), and the policy of task %(task)s restarts the Job (RestartJob). "
                "Volcano restarted it %(n)s times; restart number %(next)s reached maxRetry "
                "%(max)s%(default)s, so the Job is Failed.",
                f.restarts,
            )
        else:
            text = ngettext(
                "A pod failed (%(trigger)s), and the policy of the Job restarts the Job (RestartJob). "
                "Volcano restarted it %(n)s time; restart number %(next)s reached maxRetry "
                "%(max)s%(default)s, so the Job is Failed.",
                "A pod failed (%(trigger)s), and the policy of the Job restarts the Job (RestartJob). "
                "Volcano restarted it %(n)s times; restart number %(next)s reached maxRetry "
                "%(max)s%(default)s, so the Job is Failed.",
                f.restarts,
            )
        return Finding("bad", text % values)
    if f.policies:
        p = f.policies[0]
        values = {"trigger": p.trigger, "task": p.scope, "action": p.action}
        if p.scope:
            text = _("A pod failed (%(trigger)s); the policy of task %(task)s answers with %(action)s.")
        else:
            text = _("A pod failed (%(trigger)s); the policy of the Job answers with %(action)s.")
        return Finding("bad", text % values)
    if f.phase == "Failed":
        return Finding(
            "bad",
            ngettext(
                "No policy handles a failed pod, so Volcano does not restart the Job: it is Failed because "
                "%(failed)s pod failed and fewer than minAvailable (%(min)s) can succeed.",
                "No policy handles a failed pod, so Volcano does not restart the Job: it is Failed because "
                "%(failed)s pods failed and fewer than minAvailable (%(min)s) can succeed.",
                f.failed_pods,
            )
            % {"failed": f.failed_pods, "min": f.min_available},
        )
    return None


def _phase_finding(f: Failure) -> Finding | None:
    if f.phase in ("Aborted", "Terminated"):
        action = "AbortJob" if f.phase == "Aborted" else "TerminateJob"
        text = _("The Job was %(phase)s: a Command or a policy asked for %(action)s.") % {
            "phase": f.phase,
            "action": action,
        }
        return Finding("warn", text, verbatim=f.state_message)
    if f.phase == "Completed":
        return Finding(
            "warn",
            _("The Job completed, but %(n)s of its pods failed.") % {"n": f.failed_pods},
        )
    return None


def _no_pods_findings(facts: Any, pods_unreadable: str) -> list[Finding]:
    """What the card says when it has no failed container to show: Pods cannot be read, or the
    Job's pods are gone (not said of an Aborted or Terminated Job, whose pods were released)."""
    if facts.pods_present:
        return []
    if pods_unreadable:
        return [
            Finding(
                "info",
                _("Pods are unavailable (%(why)s), so the failed containers cannot be shown.")
                % {"why": pods_unreadable},
            )
        ]
    if facts.phase in ("Aborted", "Terminated"):
        return []
    return [
        Finding(
            "info",
            _(
                "The Job's pods are gone (Volcano deletes them when it restarts or ends a Job), so "
                "their exit codes cannot be shown here; the Job's events and the logs of new pods may "
                "tell more."
            ),
        )
    ]


def failure_view(
    job: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping],
    deleted: Sequence[PodRecord] = (),
    pods_unreadable: str = "",
) -> FailureView:
    """The "why did it fail" card for ``job`` (empty when the Job did not fail); ``deleted``: the
    records of its deleted pods (Snapshot.deleted_pods_of_job); ``pods_unreadable``: why Pods
    cannot be read (presenters.pending.unreadable_reason), when they cannot: no pod is then
    claimed gone."""
    facts = explain_failure(job, pods, events, deleted)
    view = FailureView()
    if facts is None:
        return view
    for found in (_phase_finding(facts), _policy_finding(facts)):
        if found is not None:
            view.findings.append(found)
    for action in facts.actions:
        view.findings.append(
            Finding("info", _("The job controller: %(message)s") % {"message": action.message})
        )
    terms = list(facts.terminations)
    if terms:
        oom = [t for t in terms if t.oom]
        first = terms[0]
        view.first = first
        view.containers = terms[:TERMINATIONS_LISTED]
        view.more = max(0, len(terms) - TERMINATIONS_LISTED)
        text = _("First failure: container %(container)s of pod %(pod)s ended: %(what)s.") % {
            "container": first.container,
            "pod": first.pod,
            "what": termination_text(first),
        }
        view.findings.append(Finding("bad", text, verbatim=first.message))
        if facts.deleted_pods:
            view.findings.append(
                Finding(
                    "info",
                    _(
                        "The failed pods are gone (Volcano deletes them when it restarts or ends a Job); "
                        "their exit codes come from what the dashboard saw when they were deleted."
                    ),
                )
            )
        if oom:
            view.findings.append(
                Finding(
                    "bad",
                    ngettext(
                        "%(n)s container was killed for using more memory than its limit (OOMKilled): "
                        "raise the memory limit or lower the use.",
                        "%(n)s containers were killed for using more memory than their limit (OOMKilled): "
                        "raise the memory limit or lower the use.",
                        len(oom),
                    )
                    % {"n": len(oom)},
                )
            )
    else:
        view.findings.extend(_no_pods_findings(facts, pods_unreadable))
    if facts.image_pulls:
        view.findings.append(Finding("bad", _("Images could not be pulled:"), items=list(facts.image_pulls)))
    if facts.unschedulable:
        view.findings.append(
            Finding(
                "info",
                _("The scheduler last said the gang could not be placed."),
                verbatim=facts.unschedulable,
            )
        )
    return view


# Deleted pods listed on a Job's page; the rest are counted.
DELETED_PODS_LISTED = 50


@dataclass(frozen=True)
class DeletedPodRow:
    """A row of "pods (deleted)": ``ended`` how its first failed container ended ("" when none
    failed), ``deleted`` when the dashboard saw it go."""

    name: str
    task: str
    phase: str
    node: str
    ended: str
    message: str
    deleted: datetime


def deleted_pod_rows(records: Sequence[PodRecord]) -> tuple[list[DeletedPodRow], int]:
    """The rows (at most DELETED_PODS_LISTED, newest deletion first) and how many more there are."""
    newest = sorted(records, key=lambda r: r.deleted_at, reverse=True)
    rows = []
    for r in newest[:DELETED_PODS_LISTED]:
        failed = r.failed
        first = failed[0] if failed else None
        ended = ""
        if first is not None:
            ended = termination_text(first)
        message = first.message if first else ""
        rows.append(DeletedPodRow(r.name, r.task, r.phase, r.node, ended, message, r.deleted_at))
    return rows, max(0, len(newest) - DELETED_PODS_LISTED)
