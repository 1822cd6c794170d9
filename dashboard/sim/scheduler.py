"""The Volcano scheduler, simulated: one session per tick, gang admission and binding.

Facts from Volcano's scheduler (volcano-sh/volcano ``pkg/scheduler``):
- a PodGroup the job controller creates has no status until the scheduler writes ``Pending``;
- ``Pending -> Inqueue`` (enqueue) only when its queue is Open and the gang's ``minResources`` fit
  the capability (minus allocated and reserved) of the queue and of every ancestor, and the
  cluster's free capacity; an Inqueue PodGroup reserves its minResources until its pods bind;
- pods are bound only as a gang: unless at least ``minMember`` of the PodGroup's pods are bound or
  can be placed in this session, none is bound;
- status ``Running`` when allocated (bound or finished-successfully) pods >= minMember,
  ``Completed`` when all of those succeeded, ``Unknown`` when some run but the gang is not ready;
- conditions ``Unschedulable`` (reason ``NotEnoughResources``, Volcano's message) and ``Scheduled``;
- events: PodGroup Warning ``Unschedulable`` each session while not ready, Normal ``Unschedulable``
  for an enqueue rejection, Normal ``Scheduled`` "pod group is ready"; pod Warning
  ``FailedScheduling`` with the fit error, Normal ``Scheduled`` "Successfully assigned <ns>/<pod> to
  <node>";
- ``Queue.status.allocated`` summed up into parents.

Work per session is bounded: PodGroups are reconsidered when they or their pods change, and
waiting ones again when resources were released (at most every ``min_retry_seconds``) or every
``retry_seconds``, at most ``max_retries`` of them per session.
"""

from __future__ import annotations

from . import resources as R
from .controllers import PodGroupInfo, PodInfo
from .store import ApiError
from .topology import label_selector_matches

READY_REASON = "tasks in gang are ready to be scheduled"
PG_ACTIVE = ("", "Pending", "Inqueue", "Running", "Unknown")


def _set_pg_condition(conditions: list[dict], cond: dict) -> tuple[list[dict], bool]:
    """Replace the condition of the same type when it differs or is not the newest; keep the order."""
    out = list(conditions)
    newest = max((c.get("lastTransitionTime") or "" for c in out), default="")
    for i, old in enumerate(out):
        if old.get("type") == cond["type"]:
            same = (
                old.get("status") == cond["status"]
                and old.get("reason") == cond.get("reason")
                and (old.get("message") or "") == (cond.get("message") or "")
            )
            if same and (old.get("lastTransitionTime") or "") >= newest:
                return out, False
            out[i] = cond
            return out, True
    out.append(cond)
    return out, True


