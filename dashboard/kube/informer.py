"""One informer = one thread that keeps one KindStore equal to the API server's view of a kind.

The loop follows the Kubernetes "API concepts" semantics (list, watch, resourceVersion, bookmarks,
410 Gone, chunked lists) and the design of kopf's watching loop (see shared/STYLE.md):

1. Resolve the served version (discovery.py). Absent CRD: state ``not_installed``; checked again
   every ``not_installed_recheck`` seconds so installing Volcano later just works.
2. Paginated list (``limit``/``continue``); the result *replaces* the store (objects that vanished
   meanwhile are removed, nothing is duplicated; unchanged ones keep their change counter).
   A 410 in the middle of a paginated list (expired continue token: the server compacted the
   list's resourceVersion, ~5 min on etcd) restarts ONCE with an unpaginated list (``limit=0``, one
   consistent read), as client-go's reflector falls back to a full list on "Expired". Restarting
   paginated again would loop forever on a kind whose list takes longer than the retained history
   (100,000 Events under churn: docs/benchmarks.md). From then on this informer lists that kind
   unpaginated (``paginate`` is False), so later re-lists do not waste pages first.
3. Watch from the list's resourceVersion with ``allowWatchBookmarks=true`` and a server-side
   ``timeoutSeconds``; the resourceVersion advances on every event including BOOKMARK; the read
   timeout on the stream is an inactivity timeout (no bytes for that long: reconnect).
   A normal end of the stream re-watches from the last resourceVersion (no re-list).
4. 410 Gone (as an HTTP status or an ERROR event): re-list (never resume from the expired version).
   So does 504 "Too large resource version" (``TooLargeResourceVersion``): the server has not
   reached our resourceVersion, so it came from another history (the API server's storage was
   replaced, the simulator restarted); retrying it would either fail forever or, once the new
   history passes it, silently miss every change in between, as client-go's reflector knows.
5. Any other failure: state ``stale`` (was synced), ``unreachable`` (never synced), ``forbidden``
   (401/403), ``not_installed`` (404), with the error's category (``rejected`` for 401 and a TLS
   certificate that fails verification: credentials or trust rejected, not an outage); sleep with
   exponential backoff and jitter, at least the server's Retry-After; then reconnect. A watch that
   ends quickly without delivering anything counts as a failure too, so a server that drops watches
   cannot drive a hot loop. Each list or watch request of the reconnect marks since when it waits
   for an answer (``waiting_since``) until its response headers arrive or it fails: a server that
   accepts connections and answers nothing holds it for the read timeout, and meanwhile the last
   error is only how the previous attempt ended.
6. Before every (re)connect, ``client.reload_if_changed()`` re-reads a kubeconfig that changed on
   disk (then discovery is redone), so rotated credentials/CA need no restart.

The error policy (``ErrorPolicy``) is separate from the loop, as in lightkube.
"""

from __future__ import annotations

import json
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dashboard.kube import memory, trim
from dashboard.kube.client import (
    Gone,
    KubeClient,
    KubeError,
    TooLargeResourceVersion,
    abort_response,
    error_from_status,
)
from dashboard.kube.discovery import Discovery
from dashboard.kube.kinds import KindSpec
from dashboard.kube.store import KindStore
from dashboard.priority import REQUESTS

log = logging.getLogger(__name__)

WatchLines = AbstractContextManager[Iterator[bytes]]  # an open watch stream's raw lines


@dataclass
class InformerOptions:
    """Timing knobs (seconds). Tests shrink them so recovery tests run in seconds."""

    page_size: int = 500
    watch_timeout: int = 300  # server-side timeoutSeconds of each watch request
    inactivity_timeout: float = 70.0  # stream read timeout; bookmarks may never come
    connect_timeout: float = 5.0
    request_timeout: float = 30.0  # read timeout of list/discovery requests
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    backoff_factor: float = 2.0
    jitter: float = 0.2  # +-20 % so many workers do not reconnect in lockstep
    min_watch_seconds: float = 1.0  # a shorter watch with no events is treated as a failure
    not_installed_recheck: float = 60.0


class Backoff:
    """Exponential backoff with jitter: initial * factor**n, capped, then scaled by 1 +- jitter."""

    def __init__(self, options: InformerOptions, rng: random.Random | None = None):
        self.options = options
        self.failures = 0
        self.rng = rng or random.Random()

    def reset(self) -> None:
        self.failures = 0

    def next_delay(self, retry_after: float | None = None) -> float:
        o = self.options
        base = min(o.backoff_max, o.backoff_initial * (o.backoff_factor**self.failures))
        self.failures += 1
        delay = base * (1 + self.rng.uniform(-o.jitter, o.jitter))
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay


