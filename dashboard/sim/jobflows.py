"""Volcano's JobFlow and JobTemplate controllers (vc-controller-manager), simulated.

Facts from volcano-sh/volcano ``pkg/controllers/jobflow`` and ``pkg/controllers/jobtemplate``:
- each flow becomes the Job ``<jobflow>-<flow name>`` from the JobTemplate named like the flow (same
  namespace), created once every ``dependsOn.targets`` Job is Completed (flows without targets at
  once), with labels and annotations ``volcano.sh/createdByJobFlow: <ns>.<jobflow>`` and
  ``volcano.sh/createdByJobTemplate: <ns>.<template>`` and a controller ownerReference to the JobFlow;
  Normal event ``Created`` ``create a job named <job>!``; a missing JobTemplate stops the flows after
  it (Warning ``SyncJobFlow`` ``SyncJobFlow JobFlow failed for ...``);
- ``flows[].patch.jobSpec`` is merged into the template's spec as Volcano's design describes it
  (docs/design/jobflow/job-template-parameter-overriding.md: tasks, containers, volumes and env by
  name, plugins by key, other fields replaced). Volcano's controller at v1.15 creates the Job from
  the template alone; the simulator applies the patch;
- status: ``pendingJobs/runningJobs/completedJobs/failedJobs/terminatedJobs`` (Job names by phase;
  other phases in ``unKnowJobs``), ``conditions`` (a map Job name -> phase, createTime,
  runningDuration, taskStatusCount), ``jobStatusList[]`` (name, state, startTimestamp = the Job's
  creation, endTimestamp = creation + runningDuration, restartCount = retryCount,
  ``runningHistories[]`` of {startTimestamp, endTimestamp, state}: a new entry on each phase change);
- ``state.phase``: Pending -> Running when a Job runs or completed and none failed; -> Failed when a
  Job Failed or was Terminated; Running -> Succeed when every flow's Job is Completed. Failed and
  Terminating are final for the controller;
- ``jobRetainPolicy: delete`` deletes the flow's Jobs once it Succeeded;
- a JobTemplate's ``status.jobDependsOnList`` lists the Jobs created from it.
"""

from __future__ import annotations

import copy

from .controllers import JOB, _optional_kind, owner_reference
from .jobcontroller import COMPONENT, parse_time
from .store import ApiError

JOBFLOW = _optional_kind("JobFlow", "flow.volcano.sh")
JOBTEMPLATE = _optional_kind("JobTemplate", "flow.volcano.sh")
CREATED_BY_FLOW = "volcano.sh/createdByJobFlow"
CREATED_BY_TEMPLATE = "volcano.sh/createdByJobTemplate"
PHASE_LISTS = {
    "Pending": "pendingJobs",
    "Running": "runningJobs",
    "Completed": "completedJobs",
    "Failed": "failedJobs",
    "Terminated": "terminatedJobs",
}
KNOWN_PHASES = (*PHASE_LISTS, "Completing", "Terminating")


def flow_job_name(jobflow: str, flow: str) -> str:
    return f"{jobflow}-{flow}"


# ---------------------------------------------------------------------- patch merging
def _merge_list(base: list, patch: list, key: str, merge_item) -> list:
    out = [copy.deepcopy(x) for x in base]
    index = {x.get(key): i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) is not None}
    for item in patch:
        if isinstance(item, dict) and item.get(key) in index:
            i = index[item[key]]
            out[i] = merge_item(out[i], item)
        else:
            out.append(copy.deepcopy(item))
    return out


def _replace(_old: dict, new: dict) -> dict:
    return copy.deepcopy(new)