def untolerated_taint(taints: list, tolerations: list | None) -> dict | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates (core/v1 toleration rules)."""
    for taint in taints:
        if not any(_tolerates(t, taint) for t in tolerations or ()):
            return taint
    return None


def _tolerates(toleration: dict, taint: dict) -> bool:
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration.get("key") == taint.get("key")
    return toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (
        taint.get("value") or ""
    )


def network_topology(podgroup: dict) -> dict | None:
    """A PodGroup's networkTopology: ``spec.networkTopology``, else the annotations
    ``volcano.sh/network-topology-mode`` / ``volcano.sh/network-topology-highest-tier``."""
    spec = podgroup.get("spec") or {}
    if isinstance(spec.get("networkTopology"), dict):
        return spec["networkTopology"]
    annotations = (podgroup.get("metadata") or {}).get("annotations") or {}
    mode = annotations.get("volcano.sh/network-topology-mode")
    tier = annotations.get("volcano.sh/network-topology-highest-tier")
    if not mode and not tier:
        return None
    out: dict = {"mode": mode or "hard"}
    if tier:
        try:
            out["highestTierAllowed"] = int(tier)
        except ValueError:
            return None
    return out


class Scheduler:
    def __init__(
        self,
        controllers,
        *,
        retry_seconds: float = 10.0,
        min_retry_seconds: float = 3.0,
        max_retries: int = 400,
    ) -> None:
        self.c = controllers
        self.retry_seconds = retry_seconds
        self.min_retry_seconds = min_retry_seconds
        self.max_retries = max_retries
        self.waiting: dict[tuple[str, str], None] = {}
        self._attempt: dict[tuple[str, str], tuple[int, float]] = {}
        self._ungrouped: dict[tuple[str, str], None] = {}
        self._node_order: list[str] | None = None
        # The nodes in _nodes_for's order, for pods without and with a GPU request.
        self._node_lists: dict[bool, list] = {}
        self.session_uid = ""
        self.sessions = 0

    # ------------------------------------------------------------------ hooks
    def nodes_changed(self) -> None:
        self._node_order = None
        self._node_lists.clear()

    def forget_pod(self, pod: PodInfo) -> None:
        self._ungrouped.pop(pod.key, None)

    def forget_podgroup(self, key: tuple[str, str]) -> None:
        self.waiting.pop(key, None)
        self._attempt.pop(key, None)

    def note_ungrouped(self, pod: PodInfo) -> None:
        if not pod.node and not pod.deleting and pod.phase == "Pending":
            self._ungrouped[pod.key] = None

    def name_for(self, pod: PodInfo | None) -> str:
        if pod is not None and pod.scheduler:
            return pod.scheduler
        return self.c.scheduler_names[0]

    # ------------------------------------------------------------------ the session
    def session(self) -> None:
        c = self.c
        self.sessions += 1
        self.session_uid = c.new_uid()
        now = c.now()
        candidates: dict[tuple[str, str], None] = {}
        dirty, c.dirty_podgroups = c.dirty_podgroups, {}
        for key in dirty:
            candidates[key] = None
        retries = 0
        for key in list(self.waiting):
            if key in candidates:
                continue
            epoch, when = self._attempt.get(key, (-1, 0.0))
            # Released resources make a retry worthwhile, but not more than every min_retry_seconds
            # for one PodGroup (with churn something is released every session).
            if (epoch != c.capacity_epoch and now - when >= self.min_retry_seconds) or (
                now - when >= self.retry_seconds
            ):
                candidates[key] = None
                retries += 1
                if retries >= self.max_retries:
                    break
        order = sorted(
            (c.podgroups[k] for k in candidates if k in c.podgroups),
            key=lambda pg: (-pg.priority, pg.created, pg.namespace, pg.name),
        )
        for key in candidates:
            if key not in c.podgroups:
                self.waiting.pop(key, None)
                self._attempt.pop(key, None)
        for pg in order:
            c.guard(f"podgroup {pg.namespace}/{pg.name}", self._schedule, pg)
        c.guard("bind pods", self._bind_ungrouped)
        c.guard("queue allocated", self._write_queue_allocated)

    # ------------------------------------------------------------------ one PodGroup
    def _schedule(self, pg: PodGroupInfo) -> None:
        c = self.c
        key = pg.key
        self._attempt[key] = (c.capacity_epoch, c.now())
        status = dict(pg.obj.get("status") or {})
        phase = status.get("phase") or ""
        if phase not in PG_ACTIVE:
            self.waiting.pop(key, None)
            return
        new_phase = phase or "Pending"
        enqueue_msg = ""
        if new_phase == "Pending":
            ok, enqueue_msg = self._can_enqueue(pg)
            if ok:
                new_phase = "Inqueue"
            elif enqueue_msg:
                c.events.record(pg.obj, "Normal", "Unschedulable", enqueue_msg, self.name_for(None))
        pods = [p for p in c.pg_pods(pg) if not p.deleting]
        fit_errors: dict[str, str] = {}
        schedulable: dict[str, str] = {}
        if new_phase in ("Inqueue", "Running", "Unknown"):
            unbound = [p for p in pods if not p.node and p.phase == "Pending"]
            if unbound:
                fit_errors, schedulable = self._allocate(pg, pods, unbound)
                pods = [p for p in c.pg_pods(pg) if not p.deleting]

        running = sum(1 for p in pods if p.phase == "Running")
        succeeded = sum(1 for p in pods if p.phase == "Succeeded")
        failed = sum(1 for p in pods if p.phase == "Failed")
        allocated = sum(1 for p in pods if p.node and p.phase in ("Pending", "Running")) + succeeded
        ready = allocated >= pg.min_member and (pg.min_member > 0 or pods)
        if running and not ready:
            new_phase = "Unknown"
        elif ready:
            new_phase = "Completed" if allocated and succeeded == allocated else "Running"
        elif new_phase != "Inqueue":
            new_phase = "Pending"

        stamp = c.stamp()
        conditions = list(status.get("conditions") or [])
        became_ready = False
        if not ready:
            msg = self._gang_message(pg, pods, allocated, fit_errors, schedulable, enqueue_msg)
            cond = {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": self.session_uid,
                "lastTransitionTime": stamp,
                "reason": "NotEnoughResources",
                "message": msg,
            }
            conditions, _ = _set_pg_condition(conditions, cond)
            c.events.record(pg.obj, "Warning", "Unschedulable", msg, self.name_for(None))
            for pod in pods:
                if pod.node or pod.phase != "Pending":
                    continue
                pod_msg = fit_errors.get(pod.name) or (
                    f"Pod {pod.namespace}/{pod.name} can possibly be assigned to {schedulable[pod.name]}, "
                    "once minAvailable is satisfied"
                    if pod.name in schedulable
                    else msg
                )
                self._pod_unschedulable(
                    pod, pod_msg, "Unschedulable" if pod.name not in schedulable else "Schedulable"
                )
        else:
            cond = {
                "type": "Scheduled",
                "status": "True",
                "transitionID": self.session_uid,
                "lastTransitionTime": stamp,
                "reason": READY_REASON,
                "message": "",
            }
            conditions, became_ready = _set_pg_condition(conditions, cond)
            if became_ready:
                c.events.record(pg.obj, "Normal", "Scheduled", "pod group is ready", self.name_for(None))
            for pod in pods:
                if not pod.node and pod.phase == "Pending" and pod.name in fit_errors:
                    self._pod_unschedulable(pod, fit_errors[pod.name], "Unschedulable")

        new_status = {"phase": new_phase}
        if conditions:
            new_status["conditions"] = conditions
        for name, value in (("running", running), ("succeeded", succeeded), ("failed", failed)):
            if value:
                new_status[name] = value
        for extra in ("annotations",):
            if extra in status:
                new_status[extra] = status[extra]
        if new_status != status:
            c.write("PodGroup", pg.namespace, pg.name, lambda obj: obj.__setitem__("status", new_status))
        unbound_left = any(not p.node and p.phase == "Pending" for p in pods)
        if new_phase in ("Pending", "Inqueue", "Unknown") or not ready or unbound_left:
            self.waiting[key] = None
        else:
            self.waiting.pop(key, None)

    def _gang_message(
        self,
        pg: PodGroupInfo,
        pods: list[PodInfo],
        allocated: int,
        fit_errors: dict[str, str],
        schedulable: dict[str, str],
        enqueue_msg: str,
    ) -> str:
        """Volcano's gang message: ``<unready>/<tasks> tasks in gang unschedulable: pod group is not ready,
        <histogram>; Pending: <reasons>. Origin reason is …`` (gang.go / job_info.go FitError)."""
        hist: dict[str, int] = {}
        for pod in pods:
            name = ("Bound" if pod.node else "Pending") if pod.phase == "Pending" else pod.phase
            hist[name] = hist.get(name, 0) + 1
        parts = sorted([f"{n} {k}" for k, n in hist.items()] + [f"{pg.min_member} minAvailable"])
        unready = max(0, pg.min_member - allocated)
        msg = f"{unready}/{len(pods)} tasks in gang unschedulable: pod group is not ready, {', '.join(parts)}"
        reasons: dict[str, int] = {}
        for pod in pods:
            if not pod.node and pod.phase == "Pending":
                reason = "Schedulable" if pod.name in schedulable else "Unschedulable"
                reasons[reason] = reasons.get(reason, 0) + 1
        if reasons:
            msg += "; Pending: " + ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
        if enqueue_msg:
            msg += ". Origin reason is: " + enqueue_msg
        else:
            for pod in pods:
                if pod.name in fit_errors:
                    msg += f". Origin reason is {pod.name}: {fit_errors[pod.name]}"
                    break
        return msg

    def _pod_unschedulable(self, pod: PodInfo, message: str, reason: str) -> None:
        c = self.c
        ref = {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod.name,
            "namespace": pod.namespace,
            "uid": pod.uid,
        }
        c.events.record(ref, "Warning", "FailedScheduling", message, self.name_for(pod))
        stamp = c.stamp()

        def fn(obj: dict) -> None:
            st = obj.setdefault("status", {})
            conds = [x for x in st.get("conditions") or [] if x.get("type") != "PodScheduled"]
            old = next((x for x in st.get("conditions") or [] if x.get("type") == "PodScheduled"), None)
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": old.get("lastTransitionTime")
                    if old and old.get("status") == "False"
                    else stamp,
                }
            )
            st["conditions"] = conds

        if pod.scheduled_condition == ("False", reason, message):
            return  # already says so
        try:
            c.write("Pod", pod.namespace, pod.name, fn)
        except ApiError:
            return

    # ------------------------------------------------------------------ enqueue
    def _queue_free(self, queue_name: str, credit: R.Res | None = None) -> tuple[R.Res | None, str]:
        """Headroom left under the capabilities of the queue and its ancestors (None = unlimited).

        Returns (headroom, name of a missing/closed queue problem or "").
        """
        c = self.c
        chain = c.queue_chain(queue_name)
        if not chain:
            return None, f"queue {queue_name} not found"
        headroom: R.Res | None = None
        for queue in chain:
            if not queue.capability:
                continue
            alloc, reserved = c.subtree_totals(queue.name)
            for name, cap in queue.capability.items():
                free = cap - alloc.get(name, 0) - reserved.get(name, 0) + (credit or {}).get(name, 0)
                if headroom is None:
                    headroom = {}
                headroom[name] = min(headroom.get(name, free), free)
        return headroom, ""

    def _can_enqueue(self, pg: PodGroupInfo) -> tuple[bool, str]:
        c = self.c
        queue = c.queues.get(pg.queue)
        if queue is None:
            return False, f"queue <{pg.queue}> not found"
        if queue.state != "Open":
            return False, ""
        request = {k: v for k, v in pg.min_resources.items() if v > 0}
        headroom, problem = self._queue_free(pg.queue)
        if problem:
            return False, problem
        if headroom is not None:
            short = R.insufficient({k: v for k, v in request.items() if k in headroom}, headroom)
            if short:
                return False, "queue resource quota insufficient: " + ", ".join(
                    f"insufficient {n}" for n in short
                )
        total: R.Res = {}
        for node in c.nodes.values():
            if node.schedulable:
                R.add(total, node.allocatable)
        free = {k: v - c.cluster_used.get(k, 0) - c.cluster_reserved.get(k, 0) for k, v in total.items()}
        short = R.insufficient(request, free)
        if short:
            return False, "resource in cluster is overused: " + ", ".join(f"insufficient {n}" for n in short)
        return True, ""

    # ------------------------------------------------------------------ allocate
    def _nodes_for(self, pod: PodInfo) -> list:
        """The nodes to try for ``pod`` in order (a shared list: read it, never modify it)."""
        c = self.c
        if self._node_order is None:
            names = sorted(c.nodes)
            self._node_order = [n for n in names if not c.nodes[n].gpu] + [n for n in names if c.nodes[n].gpu]
        wants_gpu = any(k.endswith("/gpu") and v > 0 for k, v in pod.requests.items())
        cached = self._node_lists.get(wants_gpu)
        if cached is not None:
            return cached
        order = self._node_order
        if wants_gpu:
            order = [n for n in order if c.nodes[n].gpu] + [n for n in order if not c.nodes[n].gpu]
        nodes = self._node_lists[wants_gpu] = [c.nodes[n] for n in order if n in c.nodes]
        return nodes

    def _fit(
        self,
        pod: PodInfo,
        selector: dict,
        tentative: dict[str, R.Res],
        allowed: frozenset[str] | None = None,
    ) -> tuple[str | None, str]:
        """First node the pod fits on (among ``allowed`` when given), or (None, Kubernetes-style fit
        error)."""
        reasons: dict[str, int] = {}
        nodes = self._nodes_for(pod)
        if allowed is not None:
            nodes = [n for n in nodes if n.name in allowed]
        for node in nodes:
            if not node.schedulable:
                reasons["node(s) were unschedulable"] = reasons.get("node(s) were unschedulable", 0) + 1
                continue
            taint = untolerated_taint(node.taints, pod.tolerations)
            if taint is not None:
                key = f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"
                reasons[key] = reasons.get(key, 0) + 1
                continue
            if selector and any(node.labels.get(k) != v for k, v in selector.items()):
                key = "node(s) didn't match Pod's node affinity/selector"
                reasons[key] = reasons.get(key, 0) + 1
                continue
            extra = tentative.get(node.name, {})
            free = {k: v - node.used.get(k, 0) - extra.get(k, 0) for k, v in node.allocatable.items()}
            short = R.insufficient(pod.requests, free)
            if not short:
                return node.name, ""
            for name in short:
                key = "Too many pods" if name == "pods" else f"Insufficient {name}"
                reasons[key] = reasons.get(key, 0) + 1
        if not nodes:
            return None, "0/0 nodes are unavailable: no nodes available to schedule pods."
        detail = ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
        return None, f"0/{len(nodes)} nodes are unavailable: {detail}."

    def _allocate(
        self, pg: PodGroupInfo, pods: list[PodInfo], unbound: list[PodInfo]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """Place the gang (within one HyperNode when its networkTopology is hard); bind when at least
        minMember pods are bound or placed. Returns (fit errors, pods placeable once the gang is
        complete -> node)."""
        ready = sum(
            1 for p in pods if (p.node and p.phase in ("Pending", "Running")) or p.phase == "Succeeded"
        )
        domains = self._domains(pg, pods)
        if domains is None:
            placements, fit_errors = self._place(pg, unbound, None, "")
        else:
            placements, fit_errors = [], {}
            for allowed, hypernode in domains:
                tried, errors = self._place(pg, unbound, allowed, hypernode)
                fit_errors = errors
                if ready + len(tried) >= pg.min_member:
                    placements = tried
                    break
        if ready + len(placements) >= pg.min_member:
            for pod, node in placements:
                self._bind(pod, node)
            return fit_errors, {}
        return fit_errors, {pod.name: node for pod, node in placements}

    def _domains(
        self, pg: PodGroupInfo, pods: list[PodInfo]
    ) -> list[tuple[frozenset[str] | None, str]] | None:
        """The HyperNodes a hard (or soft) networkTopology lets the gang use, in the order Volcano's
        network-topology-aware plugin tries them (tier ascending; HyperNodes whose idle resources
        cannot hold minResources are skipped); None without a constraint. Soft mode ends with the
        whole cluster."""
        c = self.c
        network = network_topology(pg.obj)
        if network is None:
            return None
        view = c.hypernodes.view()
        mode = network.get("mode") or "hard"
        if mode == "soft":
            highest = max(view.tier.values(), default=0)
        else:
            tier = view.allowed_tier(network)
            if tier is None:
                return None  # Volcano: an unknown highestTierName leaves the job unconstrained
            highest = tier
        bound = frozenset(p.node for p in pods if p.node and p.phase not in ("Succeeded", "Failed"))
        out: list[tuple[frozenset[str] | None, str]] = []
        for gradient in view.gradients(highest):
            for name in gradient:
                members = view.nodes_of(name)
                if bound and not bound <= members:
                    continue
                if not bound and not self._idle_covers(members, pg.min_resources):
                    continue
                out.append((members, name))
        if mode == "soft":
            out.append((None, ""))
        return out

    def _idle_covers(self, members: frozenset[str], request: R.Res) -> bool:
        idle: R.Res = {}
        for name in members:
            node = self.c.nodes.get(name)
            if node is None or not node.schedulable:
                continue
            for key, value in node.allocatable.items():
                idle[key] = idle.get(key, 0) + value - node.used.get(key, 0)
        return not R.insufficient({k: v for k, v in request.items() if v > 0 and k != "pods"}, idle)

    def _place(
        self, pg: PodGroupInfo, unbound: list[PodInfo], allowed: frozenset[str] | None, hypernode: str
    ) -> tuple[list[tuple[PodInfo, str]], dict[str, str]]:
        """Tentative placements of ``unbound`` on ``allowed`` nodes (all when None) and the fit
        errors ("In hyperNode <name>: ..." inside a HyperNode, as Volcano's FitErrors say it).
        Partitions whose subGroupPolicy has a networkTopology go whole into one HyperNode each."""
        credit = pg.min_resources if pg.reserving else None
        headroom, _ = self._queue_free(pg.queue, credit)
        tentative: dict[str, R.Res] = {}
        used_quota: R.Res = {}
        placements: list[tuple[PodInfo, str]] = []
        fit_errors: dict[str, str] = {}
        task_errors: dict[str, str] = {}
        prefix = f"In hyperNode {hypernode}: " if hypernode else ""
        groups, rest = self._partitions(pg, unbound)

        def place_one(pod: PodInfo, nodes: frozenset[str] | None, where: str) -> str | None:
            if headroom is not None:
                want = R.add(dict(used_quota), pod.requests)
                short = R.insufficient({k: v for k, v in want.items() if k in headroom}, headroom)
                if short:
                    fit_errors[pod.name] = "queue resource quota insufficient: " + ", ".join(
                        f"insufficient {n}" for n in short
                    )
                    return None
            node, err = self._fit(pod, self._selector(pod), tentative, nodes)
            if node is None:
                fit_errors[pod.name] = where + err
                return None
            R.add(tentative.setdefault(node, {}), pod.requests)
            R.add(used_quota, pod.requests)
            return node

        for members, tier in groups:
            self._place_partition(
                members, tier, allowed, tentative, used_quota, placements, fit_errors, place_one
            )
        for pod in rest:
            if pod.task in task_errors:
                fit_errors[pod.name] = task_errors[pod.task]
                continue
            node = place_one(pod, allowed, prefix)
            if node is None:
                if pod.task and pod.name in fit_errors:
                    task_errors[pod.task] = fit_errors[pod.name]
                continue
            placements.append((pod, node))
        return placements, fit_errors

    def _place_partition(
        self, members, tier, allowed, tentative, used_quota, placements, fit_errors, place_one
    ) -> None:
        """One partition, all in the first HyperNode of tier <= ``tier`` (inside ``allowed``) that
        holds it; else its pods get the last HyperNode's fit errors."""
        view = self.c.hypernodes.view()
        for gradient in view.gradients(tier, allowed):
            for name in gradient:
                saved = ({k: dict(v) for k, v in tentative.items()}, dict(used_quota))
                nodes = view.nodes_of(name)
                placed = []
                for pod in members:
                    node = place_one(pod, nodes, f"In hyperNode {name}: ")
                    if node is None:
                        break
                    placed.append((pod, node))
                if len(placed) == len(members):
                    for pod, _ in placed:
                        fit_errors.pop(pod.name, None)
                    placements.extend(placed)
                    return
                tentative.clear()
                tentative.update(saved[0])
                used_quota.clear()
                used_quota.update(saved[1])
        for pod in members:
            fit_errors.setdefault(
                pod.name, fit_errors.get(members[0].name, "") or "no HyperNode can hold the partition"
            )

    def _partitions(
        self, pg: PodGroupInfo, unbound: list[PodInfo]
    ) -> tuple[list[tuple[list[PodInfo], int]], list[PodInfo]]:
        """Unbound pods grouped by the PodGroup's subGroupPolicy entries that carry a hard
        networkTopology (pods matching its labelSelector, grouped by matchLabelKeys), with the
        highest tier each group may span; and the other pods."""
        policies = (pg.obj.get("spec") or {}).get("subGroupPolicy") or []
        if not policies:
            return [], unbound
        view = self.c.hypernodes.view()
        groups: dict[tuple, tuple[list[PodInfo], int]] = {}
        rest = []
        for pod in unbound:
            for i, policy in enumerate(policies):
                if not isinstance(policy, dict):
                    continue
                network = policy.get("networkTopology") or {}
                tier = (
                    view.allowed_tier(network) if network and network.get("mode", "hard") == "hard" else None
                )
                if tier is None or not label_selector_matches(policy.get("labelSelector") or {}, pod.labels):
                    continue
                values = tuple(pod.labels.get(k, "") for k in policy.get("matchLabelKeys") or [])
                groups.setdefault((i, values), ([], tier))[0].append(pod)
                break
            else:
                rest.append(pod)
        return list(groups.values()), rest

    def _selector(self, pod: PodInfo) -> dict:
        return pod.node_selector or {}

    def _bind(self, pod: PodInfo, node: str) -> None:
        c = self.c
        stamp = c.stamp()

        def fn(obj: dict) -> None:
            obj.setdefault("spec", {})["nodeName"] = node
            st = obj.setdefault("status", {})
            conds = [x for x in st.get("conditions") or [] if x.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp})
            st["conditions"] = conds

        try:
            obj = c.write("Pod", pod.namespace, pod.name, fn)
        except ApiError:
            return
        c.events.record(
            obj,
            "Normal",
            "Scheduled",
            f"Successfully assigned {pod.namespace}/{pod.name} to {node}",
            self.name_for(pod),
        )

    def _bind_ungrouped(self) -> None:
        """Pods outside any PodGroup (default-scheduler ones) are bound one by one."""
        c = self.c
        pending, self._ungrouped = self._ungrouped, {}
        for key in pending:
            pod = c.pods.get(key)
            if pod is None or pod.node or pod.deleting or pod.phase != "Pending" or pod.group:
                continue
            if pod.scheduler in c.scheduler_names:
                continue  # waits for its PodGroup (workloads controller)
            node, err = self._fit(pod, self._selector(pod), {})
            if node is None:
                ref = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "namespace": pod.namespace,
                    "uid": pod.uid,
                }
                c.events.record(
                    ref,
                    "Warning",
                    "FailedScheduling",
                    err.replace("unavailable", "available", 1),
                    pod.scheduler,
                )
                self._ungrouped[key] = None
                continue
            self._bind(pod, node)

    # ------------------------------------------------------------------ queues
    def _write_queue_allocated(self) -> None:
        c = self.c
        dirty, c.dirty_queue_alloc = c.dirty_queue_alloc, {}
        names: dict[str, None] = {}
        for name in dirty:
            for queue in c.queue_chain(name):
                names[queue.name] = None
        for name in names:
            queue = c.queues.get(name)
            if queue is None:
                continue
            alloc, _ = c.subtree_totals(name)
            formatted = R.format_list({k: v for k, v in alloc.items() if v > 0 or k in ("cpu", "memory")})
            for key in ("cpu", "memory"):
                formatted.setdefault(key, "0")
            if (queue.obj.get("status") or {}).get("allocated") == formatted:
                continue

            def fn(obj: dict, value=formatted) -> None:
                obj.setdefault("status", {})["allocated"] = value

            try:
                c.write("Queue", None, name, fn)
            except ApiError:
                continue
