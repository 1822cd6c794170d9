"""Scenarios for the simulated cluster: ``empty``, ``demo``, ``large`` and verbatim replay of a file.

``load_scenario(cluster, name_or_path, **options)`` loads into a ``SimulatedCluster`` (anything with
``.store``, ``.clock`` and ``.controllers`` — None when the controllers are off).

- ``"empty"``: nothing (the cluster's bootstrap already has the namespaces and root/default queues).
- ``"demo"``: dashboard/sim/demo_scenario.py; arrivals and Commands are scheduled on the
  controllers' timers, so they only happen with the controllers on.
- ``"large"``: ``generate_large(cluster, jobs=..., pods=..., queues=..., events=..., churn=...)``
  (dashboard/sim/generator.py; re-exported here for the benchmark).
- a path to a ``.yaml``/``.yml`` (multi-document) or ``.json`` (one object, a ``List``, or any
  ``*List``) file: every object is created verbatim with the store's replay mode — uid,
  creationTimestamp, deletionTimestamp, generation and status exactly as written — so a reported
  state replays exactly. Objects that already exist (the bootstrap's ``default`` namespace or
  ``root`` queue) are replaced by the file's version. Namespaces a namespaced object needs but the
  file lacks are created. Errors: ``ScenarioError`` naming the document and the problem.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import yaml

from . import demo_platform as platform
from . import demo_scenario as demo
from .generator import generate_large
from .kinds import kind_by_name

NAMESPACE = kind_by_name("Namespace", "")
JOB = kind_by_name("Job", "batch.volcano.sh")
QUEUE = kind_by_name("Queue", "scheduling.volcano.sh")
NODE = kind_by_name("Node", "")
COMMAND = kind_by_name("Command", "bus.volcano.sh")
DEPLOYMENT = kind_by_name("Deployment", "apps")
EVENT = kind_by_name("Event", "")
POD = kind_by_name("Pod", "")
HYPERNODE = kind_by_name("HyperNode", "topology.volcano.sh")
JOBTEMPLATE = kind_by_name("JobTemplate", "flow.volcano.sh")
JOBFLOW = kind_by_name("JobFlow", "flow.volcano.sh")
CRONJOB = kind_by_name("CronJob", "batch.volcano.sh")

SCENARIOS = ("empty", "demo", "large")
__all__ = [
    "DEMO_SETTLE_SECONDS",
    "SCENARIOS",
    "ScenarioError",
    "generate_large",
    "load_scenario",
    "replay_file",
]
# Simulated seconds after which the demo shows every state it promises at once (see demo_scenario.py);
# tests/conftest.py's demo_cluster fixture reads it.
DEMO_SETTLE_SECONDS = 60.0


class ScenarioError(ValueError):
    """A scenario name or file that cannot be loaded; the message says which document and why."""


def load_scenario(cluster, name_or_path: str | Path, **options: Any) -> dict[str, int]:
    """Load a scenario; returns counts of the objects created per kind."""
    name = str(name_or_path)
    if name == "empty":
        return {}
    if name == "demo":
        return load_demo(cluster, seed=options.get("seed"))
    if name == "large":
        return generate_large(cluster, **options)
    path = Path(name)
    if not path.is_file():
        raise ScenarioError(
            f"unknown scenario {name!r}: use one of {', '.join(SCENARIOS)} or a YAML/JSON file"
        )
    return replay_file(cluster.store, path)


# ----------------------------------------------------------------------------- verbatim replay
def read_objects(path: Path) -> list[dict]:
    """Every Kubernetes object in a YAML (multi-document) or JSON file, ``*List``s flattened."""
    text = path.read_text(encoding="utf-8")
    try:
        docs = [json.loads(text)] if path.suffix.lower() == ".json" else list(yaml.safe_load_all(text))
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScenarioError(
            f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}"
        ) from None
    out: list[dict] = []

    def add(doc: Any, where: str) -> None:
        if doc is None:
            return
        if not isinstance(doc, dict):
            raise ScenarioError(f"{path} {where}: expected a Kubernetes object, got {type(doc).__name__}")
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            for i, item in enumerate(doc["items"]):
                add(item, f"{where} item {i}")
            return
        if not doc.get("apiVersion") or not doc.get("kind"):
            raise ScenarioError(f"{path} {where}: apiVersion and kind are required")
        out.append(doc)

    for i, doc in enumerate(docs):
        add(doc, f"document {i + 1}")
    return out


def replay_file(store, path: Path) -> dict[str, int]:
    from .kinds import kind_for_api_version  # sim-core's lookup by apiVersion + kind
    from .store import ApiError

    objects = read_objects(path)
    resolved = []
    for i, obj in enumerate(objects):
        kind = kind_for_api_version(obj["apiVersion"], obj["kind"])
        if kind is None:
            raise ScenarioError(
                f"{path} object {i + 1}: the simulated cluster does not serve "
                f"{obj['apiVersion']} {obj['kind']}"
            )
        if not (obj.get("metadata") or {}).get("name"):
            raise ScenarioError(f"{path} object {i + 1} ({obj['kind']}): metadata.name is required")
        resolved.append((kind, obj))
    # Namespaces first, then cluster-scoped kinds, then the rest in file order.
    resolved.sort(key=lambda pair: (pair[0] is not NAMESPACE, pair[0].namespaced))
    wanted_ns = {
        (obj.get("metadata") or {}).get("namespace") or "default" for kind, obj in resolved if kind.namespaced
    }
    counts: dict[str, int] = {}
    for kind, obj in resolved:
        md = obj.get("metadata") or {}
        namespace = md.get("namespace") if kind.namespaced else None
        if kind.namespaced and not namespace:
            namespace = "default"
        if kind is NAMESPACE:
            wanted_ns.discard(md["name"])
        if kind.namespaced and namespace in wanted_ns:
            if _try_get(store, NAMESPACE, None, namespace) is None:
                store.create(NAMESPACE, {"metadata": {"name": namespace}})
            wanted_ns.discard(namespace)
        if _try_get(store, kind, namespace, md["name"]) is not None:
            store.delete(kind, namespace, md["name"], propagation="Orphan")
        try:
            store.create(kind, obj, namespace, replay=True)
        except ApiError as exc:
            raise ScenarioError(
                f"{path}: {obj['kind']} {namespace + '/' if namespace else ''}{md['name']}: {exc.message}"
            ) from None
        counts[kind.kind] = counts.get(kind.kind, 0) + 1
    return counts


def _try_get(store, kind, namespace, name):
    from .store import ApiError

    try:
        return store.get(kind, namespace, name)
    except ApiError:
        return None


# ----------------------------------------------------------------------------- demo
def _load_platform(store, create) -> None:
    """Volcano's components, the H100 nodes and HyperNode tree, topology-constrained Jobs, the
    JobFlows with their JobTemplates and the CronJobs (demo_platform.py)."""
    from datetime import timedelta

    from .clock import rfc3339
    from .components import deployments

    # Their own uid streams: adding them leaves every other object's uid, and so the rest of the
    # demo's story, as it is.
    stream = random.Random(f"demo-platform/{getattr(store, 'seed', 0)}")
    for key in (
        platform.NAMESPACE,
        "volcano-system",
        *(n["metadata"]["name"] for n in platform.nodes()),
        *(h["metadata"]["name"] for h in platform.hypernodes()),
        *(q["metadata"]["name"] for q in platform.queues()),
    ):
        store.uid_streams[key] = stream
    for ns in (platform.NAMESPACE, "volcano-system"):
        create(NAMESPACE, {"metadata": {"name": ns}})
    for dep in deployments():
        if DEPLOYMENT is not None:
            platform.on_h100({"tasks": [{"template": dep["spec"]["template"]}]})
            create(DEPLOYMENT, dep)
    for node in platform.nodes():
        create(NODE, node)
    for hypernode in platform.hypernodes():
        create(HYPERNODE, hypernode)
    for queue in platform.queues():
        create(QUEUE, queue)
    for job in platform.topology_jobs():
        create(JOB, job)
    for template in platform.job_templates():
        create(JOBTEMPLATE, template)
    for flow in platform.job_flows():
        create(JOBFLOW, flow)
    for cronjob in platform.cron_jobs():
        age = platform.CRON_AGE_SECONDS.get(cronjob["metadata"]["name"])
        if age:
            # Created before the demo began (replayed with its creationTimestamp; the CRD defaults
            # are spelled out in the object).
            cronjob = copy.deepcopy(cronjob)
            cronjob["metadata"]["creationTimestamp"] = rfc3339(store.clock.now() - timedelta(seconds=age))
            from .store import ApiError

            try:
                store.create(CRONJOB, cronjob, replay=True)
            except ApiError as exc:
                if exc.code != 409:
                    raise
            continue
        create(CRONJOB, cronjob)


def load_demo(cluster, seed: int | None = None) -> dict[str, int]:
    """The demo scenario (see demo_scenario.py): objects at t=0, later arrivals and Commands on timers."""
    store = cluster.store
    controllers = getattr(cluster, "controllers", None)
    rng = random.Random(getattr(cluster, "seed", 0) if seed is None else seed)
    counts: dict[str, int] = {}

    def create(kind, obj, namespace=None) -> dict | None:
        from .store import ApiError

        try:
            out = store.create(kind, obj, namespace)
        except ApiError as exc:
            if exc.code == 409:
                return None
            raise
        counts[kind.kind] = counts.get(kind.kind, 0) + 1
        return out

    for ns in demo.NAMESPACES:
        create(NAMESPACE, {"metadata": {"name": ns, "labels": {"volcano-ui.demo/team": ns}}})
    for node in demo.nodes():
        create(NODE, node)
    for queue in demo.queues():
        create(QUEUE, queue)
    # ``archive`` is Closed from the start (as if closed long ago); the others open on first sync.
    store.mutate(
        QUEUE, None, "archive", lambda o: o.__setitem__("status", {"state": "Closed", "reservation": {}})
    )
    for job in demo.initial_jobs():
        create(JOB, job)
    _load_platform(store, create)
    if DEPLOYMENT is not None:
        create(DEPLOYMENT, demo.deployment())
    create(POD, demo.bare_pod())
    if controllers is None:
        for _, job in demo.arrivals(rng):
            create(JOB, job)
        return counts

    start = controllers.now()
    for offset, job in demo.arrivals(rng):
        controllers.at(start + offset, create, JOB, job)

    def issue(namespace: str, action: str, target_kind: str, name: str) -> None:
        if target_kind == "Queue":
            target = _try_get(store, QUEUE, None, name)
        else:
            target = _try_get(store, JOB, namespace, name)
        if target is None:
            return
        create(
            COMMAND, demo.command(namespace, action, target_kind, name, target["metadata"]["uid"]), namespace
        )

    for offset, namespace, action, target_kind, name in demo.COMMANDS:
        controllers.at(start + offset, issue, namespace, action, target_kind, name)

    periodic: dict = {"n": 0, "live": []}

    def trickle() -> None:
        # At most PERIODIC_MAX_LIVE unfinished ones, so a saturated cluster does not pile them up.
        live = []
        for namespace, name in periodic["live"]:
            obj = _try_get(store, JOB, namespace, name)
            state = ((obj or {}).get("status") or {}).get("state") or {}
            if obj is not None and state.get("phase") not in ("Completed", "Failed", "Terminated"):
                live.append((namespace, name))
        periodic["live"] = live
        if len(live) < demo.PERIODIC_MAX_LIVE:
            periodic["n"] += 1
            job = demo.periodic_job(rng, periodic["n"])
            if create(JOB, job) is not None:
                live.append((job["metadata"]["namespace"], job["metadata"]["name"]))
        controllers.after(demo.PERIODIC_SECONDS, trickle)

    controllers.at(start + demo.PERIODIC_START, trickle)
    return counts
