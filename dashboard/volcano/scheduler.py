"""Scheduler health: the Volcano components' readiness and when the scheduler last acted.

Volcano installs its scheduler, controller manager and admission webhook as Deployments
(``volcano-scheduler``, ``volcano-controllers``, ``volcano-admission`` in ``volcano-system`` by its
Helm chart and installer). A Deployment is ready when ``status.readyReplicas`` reaches
``spec.replicas`` (default 1) and its ``Available`` condition is True. The scheduler records events
under its scheduler name as the source component, and writes PodGroup conditions
(``lastTransitionTime``) each time it decides about a gang.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime

from dashboard.volcano.events import event_last
from dashboard.volcano.objects import as_dict, as_list, as_str, count, name, spec, status
from dashboard.volcano.time import latest, parse_time

COMPONENTS = ("volcano-scheduler", "volcano-controllers", "volcano-admission")


@dataclass(frozen=True)
class Readiness:
    """One Deployment: ``desired`` replicas, ``ready`` ones, ``available`` its Available condition
    (None when absent), ``ok`` both met."""

    name: str
    desired: int
    ready: int
    available: bool | None
    message: str

    @property
    def ok(self) -> bool:
        return self.ready >= self.desired and self.available is not False


def readiness(dep: object) -> Readiness:
    sp, st = spec(dep), status(dep)
    desired = count(sp.get("replicas")) if "replicas" in sp else 1
    available: bool | None = None
    message = ""
    for c in (as_dict(x) for x in as_list(st.get("conditions"))):
        if c.get("type") == "Available":
            available = c.get("status") == "True"
            message = as_str(c.get("message"))
    return Readiness(name(dep), desired, count(st.get("readyReplicas")), available, message)


def components(deployments: Iterable[object]) -> list[Readiness]:
    """The Volcano components' readiness, known components first, then other Deployments."""
    found = [readiness(d) for d in deployments]
    order = {n: i for i, n in enumerate(COMPONENTS)}
    return sorted(found, key=lambda r: (order.get(r.name, len(order)), r.name))


def not_ready(deployments: Iterable[object]) -> list[Readiness]:
    """The Volcano components (COMPONENTS) whose Deployment is not ready, in COMPONENTS order; other
    Deployments of the namespace are not Volcano's and never count."""
    return [r for r in components(deployments) if r.name in COMPONENTS and not r.ok]


def missing_components(deployments: Iterable[object]) -> list[str]:
    present = {name(d) for d in deployments}
    return [c for c in COMPONENTS if c not in present]


def scheduler_event(event: object, scheduler_names: Collection[str]) -> bool:
    """Whether a scheduler of ``scheduler_names`` recorded ``event`` (source.component or
    reportingComponent)."""
    ev = as_dict(event)
    source = as_str(as_dict(ev.get("source")).get("component"))
    return source in scheduler_names or as_str(ev.get("reportingComponent")) in scheduler_names


def scheduler_event_time(event: object, scheduler_names: Collection[str]) -> datetime | None:
    """When ``event`` was last seen (events.event_last) if a scheduler of ``scheduler_names``
    recorded it, else None."""
    return event_last(event) if scheduler_event(event, scheduler_names) else None


def podgroup_last_transition(podgroup: object) -> datetime | None:
    """The newest ``lastTransitionTime`` of a PodGroup's conditions; None when it has none."""
    newest: datetime | None = None
    for c in as_list(status(podgroup).get("conditions")):
        newest = latest(newest, parse_time(as_dict(c).get("lastTransitionTime")))
    return newest


def last_scheduler_action(
    events: Iterable[object], podgroups: Iterable[object], scheduler_names: Collection[str]
) -> datetime | None:
    """The newest scheduler event time or PodGroup condition transition; None when there is none."""
    newest: datetime | None = None
    for ev in events:
        newest = latest(newest, scheduler_event_time(ev, scheduler_names))
    for pg in podgroups:
        newest = latest(newest, podgroup_last_transition(pg))
    return newest


def scheduler_silent(last: datetime | None, now: datetime, threshold: float, waiting_gangs: int) -> bool:
    """With gangs waiting, no scheduler action for longer than ``threshold`` seconds (or none at
    all) reads as a silent scheduler."""
    if waiting_gangs <= 0:
        return False
    return last is None or (now - last).total_seconds() > threshold
