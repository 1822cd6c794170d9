"""Pods in the pages: kubectl's columns (``dashboard.volcano.pods``) as table rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.utils.translation import gettext as _

from dashboard.presenters.phases import Phase, pod_phase
from dashboard.volcano import pods as vpods
from dashboard.volcano.objects import as_str, name, namespace, spec
from dashboard.volcano.pods import pod_blockers, pod_is_crashlooping, pod_task
from dashboard.volcano.time import created_at


def exit_text(terminated: Mapping) -> str:
    """ "exit code 137, signal 9" for a container's ``state.terminated``, as ``kubectl describe``
    prints them; "" when the exit code is missing."""
    found = vpods.exit_status(terminated)
    if found is None:
        return ""
    code, signal = found
    text = _("exit code %(code)s") % {"code": code}
    if signal:
        text += ", " + _("signal %(sig)s") % {"sig": signal}
    return text


@dataclass
class PodRow:
    name: str
    namespace: str
    task: str
    status: Phase
    ready: str
    restarts: int
    node: str
    created: datetime | None
    crashlooping: bool
    blockers: list[str]
    index: int


# Pods without a task index sort after those with one.
_NO_INDEX = 1 << 30


def pod_row(pod: Mapping) -> PodRow:
    shown = vpods.pod_display_status(pod)
    index = vpods.pod_task_index(pod)
    return PodRow(
        name=name(pod),
        namespace=namespace(pod),
        task=pod_task(pod),
        status=pod_phase(shown.status),
        ready=shown.ready_text,
        restarts=shown.restarts,
        node=as_str(spec(pod).get("nodeName")),
        created=created_at(pod),
        crashlooping=pod_is_crashlooping(pod),
        blockers=pod_blockers(pod),
        index=index if index is not None else _NO_INDEX,
    )


def pod_rows(pods: Iterable[Mapping]) -> list[PodRow]:
    rows = [pod_row(p) for p in pods]
    rows.sort(key=lambda r: (r.task, r.index, r.name))
    return rows
