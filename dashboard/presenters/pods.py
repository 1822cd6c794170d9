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
    # A restartCount written as no count (volcano.pods.restart_count_invalid): shown instead of ``restarts``.
    restarts_invalid: str
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
        restarts_invalid=shown.restarts_invalid,
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


# Pods shown per page of a Job's or PodGroup's pods table.
POD_PAGE_SIZE = 50


@dataclass
class PodTable:
    """One page of a gang's pods table.

    ``rows``: the page's PodRows (sorted by task, index, name); ``total``: all pods; ``matched``:
    the pods the filter keeps; ``first``/``last``: the 1-based positions shown (0, 0 when none);
    ``page``/``pages``: this page and how many there are; ``statuses``: [(status, count)] over all
    pods, most first; ``tasks``: [(task, count)] by task name ("" for pods without one);
    ``status``/``task``: the filter ("" for none, ``task`` None for no task filter), a status in
    the spelling of the pods' when it is one of theirs in another letter case."""

    rows: list[PodRow]
    total: int
    matched: int
    first: int
    last: int
    page: int
    pages: int
    statuses: list[tuple[str, int]]
    tasks: list[tuple[str, int]]
    status: str
    task: str | None
    per_page: int = POD_PAGE_SIZE

    @property
    def pageable(self) -> bool:
        """More pods than one page holds, or a filter is on: the counts and the filter are shown."""
        return self.total > self.per_page or bool(self.status) or self.task is not None

    @property
    def cut(self) -> bool:
        """Fewer rows are shown than there are pods."""
        return len(self.rows) < self.total

    @property
    def status_names(self) -> list[str]:
        """The pods' statuses, most first."""
        return [st for st, _n in self.statuses]

    @property
    def task_names(self) -> list[str]:
        """The pods' task names, by name (pods without a task left out)."""
        return [t for t, _n in self.tasks if t]

    @property
    def status_unmatched(self) -> bool:
        """The status filter names a status none of the pods has (it still filters, literally)."""
        return bool(self.status) and self.status not in self.status_names

    @property
    def task_unmatched(self) -> bool:
        """The task filter names a task none of the pods has (it still filters, literally)."""
        return self.task is not None and all(t != self.task for t, _n in self.tasks)


def pod_table(
    pods: Iterable[Mapping],
    *,
    status: str = "",
    task: str | None = None,
    page: int = 1,
    per_page: int = POD_PAGE_SIZE,
) -> PodTable:
    """The pods filtered by displayed status (kubectl's STATUS column; one of the pods' statuses
    in any letter case means that status) and task, sorted by task, task index and name, cut to
    page ``page`` (clamped to 1..pages). Only the shown pods become PodRows: a gang of thousands
    of pods costs one status reading per pod."""
    keyed = []
    statuses: dict[str, int] = {}
    tasks: dict[str, int] = {}
    read = []
    for pod in pods:
        shown = vpods.pod_display_status(pod).status
        ptask = pod_task(pod)
        statuses[shown] = statuses.get(shown, 0) + 1
        tasks[ptask] = tasks.get(ptask, 0) + 1
        read.append((pod, shown, ptask))
    if status and status not in statuses:
        status = next((st for st in statuses if st.lower() == status.lower()), status)
    for pod, shown, ptask in read:
        if (status and shown != status) or (task is not None and ptask != task):
            continue
        index = vpods.pod_task_index(pod)
        keyed.append(((ptask, index if index is not None else _NO_INDEX, name(pod)), pod))
    keyed.sort(key=lambda kv: kv[0])
    total = sum(statuses.values())
    matched = len(keyed)
    pages = max(1, -(-matched // per_page))
    page = min(max(1, page), pages)
    start = (page - 1) * per_page
    shown_pods = [pod for _k, pod in keyed[start : start + per_page]]
    return PodTable(
        rows=[pod_row(p) for p in shown_pods],
        total=total,
        matched=matched,
        first=start + 1 if shown_pods else 0,
        last=start + len(shown_pods),
        page=page,
        pages=pages,
        statuses=sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0])),
        tasks=sorted(tasks.items()),
        status=status,
        task=task,
        per_page=per_page,
    )
