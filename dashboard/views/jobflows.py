"""JobFlow and JobTemplate pages: their lists and detail pages (fragment ``status``)."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_safe

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import jobflows as pf
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.jobspec import job_spec_view
from dashboard.presenters.pending import unreadable_reason
from dashboard.presenters.phases import Phase
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.listing import ListSpec, list_page
from dashboard.views.notices import page_ctx
from dashboard.views.rows import events_of, yaml_text
from dashboard.volcano import jobflows as vf
from dashboard.volcano import objects, phases
from dashboard.volcano.events import event_records
from dashboard.volcano.time import created_at

FLOW_KINDS = ("jobflows", "jobs")
FLOW_DETAIL_KINDS = (*FLOW_KINDS, "jobtemplates", "events")
TEMPLATE_KINDS = ("jobtemplates", "jobflows", "jobs")


def _created(o: dict) -> str:
    value = objects.meta(o).get("creationTimestamp")
    return value if isinstance(value, str) else ""


def flow_jobs(snap: Snapshot, jf: dict) -> dict[str, dict]:
    """{flow name: its Job} by the name rule ``<jobflow>-<flow>``, the Job's owner being this
    JobFlow when it names one."""
    ns, uid = objects.namespace(jf), objects.uid(jf)
    out = {}
    for f in vf.flows(jf):
        job = snap.jobs.get(ns, vf.flow_job_name(jf, f.name))
        if job is None:
            continue
        owners = objects.owner_uids(job)
        if uid and owners and uid not in owners:
            continue
        out[f.name] = job
    return out


def _flow_row(snap: Snapshot, jf: dict, now: datetime) -> dict[str, Any]:
    items = vf.flows(jf)
    jobs = flow_jobs(snap, jf)
    done = sum(1 for j in jobs.values() if phases.job_phase(j) == vf.MET_PHASE)
    return {
        "name": objects.name(jf),
        "namespace": objects.namespace(jf),
        "phase": pf.jobflow_badge(jf),
        "flows": len(items),
        "jobs": len(jobs),
        "completed": done,
        "retain": vf.retain_policy(jf),
        "created": created_at(jf),
    }


JOBFLOW_LIST = ListSpec(
    kind="jobflows",
    nav="jobflows",
    template="dashboard/jobflows.html",
    kinds=FLOW_KINDS,
    depends=("jobflows", "jobs"),
    in_queue=lambda snap, queue: [],
    sorts={"name": objects.name, "namespace": objects.namespace, "phase": vf.jobflow_phase, "age": _created},
    known_phases=frozenset(vf.JOBFLOW_PHASES),
    phase_order=vf.JOBFLOW_PHASES,
    phase_name=vf.jobflow_phase,
    phase=pf.badge_of_card,
    queue_of=lambda jf: "",
    row=_flow_row,
)


@require_safe
def jobflows(request: HttpRequest) -> HttpResponse:
    return list_page(request, JOBFLOW_LIST)


_NO_JOB = gettext_noop("no Job yet")
_NO_TEMPLATE = gettext_noop("JobTemplate missing — will never run")


def _flow_state(snap: Snapshot, jf: dict, jobs: dict[str, dict]) -> dict[str, tuple[str, str, str, bool]]:
    """{flow: (state text, tone, Job name, Job exists)}. A flow without a Job whose JobTemplate
    (named as the flow, in the JobFlow's namespace) is not in a synced cache never gets one: the
    controller's SyncJobFlow fails with 'jobtemplate "<flow>" not found'."""
    statuses = vf.job_statuses(jf)
    ns = objects.namespace(jf)
    templates_known = snap.jobtemplates.state.name == "synced"
    out = {}
    for f in vf.flows(jf):
        job_name = vf.flow_job_name(jf, f.name)
        job = jobs.get(f.name)
        if job is not None:
            badge = badges.job_phase(job)
            out[f.name] = (phases.job_phase(job), badge.tone, job_name, True)
        elif job_name in statuses and statuses[job_name].state:
            badge = badges.phase_of_table(badges.JOB_PHASES, statuses[job_name].state)
            out[f.name] = (statuses[job_name].state, badge.tone, job_name, False)
        elif templates_known and snap.jobtemplate(ns, f.name) is None:
            out[f.name] = (_(_NO_TEMPLATE), "bad", job_name, False)
        else:
            out[f.name] = (_(_NO_JOB), "muted", job_name, False)
    return out


@require_safe
def jobflow_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "jobflows", _("JobFlow"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, jf = found
    now = reference_now(snap)
    jobs = flow_jobs(snap, jf)
    events = cache(lambda: events_of(snap, jf))
    states = kind_states(snap, *FLOW_DETAIL_KINDS)
    frags = Fragments(
        request,
        snap,
        now,
        FLOW_DETAIL_KINDS,
        status=lambda: version_key(
            resource_versions([jf, *jobs.values()]), snap.jobtemplates.version, states, bucket(now)
        ),
        events=lambda: version_key(resource_versions(events()), states),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, FLOW_DETAIL_KINDS, "jobflows")
    phase = pf.jobflow_badge(jf)
    ctx.update({"jf": jf, "name": name, "namespace": namespace, "phase": phase, "live": not phase.final})
    if frags.want("status"):
        ctx.update(_flow_ctx(snap, jf, jobs, now))
    if frags.want("events"):
        ctx["events"] = event_records(events(), 100)
        ctx["events_blocked"] = bool(unreadable_reason(snap.events.state))
    if frags.asked is None:
        ctx["labels"] = sorted(objects.labels(jf).items())
        ctx["yaml"] = yaml_text(jf)
    return frags.respond("dashboard/jobflow_detail.html", ctx)


def _flow_ctx(snap: Snapshot, jf: dict, jobs: dict[str, dict], now: datetime) -> dict[str, Any]:
    items = vf.flows(jf)
    state = _flow_state(snap, jf, jobs)
    phase_of_flow = {f: s[0] if s[3] else "" for f, s in state.items()}
    statuses = vf.job_statuses(jf)
    ns = objects.namespace(jf)
    cyclic = vf.in_cycles(items)
    rows = []
    for f in items:
        job_name = vf.flow_job_name(jf, f.name)
        job = jobs.get(f.name)
        st = statuses.get(job_name)
        rows.append(
            {
                "flow": f,
                "template": snap.jobtemplate(ns, f.name),
                "job_name": job_name,
                "job": job,
                "phase": badges.job_phase(job) if job else None,
                "recorded": st.state if st else "",
                "unmet": vf.unmet(f, phase_of_flow),
                "in_cycle": f.name in cyclic,
                "restarts": st.restarts if st else None,
            }
        )
    ordered = [statuses[k] for k in sorted(statuses)]
    return {
        "graph": pf.flow_graph(items, state),
        "rows": rows,
        "cyclic": sorted(cyclic),
        "retain": vf.retain_policy(jf),
        "timeline": pf.timeline(ordered, now),
        "counted": [(k, v) for k, v in vf.counted_jobs(jf).items() if v],
        "templates_blocked": snap.jobtemplates.state.name in ("forbidden", "not_installed"),
    }


def _template_row(snap: Snapshot, jt: dict, now: datetime) -> dict[str, Any]:
    sp = objects.spec(jt)
    return {
        "name": objects.name(jt),
        "namespace": objects.namespace(jt),
        "tasks": len(objects.as_list(sp.get("tasks"))),
        "queue": objects.as_str(sp.get("queue")),
        "min_available": sp.get("minAvailable"),
        "flows": len(template_flows(snap, jt)),
        "created": created_at(jt),
    }


def _no_phase(_obj: dict) -> str:
    return ""


def _no_badge(_obj: dict) -> Phase:
    return badges.phase_of_table({}, "")


JOBTEMPLATE_LIST = ListSpec(
    kind="jobtemplates",
    nav="jobtemplates",
    template="dashboard/jobtemplates.html",
    kinds=TEMPLATE_KINDS,
    depends=("jobtemplates", "jobflows"),
    in_queue=lambda snap, queue: [],
    sorts={"name": objects.name, "namespace": objects.namespace, "age": _created},
    known_phases=frozenset(),
    phase_order=(),
    phase_name=_no_phase,
    phase=_no_badge,
    queue_of=lambda jt: objects.as_str(objects.spec(jt).get("queue")),
    row=_template_row,
)


@require_safe
def jobtemplates(request: HttpRequest) -> HttpResponse:
    return list_page(request, JOBTEMPLATE_LIST)


def template_flows(snap: Snapshot, jt: dict) -> list[dict]:
    """The JobFlows of the template's namespace with a flow naming it."""
    ns, name = objects.namespace(jt), objects.name(jt)
    return [jf for jf in snap.jobflows.in_namespace(ns) if vf.uses_template(jf, name)]


def template_jobs(snap: Snapshot, jt: dict) -> list[dict]:
    """The Jobs of the template's namespace labelled as created from it."""
    ref = vf.object_ref(jt)
    return [j for j in snap.jobs.in_namespace(objects.namespace(jt)) if vf.created_by_template(j) == ref]


@require_safe
def jobtemplate_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "jobtemplates", _("JobTemplate"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, jt = found
    now = reference_now(snap)
    states = kind_states(snap, *TEMPLATE_KINDS)
    frags = Fragments(
        request,
        snap,
        now,
        TEMPLATE_KINDS,
        status=lambda: version_key(
            resource_versions([jt]), snap.jobflows.version, snap.jobs.version, states, bucket(now)
        ),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, TEMPLATE_KINDS, "jobtemplates")
    ctx.update({"jt": jt, "name": name, "namespace": namespace})
    if frags.want("status"):
        jobs = template_jobs(snap, jt)
        ctx.update(
            {
                "js": job_spec_view(objects.spec(jt)),
                "flows": template_flows(snap, jt),
                "jobs": [(j, badges.job_phase(j)) for j in jobs],
                "depends_on": vf.depends_on_list(jt),
                "jobs_blocked": snap.jobs.state.name in ("forbidden", "not_installed"),
                "flows_blocked": snap.jobflows.state.name in ("forbidden", "not_installed"),
            }
        )
    if frags.asked is None:
        ctx["labels"] = sorted(objects.labels(jt).items())
        ctx["yaml"] = yaml_text(jt)
    return frags.respond("dashboard/jobtemplate_detail.html", ctx)
