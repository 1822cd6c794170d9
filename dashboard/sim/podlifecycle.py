"""The kubelet, simulated: pod lifecycle with durations, container states and kubelet events.

A bound pod goes Pending (ContainerCreating, image pull) -> Running -> Succeeded/Failed, with
``containerStatuses`` (ready, started, restartCount, state/lastState), pod conditions, and the
kubelet's events (Pulling, Pulled, Created, Started, BackOff, Failed, Killing).

Behaviour per pod comes from annotations, first on the pod (its task template), then on the owning
Volcano Job (values are case-insensitive):

- ``sim.volcano-ui/behaviour``: ``succeed`` (default), ``fail`` (exits non-zero once it has run),
  ``crashloop`` (exits non-zero after a few seconds, every time), ``imagepullbackoff`` (the image
  never pulls), ``run`` (runs until deleted);
- ``sim.volcano-ui/duration``: seconds a container runs before it exits (default: drawn from the
  seeded generator, 60-180 s; 4-8 s for ``crashloop``);
- ``sim.volcano-ui/exit-code``: exit code for ``fail``/``crashloop`` (default 1);
- ``sim.volcano-ui/pull-seconds``: image pull time (default 2-6 s);
- ``sim.volcano-ui/stuck-terminating: "true"``: once deleted, the pod stays Terminating forever (its
  containers never stop), which keeps its Job in Aborting/Restarting/Completing/Terminating.

Container restarts follow ``restartPolicy`` with the kubelet's back-off (10 s doubling, 300 s cap);
``Never`` turns a non-zero exit into a Failed pod, ``Always`` restarts even after exit 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .controllers import FINISHED, JOB, POD, PodInfo
from .store import ApiError

BEHAVIOUR = "sim.volcano-ui/behaviour"
DURATION = "sim.volcano-ui/duration"
EXIT_CODE = "sim.volcano-ui/exit-code"
PULL_SECONDS = "sim.volcano-ui/pull-seconds"
STUCK = "sim.volcano-ui/stuck-terminating"
BEHAVIOURS = ("succeed", "fail", "crashloop", "imagepullbackoff", "run")
_ALIASES = {
    "imagepull": "imagepullbackoff",
    "errimagepull": "imagepullbackoff",
    "forever": "run",
    "crash": "crashloop",
    "crashloopbackoff": "crashloop",
    "success": "succeed",
}
COMPONENT = "kubelet"
# Keeps a deleted pod visible (Terminating) until its containers have stopped; see terminate().
FINALIZER = "sim.volcano-ui/kubelet-termination"
CONDITION_ORDER = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


@dataclass
class Run:
    uid: str
    namespace: str
    name: str
    behaviour: str
    duration: float
    exit_code: int
    pull_seconds: float
    restart_policy: str
    restarts: int = 0
    pull_attempts: int = 0
    started_at: str = ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def set_condition(
    conditions: list[dict],
    type_: str,
    status: str,
    stamp: str,
    reason: str | None = None,
    message: str | None = None,
) -> list[dict]:
    """Set one pod condition, keeping lastTransitionTime when the status does not change."""
    by_type = {c.get("type"): c for c in conditions}
    old = by_type.get(type_)
    cond = {
        "type": type_,
        "status": status,
        "lastProbeTime": None,
        "lastTransitionTime": old.get("lastTransitionTime") if old and old.get("status") == status else stamp,
    }
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    by_type[type_] = cond
    ordered = [by_type[t] for t in CONDITION_ORDER if t in by_type]
    ordered += [c for t, c in by_type.items() if t not in CONDITION_ORDER]
    for c in ordered:
        if c.get("lastProbeTime") is None:
            c.pop("lastProbeTime", None)
    return ordered


def _containers_not_ready(conditions: list[dict], stamp: str, names: str) -> list[dict]:
    """Ready and ContainersReady False with the kubelet's ContainersNotReady reason and message."""
    message = f"containers with unready status: [{names}]"
    for type_ in ("Ready", "ContainersReady"):
        conditions = set_condition(conditions, type_, "False", stamp, "ContainersNotReady", message)
    return conditions