class ErrorPolicy:
    """Maps a failure to (store state, whether to clear the cached objects)."""

    @staticmethod
    def classify(exc: KubeError, was_synced: bool) -> tuple[str, bool]:
        if exc.status in (401, 403):
            return "forbidden", True  # do not keep showing data the user may no longer read
        if exc.status == 404:
            return "not_installed", True
        return ("stale" if was_synced else "unreachable"), False


def _shape_ok(spec: KindSpec, obj: dict[str, Any]) -> bool:
    """Whether an object from a fallback API version can be read as the expected version."""
    if not isinstance(obj.get("metadata"), dict):
        return False
    body = obj.get("spec", {})
    if not isinstance(body, dict):
        return False
    if spec.kind == "Job":
        return isinstance(body.get("tasks", []), list)
    if spec.kind == "PodGroup":
        return isinstance(body.get("minMember", 0), int)
    return True


class Informer:
    """Keeps ``store`` in sync with ``spec`` (optionally narrowed by ``field_selector``).

    ``accept(obj)``: client-side filter on the trimmed object (False: not cached / removed).
    ``owns(obj)``: which cached objects this informer is responsible for when a re-list diffs
    (several informers may share one store). ``counters`` records lists/watches/events for tests
    and the benchmark.
    """

    def __init__(
        self,
        spec: KindSpec,
        client: KubeClient,
        store: KindStore,
        discovery: Discovery,
        options: InformerOptions,
        *,
        field_selector: str | None = None,
        accept: Callable[[dict[str, Any]], bool] | None = None,
        owns: Callable[[dict[str, Any]], bool] | None = None,
        label: str = "",
        state_sink: Callable[[Informer], None] | None = None,
        gate: Callable[[threading.Event], None] | None = None,
    ):
        self.spec = spec
        self.client = client
        self.store = store
        self.discovery = discovery
        self.options = options
        self.field_selector = field_selector
        self.accept = accept
        self.owns = owns
        self.label = label or spec.name
        self.backoff = Backoff(options)
        self.resource_version: str | None = None
        self.version: str | None = None
        self.fallback = False  # watching a served version other than spec.version (discovery.py)
        self.synced_once = False
        # False after a continue token expired mid-list: list this kind in one request from then on.
        self.paginate = True
        self.counters = {
            "lists": 0,
            "list_pages": 0,
            "list_fallbacks": 0,  # paginated lists restarted unpaginated after 410 Expired
            "watches": 0,
            "events": 0,
            "bookmarks": 0,
            "errors": 0,
            "relists_410": 0,
            "relists_too_large": 0,  # re-lists after 504 "Too large resource version"
        }
        self.last_event_at: datetime | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: list[Any] = []
        self._early: EarlyWatch | None = None  # opened during the running paginated list
        self._state_sink = state_sink
        # Called once before the first list: ClusterCache orders the kinds' first lists with it
        # (CacheOptions.start_order).
        self._gate = gate
        # Own state (several informers may feed one store; the cache combines them).
        self.state = "syncing"
        self.last_error = ""
        self.detail = ""
        self.error_category = ""  # KubeError.category of last_error
        # When a request of a reconnect after an error went out, until the server answers it
        # (response headers) or it fails: the kind says since when it waits
        # (KindState.waiting_since), last_error being the previous attempt's cause.
        self.waiting_since: datetime | None = None
        self._client_reloads = client.reloads

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.label}", daemon=True)
        self._thread.start()

    def stop(self, join_timeout: float = 5.0) -> None:
        self._stop.set()
        early = self._early
        if early is not None:
            early.close()
        for raw in list(self._live):
            abort_response(raw)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(join_timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _set_state(
        self, name: str, error: str | None = None, detail: str | None = None, category: str = ""
    ) -> None:
        self.state = name
        if error is not None:
            self.last_error = error
            self.error_category = category
        if error is not None or name == "synced":
            # Answered, or failed with the error now shown: no request waits any more.
            self.waiting_since = None
        if name == "synced":
            self.error_category = ""
        if detail is not None:
            self.detail = detail
        if self._state_sink is not None:
            self._state_sink(self)

    def _awaiting(self, sent: bool) -> None:
        """A list or watch request was just sent (``sent``) or the server answered it (its response
        headers arrived). While the kind reconnects after an error (not synced, and past its first
        list's "syncing"), its state says since when the request waits for an answer: the last
        error is only how the previous attempt ended. A failure clears the mark with its own error
        (``_set_state``)."""
        if sent:
            if self.state in ("synced", "syncing"):
                return
            self.waiting_since = datetime.now(UTC)
        elif self.waiting_since is None:
            return
        else:
            self.waiting_since = None
        if self._state_sink is not None:
            self._state_sink(self)

    # -- the loop -------------------------------------------------------------------------
    def _run(self) -> None:
        rv: str | None = None
        relist_streak = 0  # 410/504-too-large answers since the last successful list
        if self._gate is not None:
            self._gate(self._stop)
        while not self._stop.is_set():
            try:
                if self._kubeconfig_reloaded():
                    # Possibly another cluster now: re-list (the store diffs) rather than resume
                    # from a resourceVersion that may mean nothing there.
                    rv = None
                if self.version is None:
                    resolved = self.discovery.resolve(self.spec)
                    if resolved.version is None:
                        self._clear()
                        self._set_state("not_installed", error="", detail=resolved.detail)
                        self._sleep(self.options.not_installed_recheck)
                        self.discovery.invalidate(self.spec.group)
                        continue
                    self.version = resolved.version
                    self.detail = resolved.detail
                    self.fallback = resolved.fallback
                if rv is None:
                    rv = self._list()
                    self.backoff.reset()
                    relist_streak = 0
                    # The list's pages are garbage now; give the C allocator's free memory back
                    # (dashboard/kube/memory.py: tens of MB at 50,000 pods).
                    memory.release_free_memory()
                rv = self._watch(rv)
            except (Gone, TooLargeResourceVersion) as exc:
                # The history no longer (410) or not yet (504 too large) holds our version: re-list,
                # never resume from it. Two in a row (a broken server) back off like any other
                # failure.
                rv = None
                relist_streak += 1
                self._history_lost(exc, relist_streak)
            except KubeError as exc:
                self.counters["errors"] += 1
                if self._stop.is_set():
                    break
                state, clear = ErrorPolicy.classify(exc, self.synced_once)
                if state == "not_installed":
                    self.discovery.invalidate(self.spec.group)
                    self.version = None
                    rv = None
                if state == "forbidden":
                    rv = None
                if clear:
                    self._clear()
                    self.synced_once = False
                self._set_state(state, error=exc.describe(), category=exc.category)
                delay = self.backoff.next_delay(exc.retry_after)
                log.info("%s: %s; retrying in %.1fs", self.label, exc.describe(), delay)
                self._sleep(delay)
            except Exception as exc:  # noqa: BLE001 - a bug must not kill the informer silently
                self.counters["errors"] += 1
                log.exception("%s: unexpected error", self.label)
                self._set_state("stale" if self.synced_once else "unreachable", error=repr(exc))
                rv = None
                self._sleep(self.backoff.next_delay())
        self._close_early()

    def _kubeconfig_reloaded(self) -> bool:
        """Pick up a changed kubeconfig before every (re)connect: rotated credentials or CA, or a
        cluster restarted with new ones, need no dashboard restart. True when it was reloaded
        (the kind's version is resolved again). ``reloads`` counts loads: informers sharing the
        client each notice a reload done by whichever of them reconnected first."""
        self.client.reload_if_changed()
        if self.client.reloads == self._client_reloads:
            return False
        self._client_reloads = self.client.reloads
        log.info("%s: kubeconfig reloaded; re-listing", self.label)
        self.discovery.invalidate(self.spec.group)
        self.version = None
        return True

    def _history_lost(self, exc: Gone | TooLargeResourceVersion, streak: int) -> None:
        """The watch history no longer (410) or not yet (504 too large) holds our version: the
        caller re-lists. ``streak``: such answers since the last successful list."""
        self.counters["errors"] += 1
        self.counters["relists_410" if isinstance(exc, Gone) else "relists_too_large"] += 1
        if streak == 1:
            # At once, even after an outage's failed reconnects (their backoff is not this
            # one's): a restarted API server answers 410 to the first watch, and until the
            # re-list the pages would show the old history as current.
            log.info("%s: %s; re-listing", self.label, exc.describe())
            self._awaiting(False)  # answered; the re-list's request is another one
            return
        # Again without a successful list in between: a broken server. Back off, and say the data
        # is not current meanwhile.
        self._set_state("stale" if self.synced_once else "unreachable", error=exc.describe())
        delay = self.backoff.next_delay(exc.retry_after)
        log.info("%s: %s again; re-listing in %.1fs", self.label, exc.describe(), delay)
        self._sleep(delay)

    def _clear(self) -> None:
        # The objects can no longer be read; they are not deleted.
        self.store.clear(owns=self.owns)

    def _path(self) -> str:
        return self.spec.path(self.version)

    def _trimmed(self, raw: dict[str, Any]) -> dict[str, Any] | None:
        # The filter reads fields trimming keeps, so it runs first: rejected objects cost no trim.
        if self.accept is not None and not self.accept(raw):
            return None
        return self.spec.trim(raw)

    def _list(self) -> str:
        """Paginated list; replaces the store; returns the list's resourceVersion.

        Raises Gone when an unpaginated list (or the first page) gets 410, KubeError otherwise.
        A list of several pages opens the watch that follows it once the first page (and so the
        list's resourceVersion) is known (``EarlyWatch``), so the watch history need not outlast
        the list.
        """
        try:
            return self._list_pages()
        except BaseException:
            self._close_early()
            raise

    def _close_early(self) -> None:
        early, self._early = self._early, None
        if early is not None:
            early.close()

    def _list_pages(self) -> str:
        self.counters["lists"] += 1
        objs: list[dict[str, Any]] = []
        cont = ""
        while True:
            # limit=0 asks for everything in one consistent response (Kubernetes API concepts,
            # "Retrieving large results sets in chunks").
            query: list[tuple[str, object]] = [("limit", self.options.page_size if self.paginate else 0)]
            if cont:
                query.append(("continue", cont))
            if self.field_selector:
                query.append(("fieldSelector", self.field_selector))
            self._awaiting(True)
            try:
                body = self.client.get_json(self._path(), query, answered=lambda: self._awaiting(False))
            except Gone:
                if not cont:
                    raise
                # The continue token expired between pages. Starting over paginated could expire
                # again, forever; one unpaginated list cannot expire midway.
                log.info("%s: continue token expired mid-list; re-listing unpaginated", self.label)
                self.counters["list_fallbacks"] += 1
                self.paginate = False
                self._close_early()
                objs, cont = [], ""
                continue
            self.counters["list_pages"] += 1
            start = len(objs)
            for item in body.get("items") or []:
                if not isinstance(item, dict):
                    continue
                if self.fallback and not _shape_ok(self.spec, item):
                    raise KubeError(
                        404, "UnsupportedVersion", f"{self.detail}; but its objects do not have that shape"
                    )
                obj = self._trimmed(item)
                if obj is not None:
                    objs.append(obj)
            meta = body.get("metadata") or {}
            cont = meta.get("continue") or ""
            rv = meta.get("resourceVersion") or ""
            # The raw page is garbage now: free it before the next one is decoded (a page of 500
            # pods is ~3 MB of Python objects).
            del body, meta
            if cont and self._early is None and rv:
                # More pages follow: a watch from the list's resourceVersion opened only after the
                # last one would need the server to keep every change made while they load (a list
                # of 100,000 Events outlasts the simulator's 10,000 retained events under churn:
                # 410, and the list again, forever).
                self._early = EarlyWatch(self, rv)
            # Copied now, the page's objects fill the holes the page left (trim.compact).
            objs[start:] = [trim.compact(o) for o in objs[start:]]
            # A capped store (events) prunes as the list goes, so the objects it would drop at
            # the end are never all held at once.
            objs = self.store.bound_listed(objs)
            if not cont:
                break
        self.store.replace(self.store.bound_listed(objs, final=True), owns=self.owns)
        del objs
        self.synced_once = True
        self._set_state("synced", error="")
        self.resource_version = rv
        return rv

    def _watch(self, rv: str) -> str:
        """One watch request (or the one the list opened early); returns the resourceVersion to
        resume from. Raises Gone, TooLargeResourceVersion or KubeError."""
        early, self._early = self._early, None
        source: WatchLines
        if early is not None and early.rv == rv:
            source, started = early.stream(), early.started
        else:
            if early is not None:
                early.close()
            self.counters["watches"] += 1
            source, started = self._open_watch(rv), time.monotonic()
            self._awaiting(True)  # the request is sent when the stream is entered
        delivered = 0
        with source as lines:
            if self.state != "synced":
                self._set_state("synced")  # answered: the mark goes with it
            for line in lines:
                if self._stop.is_set():
                    break
                try:
                    event = json.loads(line)
                except ValueError as exc:
                    raise KubeError(0, "BadWatchEvent", f"undecodable watch line: {exc}") from exc
                if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
                    raise KubeError(0, "BadWatchEvent", "watch event without an object")
                etype, raw = event.get("type"), event["object"]
                if etype == "ERROR":
                    code = int(raw.get("code") or 0)
                    raise error_from_status(code, str(raw.get("reason") or "Error"), raw)
                new_rv = (raw.get("metadata") or {}).get("resourceVersion")
                delivered += 1
                self.last_event_at = datetime.now(UTC)
                if etype == "BOOKMARK":
                    self.counters["bookmarks"] += 1
                else:
                    self.counters["events"] += 1
                    REQUESTS.give_way()
                    self._apply(etype, raw)
                if new_rv:
                    rv = new_rv
                    self.resource_version = rv
        if self._stop.is_set():
            return rv
        if delivered == 0 and time.monotonic() - started < self.options.min_watch_seconds:
            raise KubeError(0, "WatchClosed", "the API server closed the watch immediately")
        self.backoff.reset()
        return rv

    def _open_watch(
        self, rv: str, holder: list[Any] | None = None
    ) -> AbstractContextManager[Iterator[bytes]]:
        """The watch request from ``rv``: a context manager yielding its raw lines."""
        query: list[tuple[str, object]] = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", self._watch_timeout()),
        ]
        if rv:
            query.append(("resourceVersion", rv))
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        live = self._live if holder is None else holder
        return self.client.stream_lines(self._path(), query, self.options.inactivity_timeout, holder=live)

    def _watch_timeout(self) -> int:
        # Spread re-watches of many kinds/workers over time (jitter) while staying near the setting.
        base = self.options.watch_timeout
        return max(1, int(base * random.uniform(0.9, 1.0)))

    def _apply(self, etype: str | None, raw: dict[str, Any]) -> None:
        if etype == "DELETED":
            self.store.delete(self.spec.trim(raw))
            return
        if etype not in ("ADDED", "MODIFIED"):
            return
        obj = self._trimmed(raw)
        if obj is None:
            # No longer matches the client-side filter (e.g. annotation removed): drop it.
            self.store.delete(self.spec.trim(raw))
        else:
            self.store.upsert(obj)


