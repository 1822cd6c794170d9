"""Volcano's queue controller, simulated (volcano-sh/volcano ``pkg/controllers/queue``).

- A queue with no state becomes ``Open`` on its first sync; an empty ``spec.parent`` is set to
  ``root`` (except on ``root`` itself).
- ``CloseQueue``: Open -> ``Closed`` when no PodGroup references the queue, else ``Closing``;
  Closing -> Closed once those PodGroups are gone. Closing a parent closes its children and marks
  them ``volcano.sh/closed-by-parent: "true"``; opening the parent reopens exactly those.
- ``OpenQueue``: any state -> ``Open``.
- Only ``status.state`` is written (since v1.11 the PodGroup counters are not written).
"""

from __future__ import annotations

import contextlib

from .store import ApiError

COMPONENT = "vc-controller-manager"
CLOSED_BY_PARENT = "volcano.sh/closed-by-parent"


class QueueController:
    def __init__(self, controllers) -> None:
        self.c = controllers

    def sync(self) -> None:
        c = self.c
        dirty, c.dirty_queues = c.dirty_queues, {}
        for name in dirty:
            c.guard(f"queue {name}", self._sync_one, name)

    def _sync_one(self, name: str) -> None:
        queue = self.c.queues.get(name)
        if queue is None:
            return
        spec = queue.obj.get("spec") or {}
        if name != "root" and not spec.get("parent"):
            self._write(name, lambda obj: obj.setdefault("spec", {}).__setitem__("parent", "root"))
        if not queue.state:
            self._set_state(name, "Open")
        elif queue.state == "Closing" and not queue.podgroups:
            self._set_state(name, "Closed")

    def command(self, name: str, action: str) -> None:
        queue = self.c.queues.get(name)
        if queue is None:
            return
        if action == "CloseQueue":
            self._close(name, by_parent=False)
            self.c.events.record(queue.obj, "Normal", "CloseQueue", "Close queue succeed", COMPONENT)
        elif action == "OpenQueue":
            self._open(name, by_parent=False)
            self.c.events.record(queue.obj, "Normal", "OpenQueue", "Open queue succeed", COMPONENT)

    def _close(self, name: str, *, by_parent: bool) -> None:
        queue = self.c.queues.get(name)
        if queue is None:
            return
        if queue.state in ("Closed", "Closing") and by_parent:
            return  # closed on its own: opening the parent must not reopen it
        self._set_state(name, "Closing" if queue.podgroups else "Closed")
        if by_parent:
            self._write(
                name,
                lambda obj: (
                    obj["metadata"].setdefault("annotations", {}).__setitem__(CLOSED_BY_PARENT, "true")
                ),
            )
        for child in self.c.queue_children(name):
            self._close(child.name, by_parent=True)

    def _open(self, name: str, *, by_parent: bool) -> None:
        queue = self.c.queues.get(name)
        if queue is None:
            return
        annotations = (queue.obj.get("metadata") or {}).get("annotations") or {}
        if by_parent and annotations.get(CLOSED_BY_PARENT) != "true":
            return
        self._set_state(name, "Open")
        if CLOSED_BY_PARENT in annotations:
            self._write(name, lambda obj: obj["metadata"].get("annotations", {}).pop(CLOSED_BY_PARENT, None))
        for child in self.c.queue_children(name):
            self._open(child.name, by_parent=True)

    def _set_state(self, name: str, state: str) -> None:
        queue = self.c.queues.get(name)
        if queue is None or queue.state == state:
            return
        self._write(name, lambda obj: obj.setdefault("status", {}).__setitem__("state", state))
        if state == "Open":
            self.c.capacity_epoch += 1  # waiting PodGroups may enqueue now

    def _write(self, name: str, fn) -> None:
        with contextlib.suppress(ApiError):
            self.c.write("Queue", None, name, fn)