class Kubelet:
    def __init__(self, controllers) -> None:
        self.c = controllers
        self.runs: dict[str, Run] = {}

    # ------------------------------------------------------------------ hooks from the indexes
    def observe(self, pod: PodInfo, obj: dict) -> None:
        if pod.deleting or pod.phase in FINISHED or not pod.node or pod.uid in self.runs:
            return
        run = self._new_run(pod, obj)
        self.runs[pod.uid] = run
        statuses = (obj.get("status") or {}).get("containerStatuses") or []
        if pod.phase == "Running":
            # Adopted mid-run (a replay or a generated cluster): finish after the remaining time.
            restarts = max([cs.get("restartCount") or 0 for cs in statuses] or [0])
            run.restarts = restarts
            started = parse_started(statuses)
            elapsed = max(0.0, self.c.now() - started) if started is not None else 0.0
            if run.behaviour != "run":
                self.c.after(max(1.0, run.duration - elapsed), self._exit, pod.uid)
        elif statuses and any(
            (cs.get("state") or {}).get("waiting", {}).get("reason")
            in ("ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff")
            for cs in statuses
        ):
            self.c.after(
                1.0, self._creating, pod.uid
            ) if run.behaviour != "imagepullbackoff" else self.c.after(10.0, self._pull_retry, pod.uid)
        else:
            self.c.after(1.0, self._creating, pod.uid)

    def forget(self, pod: PodInfo) -> None:
        self.runs.pop(pod.uid, None)

    def terminate(self, pod: PodInfo, *, out_of_sync: bool = True) -> None:
        """Delete a pod the way the API server and kubelet do: a bound, unfinished pod first gets a
        deletionTimestamp (Terminating) and a Killing event, and is removed once its containers stop.

        The simulated store has no grace periods, so the pod carries the finalizer ``FINALIZER``
        while its containers stop; removing it completes the deletion.
        """
        c = self.c
        if pod.deleting:
            return
        if not pod.node or pod.phase in FINISHED:
            c.delete("Pod", pod.namespace, pod.name)
            return

        def mark(obj: dict) -> None:
            md = obj["metadata"]
            finalizers = md.setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            if out_of_sync:
                md.setdefault("annotations", {})["volcano.sh/controller-out-of-sync"] = "true"

        try:
            c.write("Pod", pod.namespace, pod.name, mark)
            obj = c.store.delete(POD, pod.namespace, pod.name)
        except ApiError:
            return
        c.observe("Pod", "MODIFIED", obj, own=True)
        self.runs.pop(pod.uid, None)
        for container in (obj.get("spec") or {}).get("containers") or []:
            self._event(
                obj,
                "Normal",
                "Killing",
                f"Stopping container {container.get('name', '')}",
                container.get("name"),
            )
        if str(((obj.get("metadata") or {}).get("annotations") or {}).get(STUCK, "")).lower() == "true":
            return  # the containers never stop: Terminating until someone removes the finalizer
        stop = 1.0 + c.pod_rng(pod.namespace, pod.name, "stop").random() * 2.0
        c.after(stop, self._remove, pod.uid, pod.namespace, pod.name)

    def _remove(self, uid: str, namespace: str, name: str) -> None:
        pod = self.c.pods.get((namespace, name))
        if pod is None or pod.uid != uid:
            return

        def release(obj: dict) -> None:
            md = obj["metadata"]
            md["finalizers"] = [f for f in md.get("finalizers") or [] if f != FINALIZER]
            if not md["finalizers"]:
                del md["finalizers"]

        try:
            obj = self.c.store.mutate(POD, namespace, name, release)
        except ApiError:
            return
        # With no finalizer left the store completes the deletion.
        gone = not (obj.get("metadata") or {}).get("finalizers")
        self.c.observe("Pod", "DELETED" if gone else "MODIFIED", obj, own=True)

    # ------------------------------------------------------------------ behaviour
    def _new_run(self, pod: PodInfo, obj: dict) -> Run:
        annotations = dict((obj.get("metadata") or {}).get("annotations") or {})
        job_key = self.c.jobs_by_uid.get(pod.owner_uid)
        if job_key is not None and not all(k in annotations for k in (BEHAVIOUR, DURATION)):
            job = self.c.store.peek(JOB, *job_key)
            if job is not None:
                for key, value in ((job.get("metadata") or {}).get("annotations") or {}).items():
                    annotations.setdefault(key, value)
        rng = self.c.pod_rng(pod.namespace, pod.name, annotations.get("volcano.sh/job-version", ""))
        behaviour = str(annotations.get(BEHAVIOUR, "succeed")).strip().lower()
        behaviour = _ALIASES.get(behaviour, behaviour)
        if behaviour not in BEHAVIOURS:
            behaviour = "succeed"
        default_duration = rng.uniform(4, 8) if behaviour == "crashloop" else rng.uniform(60, 180)
        duration = _float(annotations.get(DURATION), default_duration)
        exit_code = int(_float(annotations.get(EXIT_CODE), 1)) or 1
        pull = _float(annotations.get(PULL_SECONDS), rng.uniform(2, 6))
        policy = (obj.get("spec") or {}).get("restartPolicy") or "Always"
        return Run(
            pod.uid, pod.namespace, pod.name, behaviour, max(1.0, duration), exit_code, max(0.5, pull), policy
        )

    def _live(self, uid: str) -> tuple[Run, dict] | None:
        run = self.runs.get(uid)
        if run is None:
            return None
        pod = self.c.pods.get((run.namespace, run.name))
        if pod is None or pod.uid != uid or pod.deleting:
            self.runs.pop(uid, None)
            return None
        obj = self.c.store.peek(POD, run.namespace, run.name)  # read-only: the steps write via copies
        if obj is None:
            self.runs.pop(uid, None)
            return None
        return run, obj

    def _event(self, obj: dict, type_: str, reason: str, message: str, container: str | None = None) -> None:
        node = (obj.get("spec") or {}).get("nodeName") or ""
        self.c.events.record(
            obj,
            type_,
            reason,
            message,
            COMPONENT,
            host=node,
            field_path=f"spec.containers{{{container}}}" if container else None,
        )

    def _write_status(self, run: Run, fn) -> dict | None:
        try:
            return self.c.write("Pod", run.namespace, run.name, fn)
        except ApiError:
            self.runs.pop(run.uid, None)
            return None

    def _container_status(
        self,
        container: dict,
        run: Run,
        state: dict,
        *,
        ready: bool,
        started: bool,
        last_state: dict | None = None,
        pulled: bool = True,
    ) -> dict:
        image = container.get("image", "")
        status = {
            "name": container.get("name", ""),
            "image": image,
            "imageID": f"{image.split(':')[0]}@sha256:{_digest(image)}" if pulled else "",
            "ready": ready,
            "restartCount": run.restarts,
            "started": started,
            "state": state,
            "lastState": last_state or {},
        }
        if pulled and (started or "terminated" in state or "running" in state):
            status["containerID"] = (
                f"containerd://{_digest(run.uid + container.get('name', '') + str(run.restarts))}"
            )
        return status

    # ------------------------------------------------------------------ steps
    def _creating(self, uid: str) -> None:
        live = self._live(uid)
        if live is None:
            return
        run, obj = live
        stamp = self.c.stamp()
        node = (obj.get("spec") or {}).get("nodeName") or ""
        containers = (obj.get("spec") or {}).get("containers") or []
        names = ", ".join(c.get("name", "") for c in containers)

        def fn(o: dict) -> None:
            st = o.setdefault("status", {})
            st["phase"] = "Pending"
            st["hostIP"] = _node_ip(node)
            st["hostIPs"] = [{"ip": st["hostIP"]}]
            st.setdefault("startTime", stamp)
            conds = st.get("conditions") or []
            conds = set_condition(conds, "PodReadyToStartContainers", "True", stamp)
            conds = set_condition(conds, "Initialized", "True", stamp)
            conds = _containers_not_ready(conds, stamp, names)
            conds = set_condition(conds, "PodScheduled", "True", stamp)
            st["conditions"] = conds
            st["containerStatuses"] = [
                self._container_status(
                    c,
                    run,
                    {"waiting": {"reason": "ContainerCreating"}},
                    ready=False,
                    started=False,
                    pulled=False,
                )
                for c in containers
            ]

        if self._write_status(run, fn) is None:
            return
        for c in containers:
            self._event(obj, "Normal", "Pulling", f'Pulling image "{c.get("image", "")}"', c.get("name"))
        if run.behaviour == "imagepullbackoff":
            self.c.after(run.pull_seconds, self._pull_failed, uid)
        else:
            self.c.after(run.pull_seconds, self._start, uid, True)

    def _pull_failed(self, uid: str) -> None:
        live = self._live(uid)
        if live is None:
            return
        run, obj = live
        containers = (obj.get("spec") or {}).get("containers") or []
        run.pull_attempts += 1

        def fn(o: dict) -> None:
            st = o.setdefault("status", {})
            st["containerStatuses"] = [
                self._container_status(
                    c,
                    run,
                    {"waiting": {"reason": "ErrImagePull", "message": _pull_error(c.get("image", ""))}},
                    ready=False,
                    started=False,
                    pulled=False,
                )
                for c in containers
            ]

        if self._write_status(run, fn) is None:
            return
        for c in containers:
            image = c.get("image", "")
            self._event(
                obj,
                "Warning",
                "Failed",
                f'Failed to pull image "{image}": {_pull_error(image)}',
                c.get("name"),
            )
            self._event(obj, "Warning", "Failed", "Error: ErrImagePull", c.get("name"))
        self.c.after(1.0, self._pull_backoff, uid)

    def _pull_backoff(self, uid: str) -> None:
        live = self._live(uid)
        if live is None:
            return
        run, obj = live
        containers = (obj.get("spec") or {}).get("containers") or []

        def fn(o: dict) -> None:
            st = o.setdefault("status", {})
            st["containerStatuses"] = [
                self._container_status(
                    c,
                    run,
                    {
                        "waiting": {
                            "reason": "ImagePullBackOff",
                            "message": f'Back-off pulling image "{c.get("image", "")}": ErrImagePull: '
                            f"{_pull_error(c.get('image', ''))}",
                        }
                    },
                    ready=False,
                    started=False,
                    pulled=False,
                )
                for c in containers
            ]

        if self._write_status(run, fn) is None:
            return
        for c in containers:
            self._event(
                obj, "Normal", "BackOff", f'Back-off pulling image "{c.get("image", "")}"', c.get("name")
            )
            self._event(obj, "Warning", "Failed", "Error: ImagePullBackOff", c.get("name"))
        self.c.after(_backoff(run.pull_attempts), self._pull_retry, uid)

    def _pull_retry(self, uid: str) -> None:
        live = self._live(uid)
        if live is None:
            return
        run, obj = live
        for c in (obj.get("spec") or {}).get("containers") or []:
            self._event(obj, "Normal", "Pulling", f'Pulling image "{c.get("image", "")}"', c.get("name"))
        self.c.after(run.pull_seconds, self._pull_failed, uid)

    def _start(self, uid: str, first: bool) -> None:
        live = self._live(uid)
        if live is None:
            return
        run, obj = live
        stamp = self.c.stamp()
        containers = (obj.get("spec") or {}).get("containers") or []
        node = (obj.get("spec") or {}).get("nodeName") or ""
        run.started_at = stamp

        def fn(o: dict) -> None:
            st = o.setdefault("status", {})
            old = {cs.get("name"): cs for cs in st.get("containerStatuses") or []}
            st["phase"] = "Running"
            st["podIP"] = _pod_ip(run.uid)
            st["podIPs"] = [{"ip": st["podIP"]}]
            st.setdefault("hostIP", _node_ip(node))
            st.setdefault("startTime", stamp)
            conds = st.get("conditions") or []
            conds = set_condition(conds, "Ready", "True", stamp)
            conds = set_condition(conds, "ContainersReady", "True", stamp)
            st["conditions"] = conds
            st["containerStatuses"] = [
                self._container_status(
                    c,
                    run,
                    {"running": {"startedAt": stamp}},
                    ready=True,
                    started=True,
                    last_state=(old.get(c.get("name")) or {}).get("lastState"),
                )
                for c in containers
            ]

        if self._write_status(run, fn) is None:
            return
        for c in containers:
            image, name = c.get("image", ""), c.get("name", "")
            if first:
                secs = run.pull_seconds
                size = 50_000_000 + int(_digest(image)[:6], 16) * 20
                self._event(
                    obj,
                    "Normal",
                    "Pulled",
                    f'Successfully pulled image "{image}" in {secs:.3f}s ({secs:.3f}s including waiting). '
                    f"Image size: {size} bytes.",
                    name,
                )
            else:
                self._event(
                    obj, "Normal", "Pulled", f'Container image "{image}" already present on machine', name
                )
            self._event(obj, "Normal", "Created", f"Created container: {name}", name)
            self._event(obj, "Normal", "Started", f"Started container {name}", name)
        if run.behaviour != "run":
            self.c.after(run.duration, self._exit, uid)

    def _exit(self, uid: str) -> None:
        live = self._live(uid)
        if live is None:
            return
        run, obj = live
        stamp = self.c.stamp()
        containers = (obj.get("spec") or {}).get("containers") or []
        code = 0 if run.behaviour == "succeed" else run.exit_code
        reason = "Completed" if code == 0 else ("OOMKilled" if code == 137 else "Error")
        started = run.started_at or (obj.get("status") or {}).get("startTime") or stamp
        terminated = {
            "terminated": {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": stamp}
        }
        restart = run.restart_policy == "Always" or (run.restart_policy == "OnFailure" and code != 0)
        meta = obj["metadata"]

        if not restart:
            phase = "Succeeded" if code == 0 else "Failed"

            def fn(o: dict) -> None:
                st = o.setdefault("status", {})
                st["phase"] = phase
                conds = st.get("conditions") or []
                why = "PodCompleted" if code == 0 else "PodFailed"
                conds = set_condition(conds, "Ready", "False", stamp, why)
                conds = set_condition(conds, "ContainersReady", "False", stamp, why)
                st["conditions"] = conds
                st["containerStatuses"] = [
                    self._container_status(c, run, dict(terminated), ready=False, started=False)
                    for c in containers
                ]

            self._write_status(run, fn)
            self.runs.pop(uid, None)
            return

        run.restarts += 1
        delay = _backoff(run.restarts)

        def crashed(o: dict) -> None:
            st = o.setdefault("status", {})
            conds = st.get("conditions") or []
            names = ", ".join(c.get("name", "") for c in containers)
            conds = _containers_not_ready(conds, stamp, names)
            st["conditions"] = conds
            st["containerStatuses"] = [
                self._container_status(
                    c,
                    run,
                    {
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": f"back-off {int(delay)}s restarting failed "
                            f"container={c.get('name', '')} "
                            f"pod={meta['name']}_{meta.get('namespace', '')}({run.uid})",
                        }
                    },
                    ready=False,
                    started=False,
                    last_state=dict(terminated),
                )
                for c in containers
            ]

        if self._write_status(run, crashed) is None:
            return
        for c in containers:
            self._event(
                obj,
                "Warning",
                "BackOff",
                f"Back-off restarting failed container {c.get('name', '')} in pod "
                f"{meta['name']}_{meta.get('namespace', '')}({run.uid})",
                c.get("name"),
            )
        self.c.after(delay, self._start, uid, False)


def parse_started(statuses: list[dict]) -> float | None:
    from .jobcontroller import parse_time

    for cs in statuses:
        running = (cs.get("state") or {}).get("running")
        if running and running.get("startedAt"):
            return parse_time(running["startedAt"])
    return None


def _backoff(n: int) -> float:
    return float(min(300, 10 * 2 ** max(0, n - 1)))


def _float(value, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _pull_error(image: str) -> str:
    ref = image if "/" in image.split(":")[0] else f"docker.io/library/{image}"
    return (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": '
        f'failed to resolve reference "{ref}": {ref}: not found'
    )


def _node_ip(node: str) -> str:
    h = int(_digest(node)[:4], 16)
    return f"10.0.{h >> 8}.{(h & 0xFF) or 1}"


def _pod_ip(uid: str) -> str:
    h = int(_digest(uid)[:6], 16)
    return f"10.244.{(h >> 16) & 0xFF}.{(h & 0xFF) or 2}"