class EarlyWatch:
    """The watch that follows a paginated list, opened from the list's resourceVersion as soon as
    the first page gave it; a thread of its own keeps its lines (bytes) in memory until the list
    is stored and ``Informer._watch`` reads them, in order, then the rest of the stream.

    The buffer holds the changes made while the later pages load (tens of thousands of lines for
    a list of 100,000 Events under churn); the store applies them after the list's ``replace``,
    as it would the same events from a watch opened after the list.
    """

    def __init__(self, informer: Informer, rv: str):
        self.rv = rv
        self.started = time.monotonic()
        informer.counters["watches"] += 1
        self._lines: queue.SimpleQueue[bytes | BaseException | None] = queue.SimpleQueue()
        self._live: list[Any] = []
        self._closed = threading.Event()
        # Opened here, before the next page is asked for: the server holds the watch from then on.
        opened = ExitStack()
        lines: Iterator[bytes] = iter(())
        informer._awaiting(True)
        try:
            lines = opened.enter_context(informer._open_watch(rv, holder=self._live))
        except KubeError as exc:  # handled as the watch's own failure, once the list is stored
            self._lines.put(exc)
        finally:
            informer._awaiting(False)  # answered, or failed: the list's next page goes on
        self._thread = threading.Thread(
            target=self._read, args=(opened, lines), name=f"informer-{informer.label}-early", daemon=True
        )
        self._thread.start()

    def _read(self, opened: ExitStack, lines: Iterator[bytes]) -> None:
        try:
            with opened:
                for line in lines:
                    if self._closed.is_set():
                        break
                    self._lines.put(line)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading informer
            self._lines.put(exc)
        self._lines.put(None)

    @contextmanager
    def stream(self) -> Iterator[Iterator[bytes]]:
        """The stream's lines from its start: those kept so far, then the rest as they come."""
        try:
            yield self._iter()
        finally:
            self.close()

    def _iter(self) -> Iterator[bytes]:
        while True:
            item = self._lines.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self, join_timeout: float = 5.0) -> None:
        """End the stream (idempotent) and drop what it kept."""
        self._closed.set()
        for raw in list(self._live):
            abort_response(raw)
        if self._thread is not threading.current_thread():
            self._thread.join(join_timeout)