def _merge_container(base: dict, patch: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if k == "env":
            out[k] = _merge_list(out.get(k) or [], v or [], "name", _replace)
        elif k == "ports":
            out[k] = _merge_list(out.get(k) or [], v or [], "containerPort", _replace)
        elif k == "volumeMounts":
            out[k] = _merge_list(out.get(k) or [], v or [], "name", _replace)
        elif k == "resources" and isinstance(v, dict):
            res = out.setdefault("resources", {})
            for part, values in v.items():
                res[part] = {**(res.get(part) or {}), **(values or {})}
        else:
            out[k] = copy.deepcopy(v)
    return out


def _merge_pod_spec(base: dict, patch: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if k in ("containers", "initContainers"):
            out[k] = _merge_list(out.get(k) or [], v or [], "name", _merge_container)
        elif k == "volumes":
            out[k] = _merge_list(out.get(k) or [], v or [], "name", _replace)
        elif k == "tolerations":
            out[k] = _merge_list(out.get(k) or [], v or [], "key", _replace)
        elif k == "hostAliases":
            out[k] = _merge_list(out.get(k) or [], v or [], "ip", _replace)
        elif k == "nodeSelector":
            out[k] = {**(out.get(k) or {}), **(v or {})}
        else:
            out[k] = copy.deepcopy(v)
    return out


def _merge_task(base: dict, patch: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if k == "template" and isinstance(v, dict):
            tmpl = out.setdefault("template", {})
            for part, value in v.items():
                if part == "spec":
                    tmpl["spec"] = _merge_pod_spec(tmpl.get("spec") or {}, value or {})
                elif part == "metadata":
                    meta = tmpl.setdefault("metadata", {})
                    for mk, mv in (value or {}).items():
                        meta[mk] = {**(meta.get(mk) or {}), **mv} if isinstance(mv, dict) else mv
                else:
                    tmpl[part] = copy.deepcopy(value)
        else:
            out[k] = copy.deepcopy(v)
    return out


def merge_job_spec(base: dict, patch: dict) -> dict:
    """The template's JobSpec with a flow's ``patch.jobSpec`` merged in (see the module docstring)."""
    out = copy.deepcopy(base)
    for k, v in (patch or {}).items():
        if k == "tasks":
            out[k] = _merge_list(out.get(k) or [], v or [], "name", _merge_task)
        elif k == "volumes":
            out[k] = _merge_list(out.get(k) or [], v or [], "mountPath", _replace)
        elif k == "plugins" and isinstance(v, dict):
            out[k] = {**(out.get(k) or {}), **copy.deepcopy(v)}
        else:
            out[k] = copy.deepcopy(v)
    return out


# ---------------------------------------------------------------------- the controllers
class JobFlowController:
    """Syncs dirty JobFlows (added, an owned Job changed, a JobTemplate appeared) and JobTemplates."""

    def __init__(self, controllers) -> None:
        self.c = controllers
        self.dirty: dict[tuple[str, str], None] = {}
        self.dirty_templates: dict[tuple[str, str], None] = {}
        self._histories: dict[str, list[dict]] = {}

    def sync(self) -> None:
        if JOBFLOW is None:
            return
        dirty, self.dirty = self.dirty, {}
        for key in dirty:
            self.c.guard(f"jobflow {key[0]}/{key[1]}", self._sync, key)
        dirty_t, self.dirty_templates = self.dirty_templates, {}
        for key in dirty_t:
            self.c.guard(f"jobtemplate {key[0]}/{key[1]}", self._sync_template, key)

    def _flow_jobs(self, namespace: str, name: str) -> list[dict]:
        items, _ = self.c.store.list(JOB, namespace, label_selector=f"{CREATED_BY_FLOW}={namespace}.{name}")
        return items

    def _sync(self, key: tuple[str, str]) -> None:
        c = self.c
        jobflow = c.store.try_get(JOBFLOW, *key)
        if jobflow is None or jobflow["metadata"].get("deletionTimestamp"):
            return
        spec = jobflow.get("spec") or {}
        old_status = jobflow.get("status") or {}
        phase = (old_status.get("state") or {}).get("phase") or ""
        if phase in ("Failed", "Terminating"):
            return
        if spec.get("jobRetainPolicy") == "delete" and phase == "Succeed":
            for job in self._flow_jobs(*key):
                c.store.delete(JOB, key[0], job["metadata"]["name"])
            return
        self._deploy(jobflow, spec)
        status = self._status(jobflow, old_status)
        flows = len(spec.get("flows") or [])
        if phase in ("", "Pending"):
            if (status.get("runningJobs") or status.get("completedJobs")) and not status.get("failedJobs"):
                phase = "Running"
            elif status.get("failedJobs") or status.get("terminatedJobs"):
                phase = "Failed"
            else:
                phase = "Pending"
        elif phase == "Running":
            if len(status.get("completedJobs") or []) == flows:
                phase = "Succeed"
            elif status.get("failedJobs") or status.get("terminatedJobs"):
                phase = "Failed"
        status["state"] = {"phase": phase}
        if status != old_status:
            c.store.mutate(JOBFLOW, key[0], key[1], lambda obj: obj.__setitem__("status", status))
            if phase == "Succeed" and spec.get("jobRetainPolicy") == "delete":
                self.dirty[key] = None

    def _deploy(self, jobflow: dict, spec: dict) -> None:
        md = jobflow["metadata"]
        namespace = md["namespace"]
        for flow in spec.get("flows") or []:
            name = flow_job_name(md["name"], flow.get("name", ""))
            if self.c.store.try_get(JOB, namespace, name) is not None:
                continue
            targets = (flow.get("dependsOn") or {}).get("targets")
            if targets:
                ready = True
                for target in targets:
                    job = self.c.store.try_get(JOB, namespace, flow_job_name(md["name"], target))
                    if ((job or {}).get("status") or {}).get("state", {}).get("phase") != "Completed":
                        ready = False
                        break
                if not ready:
                    continue
            if not self._create(jobflow, flow, name):
                return

    def _create(self, jobflow: dict, flow: dict, name: str) -> bool:
        md = jobflow["metadata"]
        namespace = md["namespace"]
        template_name = flow.get("name", "")
        template = self.c.store.try_get(JOBTEMPLATE, namespace, template_name)
        if template is None:
            self.c.events.record(
                jobflow,
                "Warning",
                "SyncJobFlow",
                f'SyncJobFlow JobFlow failed for jobtemplate.flow.volcano.sh "{template_name}" not found',
                COMPONENT,
            )
            return False
        job_spec = template.get("spec") or {}
        patch = (flow.get("patch") or {}).get("jobSpec")
        if patch:
            job_spec = merge_job_spec(job_spec, patch)
        marks = {
            CREATED_BY_TEMPLATE: f"{namespace}.{template_name}",
            CREATED_BY_FLOW: f"{namespace}.{md['name']}",
        }
        body = {
            "apiVersion": JOB.api_version,
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": dict(marks),
                "annotations": dict(marks),
                "ownerReferences": [owner_reference(jobflow)],
            },
            "spec": copy.deepcopy(job_spec),
        }
        try:
            self.c.store.create(JOB, body, namespace)
        except ApiError as exc:
            if exc.code == 409:
                return True
            self.c.events.record(
                jobflow, "Warning", "SyncJobFlow", f"SyncJobFlow JobFlow failed for {exc.message}", COMPONENT
            )
            return False
        self.c.events.record(jobflow, "Normal", "Created", f"create a job named {name}!", COMPONENT)
        self.dirty_templates[(namespace, template_name)] = None
        return True

    def _status(self, jobflow: dict, old: dict) -> dict:
        md = jobflow["metadata"]
        order = {
            flow_job_name(md["name"], f.get("name", "")): i
            for i, f in enumerate((jobflow.get("spec") or {}).get("flows") or [])
        }
        jobs = sorted(
            self._flow_jobs(md["namespace"], md["name"]),
            key=lambda j: (order.get(j["metadata"]["name"], 1 << 30), j["metadata"]["name"]),
        )
        stamp = self.c.stamp()
        status: dict = {}
        conditions: dict = {}
        status_list = copy.deepcopy(old.get("jobStatusList") or [])
        for job in jobs:
            jmd = job["metadata"]
            jst = job.get("status") or {}
            phase = (jst.get("state") or {}).get("phase") or ""
            field = PHASE_LISTS.get(phase)
            if field is not None:
                status.setdefault(field, []).append(jmd["name"])
            elif phase not in KNOWN_PHASES:
                status.setdefault("unKnowJobs", []).append(jmd["name"])
            cond: dict = {"phase": phase, "createTime": jmd.get("creationTimestamp")}
            if jst.get("runningDuration"):
                cond["runningDuration"] = jst["runningDuration"]
            if jst.get("taskStatusCount"):
                cond["taskStatusCount"] = jst["taskStatusCount"]
            conditions[jmd["name"]] = {k: v for k, v in cond.items() if v}
            entry: dict = {"name": jmd["name"], "startTimestamp": jmd.get("creationTimestamp")}
            if phase:
                entry["state"] = phase
            end = self._end(jmd.get("creationTimestamp"), jst.get("runningDuration"))
            if end:
                entry["endTimestamp"] = end
            if jst.get("retryCount"):
                entry["restartCount"] = jst["retryCount"]
            previous = next((e for e in status_list if e.get("name") == jmd["name"]), None)
            histories = copy.deepcopy((previous or {}).get("runningHistories") or [])
            if histories and histories[-1].get("state") != phase:
                histories[-1]["endTimestamp"] = stamp
                histories.append({"startTimestamp": stamp, "state": phase})
            elif not histories and phase:
                histories.append({"startTimestamp": stamp, "state": phase})
            if histories:
                entry["runningHistories"] = histories
            entry = {k: v for k, v in entry.items() if v is not None}
            if previous is not None:
                status_list[status_list.index(previous)] = entry
            else:
                status_list.append(entry)
        if status_list:
            status["jobStatusList"] = status_list
        if conditions:
            status["conditions"] = conditions
        return status

    @staticmethod
    def _end(created: str | None, running: str | None) -> str | None:
        start = parse_time(created)
        seconds = go_seconds(running)
        if start is None or seconds is None:
            return None
        from .events import rfc3339

        return rfc3339(start + seconds)

    def _sync_template(self, key: tuple[str, str]) -> None:
        template = self.c.store.try_get(JOBTEMPLATE, *key)
        if template is None:
            return
        items, _ = self.c.store.list(JOB, key[0], label_selector=f"{CREATED_BY_TEMPLATE}={key[0]}.{key[1]}")
        if not items:
            return
        names = [j["metadata"]["name"] for j in items]
        if (template.get("status") or {}).get("jobDependsOnList") != names:
            self.c.store.mutate(
                JOBTEMPLATE,
                key[0],
                key[1],
                lambda obj: obj.setdefault("status", {}).__setitem__("jobDependsOnList", names),
            )


def go_seconds(value: str | None) -> float | None:
    """Seconds in a Go duration string ("1h2m3.5s", "250ms"), or None."""
    if not value:
        return None
    import re

    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    parts = re.findall(r"([0-9.]+)(ms|us|µs|ns|h|m|s)", value)
    if not parts or "".join(n + u for n, u in parts) != value.lstrip("-"):
        return None
    total = sum(float(n) * units[u] for n, u in parts)
    return -total if value.startswith("-") else total
