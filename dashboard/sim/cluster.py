"""``SimulatedCluster``: the facade everybody's tests, benchmarks and the demo use.

It wires a SimClock, a Store, the users (Authorizer), the HTTP API server and, optionally, the
Volcano controllers (``dashboard.sim.controllers``) and a scenario (``dashboard.sim.scenarios``),
both imported lazily so the core works on its own.

Typical use::

    cluster = SimulatedCluster(seed=1, controllers=False)
    url = cluster.start()                       # http://127.0.0.1:<ephemeral port>
    cluster.write_kubeconfig(tmp / "kubeconfig")
    ...
    cluster.advance(30)                         # 30 simulated seconds
    cluster.stop()
"""

from __future__ import annotations

import base64
import json
import os
import random
import secrets
import threading
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from .auth import Authorizer, User
from .clock import SimClock
from .kinds import NAMESPACE, QUEUE
from .server import SimServer
from .store import Store

# resourceVersions of run N (of one state file) lie in (N * EPOCH_SPAN, (N + 1) * EPOCH_SPAN]
# unless a run commits more than EPOCH_SPAN changes (days of the `large` scenario's churn).
EPOCH_SPAN = 10**9

# Namespaces every real cluster has.
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class SimulatedCluster:
    """A simulated Volcano cluster speaking the Kubernetes REST API over HTTP on loopback.

    Arguments: ``seed`` (uids, generated names, controller randomness and the fault error rate are
    all derived from it), ``scenario`` ("empty", "demo", a YAML/JSON file path; see
    scenarios.load_scenario), ``controllers`` (run Volcano's controllers on ``advance``),
    ``speed`` (simulated seconds per wall second for ``start_realtime``), ``history_size`` (watch
    events retained per kind), ``bookmark_interval`` (wall seconds between watch BOOKMARKs),
    ``watch_timeout`` (wall seconds a watch without timeoutSeconds stays open),
    ``start_time`` (the clock's start), ``bootstrap`` (create the namespaces every cluster has and
    Volcano's ``root`` and ``default`` queues, Open, as vc-scheduler does at startup),
    ``webhooks`` (run Volcano's mutating and validating admission webhooks, see webhooks.py; off by
    default so that any object the CRD schemas admit can be stored), ``state_file`` (a path: the
    admin token and the TLS CA/serving certificate are read from it when it holds a valid identity,
    else created and written there, mode 0600; so a cluster restarted with the same file keeps its
    token and certificates and clients' kubeconfigs stay valid; an explicit ``admin_token`` wins
    over the file's and is saved; the file also keeps a run counter, ``epoch``, incremented by each
    cluster made with it, and the store's resourceVersions then start above ``epoch * EPOCH_SPAN``,
    so a client still holding a resourceVersion of an earlier run gets 410 Expired (older than the
    new history) or 504 "Too large resource version" (newer than the store) and re-lists, as after
    a real cluster's etcd was replaced; see store.Store). ``resource_version_base``: the store's
    base explicitly (overrides the epoch's; default: 0 without a state file, i.e. resourceVersions
    1, 2, 3, ... deterministically).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        scenario: str | Path = "empty",
        controllers: bool = True,
        speed: float = 1.0,
        history_size: int = 10000,
        bookmark_interval: float = 10.0,
        watch_timeout: float = 1800.0,
        start_time: datetime | None = None,
        bootstrap: bool = True,
        admin_token: str | None = None,
        webhooks: bool = False,
        state_file: str | Path | None = None,
        resource_version_base: int | None = None,
        uid_salt: int = 0,
    ) -> None:
        self.seed = seed
        self.state_file = Path(state_file) if state_file is not None else None
        self.epoch = 0  # runs made with this state file, this one included (0: no state file)
        tls_material = None
        if self.state_file is not None:
            from .tls import load_identity, new_material, save_identity

            identity = load_identity(self.state_file)
            if identity is not None:
                admin_token = admin_token or identity[0]
                tls_material = identity[1]
            else:
                tls_material = new_material()
            admin_token = admin_token or f"sim-admin-{secrets.token_hex(16)}"
            if identity is None or identity[0] != admin_token:
                save_identity(self.state_file, admin_token, tls_material)
            from .tls import bump_epoch

            self.epoch = bump_epoch(self.state_file)
        if resource_version_base is None:
            resource_version_base = self.epoch * EPOCH_SPAN
        self.speed = speed
        self.clock = SimClock(start_time)
        self.store = Store(
            self.clock,
            history_size,
            seed=seed,
            resource_version_base=resource_version_base,
            uid_salt=uid_salt,
        )
        self.rng = random.Random(seed)
        self.auth = Authorizer(admin_token)
        self.server = SimServer(
            self.store,
            self.clock,
            self.auth,
            seed=seed,
            bookmark_interval=bookmark_interval,
            watch_timeout=watch_timeout,
            advance=self.advance,
        )
        self.server.tls = tls_material
        self.server.components_hook = self._components_down
        self._advance_lock = threading.RLock()
        self._realtime: threading.Thread | None = None
        self._realtime_stop = threading.Event()
        if bootstrap:
            self._bootstrap()
        if webhooks:
            from .webhooks import install

            install(self.store)
        self.controllers: Any = None
        if controllers:
            from .controllers import Controllers  # lazily: the behaviour lives in its own module

            self.controllers = Controllers(self.store, self.clock, random.Random(seed))
        if str(scenario) != "empty":
            from .scenarios import load_scenario

            load_scenario(self, scenario)

    def _components_down(self, names: set[str]) -> None:
        from .components import set_down

        with self._advance_lock:  # never in the middle of a controllers' tick
            set_down(self, names)

    def _bootstrap(self) -> None:
        for ns in BOOTSTRAP_NAMESPACES:
            if self.store.try_get(NAMESPACE, None, ns) is None:
                self.store.create(NAMESPACE, {"metadata": {"name": ns}})
        queues: tuple[dict[str, Any], ...] = (
            {"metadata": {"name": "root"}, "spec": {"weight": 1, "reclaimable": False}},
            {"metadata": {"name": "default"}, "spec": {"weight": 1, "reclaimable": True, "parent": "root"}},
        )
        for q in queues:
            if self.store.try_get(QUEUE, None, q["metadata"]["name"]) is None:
                self.store.create(QUEUE, q)
                self.store.mutate(
                    QUEUE,
                    None,
                    q["metadata"]["name"],
                    lambda o: o.__setitem__("status", {"state": "Open", "reservation": {}}),
                )

    # ------------------------------------------------------------ lifecycle
    def start(self, host: str = "127.0.0.1", port: int = 0, *, tls_port: int | None = 0) -> str:
        """Start serving; returns the plain-HTTP base URL ("http://127.0.0.1:<port>"; port 0 =
        ephemeral). Also serves HTTPS on ``tls_port`` (``https_url``; None = no TLS listener),
        which kubeconfigs point at because kubectl sends tokens only over TLS."""
        return self.server.start(host, port, tls_port=tls_port)

    def stop(self) -> None:
        """Stop the realtime thread, the controllers (if they have a ``stop``) and the server."""
        self._realtime_stop.set()
        if self._realtime is not None:
            self._realtime.join(timeout=5)
            self._realtime = None
        stop = getattr(self.controllers, "stop", None)
        if callable(stop):
            stop()
        self.server.stop()

    def __enter__(self) -> SimulatedCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def https_url(self) -> str:
        return self.server.https_url

    @property
    def admin_token(self) -> str:
        return self.auth.admin_token

    # ------------------------------------------------------------ time
    def advance(self, seconds: float) -> None:
        """Run ``seconds`` of simulated time: the controllers' ``advance`` when they run (they move
        the clock), else just the clock. Serialised, so the realtime thread and tests never interleave."""
        if seconds < 0:
            raise ValueError("cannot advance by a negative amount")
        with self._advance_lock:
            if self.controllers is not None:
                self.controllers.advance(seconds)
            else:
                self.clock.advance(seconds)

    def start_realtime(self, tick: float = 0.25) -> None:
        """Advance the simulated clock with wall time x ``speed`` in a daemon thread (for the demo)."""
        if self._realtime is not None:
            return
        self._realtime_stop.clear()

        def run() -> None:
            last = time.monotonic()
            while not self._realtime_stop.wait(tick):
                now = time.monotonic()
                try:
                    self.advance((now - last) * self.speed)
                except Exception:  # noqa: BLE001 - keep the demo alive; the error is logged
                    import logging

                    logging.getLogger(__name__).exception("simulated cluster: advance failed")
                last = now

        self._realtime = threading.Thread(target=run, name="sim-realtime", daemon=True)
        self._realtime.start()

    # ------------------------------------------------------------ users
    def add_user(
        self,
        name: str,
        token: str,
        namespaces: Iterable[str] | None,
        groups: Iterable[str] = (),
        *,
        verbs: Iterable[str] | None = None,
        cluster_read: Iterable[str] = ("queues",),
    ) -> User:
        """Add a bearer-token user. ``namespaces`` None = cluster-wide; default permissions are read
        (get/list/watch) on everything plus create on Commands; ``verbs`` replaces them with these
        verbs on every resource. A namespace-scoped user may also read ``cluster_read`` resources."""
        return self.auth.add_user(name, token, namespaces, groups, verbs=verbs, cluster_read=cluster_read)

    def token_for(self, user: str) -> str:
        u = self.auth.user_named(user)
        if u is None:
            raise KeyError(f"no simulated user named {user!r}")
        return u.token

    def write_kubeconfig(self, path: str | Path, user: str = "admin", *, tls: bool | None = None) -> Path:
        """Write a kubeconfig for ``user`` (server URL + bearer token) that kubectl and
        ``kubernetes.config.load_kube_config`` accept; the context's namespace is the user's first
        namespace (else "default"). ``tls`` (default: when the TLS listener runs) points it at the
        HTTPS URL with the simulator's CA as certificate-authority-data — required for kubectl,
        which never sends a token over plain HTTP. Needs ``start()`` first. Returns the path."""
        if not self.url:
            raise RuntimeError("start() the simulated cluster before writing a kubeconfig")
        use_tls = bool(self.https_url) if tls is None else tls
        if use_tls and not self.https_url:
            raise RuntimeError("the TLS listener is not running (start(tls_port=None) was used)")
        u = self.auth.user_named(user)
        if u is None:
            raise KeyError(f"no simulated user named {user!r}")
        namespace = sorted(u.namespaces)[0] if u.namespaces else "default"
        context = f"volcano-sim-{user}"
        cluster: dict[str, Any] = {"server": self.url}
        if use_tls:
            cluster = {
                "server": self.https_url,
                "certificate-authority-data": base64.b64encode(self.server.tls.ca_pem).decode(),
            }
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "volcano-sim", "cluster": cluster}],
            "users": [{"name": user, "user": {"token": u.token}}],
            "contexts": [
                {"name": context, "context": {"cluster": "volcano-sim", "user": user, "namespace": namespace}}
            ],
            "current-context": context,
            "preferences": {},
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # JSON is YAML: both loaders accept it. Written whole (a temporary file renamed over it): a
        # dashboard watching the path never reads half of it.
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(json.dumps(config, indent=2) + "\n")
        os.replace(partial, path)
        path.chmod(0o600)
        return path
