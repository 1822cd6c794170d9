"""JobFlows and JobTemplates (flow.volcano.sh/v1alpha1): the dependency graph and its Jobs.

A JobFlow's ``spec.flows[]`` each name a JobTemplate of the flow's namespace (``name``) and may
wait for others (``dependsOn.targets[]``, optionally ``dependsOn.probe``); ``patch.jobSpec``
changes the template for this flow. The JobFlow controller creates one Job per flow, named
``<jobflow>-<flow name>``, owned by the JobFlow and labelled/annotated
``volcano.sh/createdByJobFlow: <namespace>.<jobflow>`` and ``volcano.sh/createdByJobTemplate:
<namespace>.<template>``; a flow's Job is created once every target's Job has Completed.
``status.jobStatusList[]`` records each Job's state, restartCount and runningHistories. Source:
Volcano's jobflow_types.go and pkg/controllers/jobflow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.volcano.objects import as_dict, as_list, as_str, count, label_or_annotation, name, namespace
from dashboard.volcano.objects import spec as spec_of
from dashboard.volcano.objects import status as status_of
from dashboard.volcano.time import parse_time

CREATED_BY_JOBFLOW = "volcano.sh/createdByJobFlow"
CREATED_BY_JOBTEMPLATE = "volcano.sh/createdByJobTemplate"
JOBFLOW_PHASES = ("Pending", "Running", "Succeed", "Terminating", "Failed")
# A dependency is met once the target's Job has completed.
MET_PHASE = "Completed"


@dataclass(frozen=True)
class Flow:
    name: str
    targets: tuple[str, ...]
    probe: bool
    patched: bool


def flows(jf: object) -> list[Flow]:
    out = []
    for raw in as_list(spec_of(jf).get("flows")):
        f = as_dict(raw)
        depends = as_dict(f.get("dependsOn"))
        targets = tuple(as_str(t) for t in as_list(depends.get("targets")) if as_str(t))
        out.append(Flow(as_str(f.get("name")), targets, bool(depends.get("probe")), bool(f.get("patch"))))
    return out


def jobflow_phase(jf: object) -> str:
    """``status.state.phase`` as written, "" when absent."""
    return as_str(as_dict(status_of(jf).get("state")).get("phase"))


def retain_policy(jf: object) -> str:
    """``spec.jobRetainPolicy`` as written ("retain" or "delete"), "" when unset."""
    return as_str(spec_of(jf).get("jobRetainPolicy"))


def flow_job_name(jf: object, flow: str) -> str:
    return f"{name(jf)}-{flow}"


def object_ref(obj: object) -> str:
    """``<namespace>.<name>``: how the created-by labels name a JobFlow or JobTemplate."""
    return f"{namespace(obj)}.{name(obj)}"


def created_by_template(job: object) -> str:
    """The ``<namespace>.<template>`` a Job was made from ("" when none)."""
    return label_or_annotation(job, CREATED_BY_JOBTEMPLATE)


def created_by_jobflow(job: object) -> str:
    return label_or_annotation(job, CREATED_BY_JOBFLOW)


def depths(items: Sequence[Flow]) -> dict[str, int]:
    """Each flow's layer: 0 without targets, else one more than its deepest known target. Targets
    that name no flow are ignored here; a cycle is cut where it is entered."""
    by_name = {f.name: f for f in items}
    out: dict[str, int] = {}
    visiting: set[str] = set()

    def depth(n: str) -> int:
        if n in out:
            return out[n]
        if n in visiting:
            return 0
        visiting.add(n)
        known = [t for t in by_name[n].targets if t in by_name and t != n]
        d = 1 + max((depth(t) for t in known), default=-1)
        visiting.discard(n)
        out[n] = d
        return d

    for f in items:
        depth(f.name)
    return out


def in_cycles(items: Sequence[Flow]) -> set[str]:
    """The flows that depend on themselves, directly (a target naming the flow) or through other
    flows: their dependencies never complete before them, so the JobFlow controller never
    creates their Jobs."""
    by_name = {f.name: f for f in items}
    out: set[str] = set()
    for f in items:
        seen: set[str] = set()
        todo = [t for t in f.targets if t in by_name]
        while todo:
            n = todo.pop()
            if n == f.name:
                out.add(f.name)
                break
            if n in seen:
                continue
            seen.add(n)
            todo.extend(t for t in by_name[n].targets if t in by_name)
    return out


@dataclass(frozen=True)
class Span:
    """One entry of ``runningHistories``: ``state`` from ``start`` to ``end`` (None: ongoing)."""

    state: str
    start: datetime | None
    end: datetime | None


@dataclass(frozen=True)
class FlowStatus:
    """``status.jobStatusList[]`` of one Job: its state, restartCount, start/end and histories."""

    job: str
    state: str
    restarts: int
    start: datetime | None
    end: datetime | None
    history: tuple[Span, ...]


def _span(h: Mapping[str, Any]) -> Span:
    return Span(
        as_str(h.get("state")), parse_time(h.get("startTimestamp")), parse_time(h.get("endTimestamp"))
    )


def job_statuses(jf: object) -> dict[str, FlowStatus]:
    """{Job name: FlowStatus} from ``status.jobStatusList``."""
    out = {}
    for raw in as_list(status_of(jf).get("jobStatusList")):
        e = as_dict(raw)
        job = as_str(e.get("name"))
        if not job:
            continue
        history = tuple(_span(h) for h in (as_dict(x) for x in as_list(e.get("runningHistories"))))
        out[job] = FlowStatus(
            job,
            as_str(e.get("state")),
            count(e.get("restartCount")),
            parse_time(e.get("startTimestamp")),
            parse_time(e.get("endTimestamp")),
            history,
        )
    return out


def unmet(flow: Flow, phase_of_flow: Mapping[str, str]) -> list[str]:
    """The targets of ``flow`` whose Job has not Completed (``phase_of_flow``: flow name -> its
    Job's phase, "" when it has no Job)."""
    return [t for t in flow.targets if phase_of_flow.get(t, "") != MET_PHASE]


def template_refs(jf: object) -> list[str]:
    """The JobTemplate names a JobFlow's flows use, in flow order, without repeats."""
    seen: dict[str, None] = {}
    for f in flows(jf):
        if f.name:
            seen.setdefault(f.name, None)
    return list(seen)


def depends_on_list(jt: object) -> list[str]:
    """A JobTemplate's ``status.jobDependsOnList[]`` (the Jobs made from it)."""
    return [as_str(x) for x in as_list(status_of(jt).get("jobDependsOnList")) if as_str(x)]


def uses_template(jf: object, template: str) -> bool:
    return template in template_refs(jf)


def counted_jobs(jf: object) -> dict[str, list[str]]:
    """The status lists pendingJobs, runningJobs, completedJobs, failedJobs, terminatedJobs and
    unKnowJobs (the spelling of the CRD), each as written."""
    st = status_of(jf)
    keys = ("pendingJobs", "runningJobs", "completedJobs", "failedJobs", "terminatedJobs", "unKnowJobs")
    return {k: [as_str(x) for x in as_list(st.get(k))] for k in keys}


def job_flow_template(job: dict[str, Any]) -> str:
    """The template part of ``created_by_template`` (after the namespace)."""
    ref = created_by_template(job)
    return ref.split(".", 1)[1] if "." in ref else ref
