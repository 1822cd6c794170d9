"""One writer: who records into a shared history store.

* ``FileLockElector``: a SQLite file is written by the one process that holds an exclusive
  ``flock`` on ``<file>.lock`` (the gunicorn workers of one pod); the others read.
* ``LeaseElector``: replicas sharing a PostgreSQL elect one recorder with a
  coordination.k8s.io/v1 Lease (the kubernetes client's CoordinationV1Api, as client-go's
  leaderelection does): create it when absent, renew it while holding it, take it over when its
  ``renewTime`` is older than ``leaseDurationSeconds``. Every write is an update at the read
  resourceVersion, so of two replicas taking over at once the API server lets one win (409
  Conflict for the other). A clean stop gives the Lease up (holder cleared) so the next replica
  takes over at once.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import IO, Any

from dashboard.history.recorder import Elector
from dashboard.kube.cache import ClusterCache

log = logging.getLogger(__name__)


class FileLockElector(Elector):
    """Leads while holding ``flock(LOCK_EX)`` on ``path``; tries again every ``retry_seconds``."""

    def __init__(self, path: str, retry_seconds: float = 5.0):
        self.path = path
        self.retry_seconds = retry_seconds
        self._file: IO[str] | None = None
        self._next_try = 0.0

    def leading(self) -> bool:
        if self._file is not None:
            return True
        now = time.monotonic()
        if now < self._next_try:
            return False
        self._next_try = now + self.retry_seconds
        try:
            handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held while leading
        except OSError as exc:
            log.warning("history lock %s cannot be opened: %s", self.path, exc)
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._file = handle
        return True

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def _micro(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(value: Any) -> datetime | None:
    from dashboard.volcano.time import parse_time

    return parse_time(value)


class LeaseElector(Elector):
    """Holds the Lease ``namespace/name`` as ``identity``. ``leading()`` renews when
    ``renew_seconds`` passed since the last renewal (an API call at most that often) and says
    whether this replica holds a Lease it renewed within ``duration_seconds``. ``clock``: the
    time written into the Lease and compared with the other holder's renewTime."""

    def __init__(
        self,
        api_client: Any,
        namespace: str,
        name: str,
        identity: str,
        duration_seconds: int = 15,
        renew_seconds: float = 5.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        from kubernetes import client

        self.api = client.CoordinationV1Api(api_client)
        self.namespace, self.name, self.identity = namespace, name, identity
        self.duration = duration_seconds
        self.renew_seconds = renew_seconds
        self.clock = clock
        self._renewed: datetime | None = None  # our last successful write
        self._next = 0.0
        self.conflicts = 0  # 409 answers: another replica wrote first

    def _held(self) -> bool:
        return self._renewed is not None and self.clock() - self._renewed < timedelta(seconds=self.duration)

    def leading(self) -> bool:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.renew_seconds
            self._try()
        return self._held()

    def _try(self) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        now = self.clock()
        try:
            try:
                lease = self.api.read_namespaced_lease(self.name, self.namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise
                body = client.V1Lease(
                    metadata=client.V1ObjectMeta(name=self.name, namespace=self.namespace),
                    spec=self._spec(now, transitions=0),
                )
                self.api.create_namespaced_lease(self.namespace, body)
                self._renewed = now
                return
            spec = lease.spec or client.V1LeaseSpec()
            holder = spec.holder_identity or ""
            renew = spec.renew_time
            renew_at = renew if isinstance(renew, datetime) else _parse(renew)
            duration = spec.lease_duration_seconds or self.duration
            expired = renew_at is None or now - renew_at >= timedelta(seconds=duration)
            if holder and holder != self.identity and not expired:
                self._renewed = None
                return
            transitions = (spec.lease_transitions or 0) + (0 if holder == self.identity else 1)
            lease.spec = self._spec(now, transitions, acquired=None if holder == self.identity else now)
            if holder == self.identity and spec.acquire_time is not None:
                lease.spec.acquire_time = spec.acquire_time
            # replace = update at lease.metadata.resource_version: 409 when someone wrote since.
            self.api.replace_namespaced_lease(self.name, self.namespace, lease)
            self._renewed = now
        except ApiException as exc:
            if exc.status == 409:
                self.conflicts += 1
                self._renewed = None
                self._next = 0.0  # read again at the next step
            else:
                log.warning("history lease %s/%s: %s %s", self.namespace, self.name, exc.status, exc.reason)
        except Exception as exc:  # the API server is unreachable: leadership lapses with the lease
            log.warning("history lease %s/%s: %s", self.namespace, self.name, exc)

    def _spec(self, now: datetime, transitions: int, acquired: datetime | None = None) -> Any:
        from kubernetes import client

        return client.V1LeaseSpec(
            holder_identity=self.identity,
            lease_duration_seconds=self.duration,
            acquire_time=acquired or now,
            renew_time=now,
            lease_transitions=transitions,
        )

    def release(self) -> None:
        """Give the Lease up (holder cleared, as client-go's ReleaseOnCancel), so another replica
        takes over without waiting for it to expire."""
        from kubernetes.client.exceptions import ApiException

        if self._renewed is None:
            return
        self._renewed = None
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace)
            if lease.spec is not None and lease.spec.holder_identity == self.identity:
                lease.spec.holder_identity = None
                lease.spec.renew_time = None
                self.api.replace_namespaced_lease(self.name, self.namespace, lease)
        except (ApiException, OSError) as exc:
            log.info("history lease not released (it expires instead): %s", exc)


def elector_from_settings(cache: ClusterCache) -> Elector:
    from django.conf import settings

    lease = settings.VOLCANO_UI_HISTORY_LEASE
    if lease and cache.client is not None and cache.client.api is not None:
        ns, name = lease.split("/", 1)
        identity = f"{socket.gethostname()}_{os.getpid()}"
        duration = max(15, int(settings.VOLCANO_UI_HISTORY_SAMPLE_SECONDS))
        return LeaseElector(cache.client.api, ns, name, identity, duration_seconds=duration)
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine.endswith("sqlite3"):
        return FileLockElector(str(settings.DATABASES["default"]["NAME"]) + ".lock")
    return Elector()
