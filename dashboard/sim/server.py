"""The simulated cluster's HTTP server: the Kubernetes REST API over real HTTP on loopback.

Serves discovery (/version, /api, /apis, group and group-version documents), list (with
``limit``/``continue``, label and field selectors), watch (chunked newline-delimited JSON events,
bookmarks, ``timeoutSeconds``, 410 after compaction, 504 "Too large resource version" for a
resourceVersion the store has not reached), get, create, update, /status, merge/JSON/
strategic patch, delete (with propagationPolicy) and deletecollection for every kind in
``kinds.KINDS``; SubjectAccessReview/SelfSubjectAccessReview/TokenReview; bearer-token auth;
meta.k8s.io/v1 Tables for kubectl; fault switches and the admin API under ``/_sim/``.

/openapi/v3 is a minimal index that tells kubectl every resource supports server-side field
validation (see openapi.py); /openapi/v2 answers 404. Discovery is served both aggregated
(apidiscovery.k8s.io/v2 on /api and /apis, when the Accept header asks for it, as kubectl does) and
in the legacy per-group form.

A dead API server (fault ``unavailable_seconds``) accepts connections but answers nothing; when the
outage ends, the held requests' connections are closed without a response (clients see
"connection aborted"), and open watches are cut abruptly at the start of the outage.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from . import openapi, protobuf, tables
from .auth import Authorizer, User, forbidden_message
from .clock import SimClock
from .kinds import KINDS, Kind, kind_for, resolve
from .store import ApiError, Store, _Entry

log = logging.getLogger(__name__)

SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4+volcano-sim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-11-29T00:00:00Z",
    "goVersion": "go1.23.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}

PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": None,
}


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def stats_name(kind: Kind) -> str:
    """Resource name used in stats keys: the plural ("jobs", "pods"), except for a kind whose plural
    is also served by a Volcano group ("jobs.batch" for batch/v1 Jobs)."""
    if not kind.group.endswith("volcano.sh") and any(
        k.plural == kind.plural and k.group.endswith("volcano.sh") for k in KINDS
    ):
        return f"{kind.plural}.{kind.group}"
    return kind.plural


class Faults:
    """Fault switches (see README "Simulated cluster"). Mutated only under ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.not_installed: set[Kind] = set()
        self.forbidden: set[Kind] = set()
        self.latency_ms = 0.0
        self.error_rate = 0.0
        self.unavailable_until = 0.0  # time.monotonic() deadline
        self.held = 0  # requests currently held by the outage

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {
                "not_installed": sorted(k.key for k in self.not_installed),
                "forbidden": sorted(k.key for k in self.forbidden),
                "latency_ms": self.latency_ms,
                "error_rate": self.error_rate,
                "unavailable_seconds": max(0.0, round(self.unavailable_until - time.monotonic(), 3)),
                "held_requests": self.held,
            }


class SimServer:
    """The API server. ``advance`` is the callable behind POST /_sim/advance (the cluster's)."""

    def __init__(
        self,
        store: Store,
        clock: SimClock,
        authorizer: Authorizer,
        *,
        seed: int = 0,
        bookmark_interval: float = 10.0,
        watch_timeout: float = 1800.0,
        advance: Callable[[float], Any] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.auth = authorizer
        self.faults = Faults()
        self.bookmark_interval = bookmark_interval
        self.watch_timeout = watch_timeout
        self._advance = advance or clock.advance
        self._rng = random.Random(seed)
        self._stats_lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.open_watches: Counter[str] = Counter()
        self._listeners: list[tuple[_HTTPServer, threading.Thread]] = []
        self.tls: Any = None
        self.https_url = ""
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self._outage_gen = 0
        self.url = ""

    # ------------------------------------------------------------ lifecycle
    def start(self, host: str = "127.0.0.1", port: int = 0, *, tls_port: int | None = 0) -> str:
        """Listen on ``host:port`` (plain HTTP; 0 = ephemeral) and, unless ``tls_port`` is None, on
        ``host:tls_port`` with TLS (see tls.py; kubectl sends tokens only over TLS). Returns the
        plain URL; ``https_url`` is the TLS one."""
        if self._listeners:
            return self.url
        self.stopping.clear()
        self.url = self._listen(host, port, None)
        if tls_port is not None:
            from .tls import material

            if self.tls is None:  # a cluster with a state file sets its persisted material first
                self.tls = material()
            self.https_url = self._listen(host, tls_port, self.tls.server_context())
        return self.url

    def _listen(self, host: str, port: int, ssl_context: Any) -> str:
        handler = type("BoundHandler", (_Handler,), {"sim": self})
        httpd = _HTTPServer((host, port), handler)
        httpd.sim = self
        httpd.ssl_context = ssl_context
        actual_host, actual_port = cast(tuple[str, int], httpd.server_address)[:2]  # AF_INET
        scheme = "https" if ssl_context is not None else "http"
        thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"sim-apiserver-{scheme}-{actual_port}",
            daemon=True,
        )
        thread.start()
        self._listeners.append((httpd, thread))
        return f"{scheme}://{actual_host}:{actual_port}"

    def stop(self) -> None:
        """Stop serving: end watches, close every connection, join the accept loops."""
        if not self._listeners:
            return
        self.stopping.set()
        self.store.drop_watches()
        for httpd, _ in self._listeners:
            httpd.shutdown()
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for httpd, thread in self._listeners:
            httpd.server_close()
            thread.join(timeout=5)
        self._listeners = []

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._conns_lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    # ------------------------------------------------------------ stats
    def count(self, key: str) -> None:
        with self._stats_lock:
            self.requests[key] += 1

    def watch_opened(self, name: str, delta: int) -> None:
        with self._stats_lock:
            self.open_watches[name] += delta
            if self.open_watches[name] <= 0:
                del self.open_watches[name]

    def stats(self) -> dict[str, Any]:
        # Counted before taking the stats lock (the store has its own lock).
        objects = {stats_name(k): self.store.count(k) for k in KINDS if not k.review}
        with self._stats_lock:
            return {
                "requests": dict(sorted(self.requests.items())),
                "watches": dict(sorted(self.open_watches.items())),
                "resourceVersion": str(self.store.resource_version),
                "now": self.clock.rfc3339(),
                # Objects held per kind: lets a soak tell cache growth from cluster growth.
                "objects": objects,
            }

    def reset_stats(self) -> None:
        with self._stats_lock:
            self.requests.clear()

    # ------------------------------------------------------------ faults
    def set_faults(self, body: dict[str, Any]) -> dict[str, Any]:
        """Apply fault switches from a JSON body; returns the resulting state. Keys:
        not_installed / forbidden (lists of kind names; replace the current set), latency_ms,
        error_rate (0..1), unavailable_seconds, drop_watches (bool), compact (bool), reset (bool)."""
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "faults must be a JSON object")
        known = {
            "not_installed",
            "forbidden",
            "latency_ms",
            "error_rate",
            "unavailable_seconds",
            "drop_watches",
            "compact",
            "reset",
            "seed",
        }
        unknown = set(body) - known
        if unknown:
            raise ApiError(400, "BadRequest", f"unknown fault switches: {sorted(unknown)}")

        def kinds(value: Any) -> set[Kind]:
            if not isinstance(value, list):
                raise ApiError(400, "BadRequest", "expected a list of kinds")
            try:
                return {resolve(str(v)) for v in value}
            except KeyError as exc:
                raise ApiError(400, "BadRequest", str(exc)) from None

        def number(name: str, lo: float, hi: float) -> float:
            try:
                value = float(body[name])
            except (TypeError, ValueError):
                raise ApiError(400, "BadRequest", f"{name} must be a number") from None
            if not lo <= value <= hi:
                raise ApiError(400, "BadRequest", f"{name} must be within [{lo}, {hi}]")
            return value

        f = self.faults
        new_not_installed = kinds(body["not_installed"]) if "not_installed" in body else None
        new_forbidden = kinds(body["forbidden"]) if "forbidden" in body else None
        latency = number("latency_ms", 0, 600_000) if "latency_ms" in body else None
        error_rate = number("error_rate", 0, 1) if "error_rate" in body else None
        outage = number("unavailable_seconds", 0, 86_400) if "unavailable_seconds" in body else None
        with f.lock:
            if body.get("reset"):
                f.not_installed.clear()
                f.forbidden.clear()
                f.latency_ms = f.error_rate = 0.0
                f.unavailable_until = 0.0
            if new_not_installed is not None:
                f.not_installed = new_not_installed
            if new_forbidden is not None:
                f.forbidden = new_forbidden
            if latency is not None:
                f.latency_ms = latency
            if error_rate is not None:
                f.error_rate = error_rate
            if "seed" in body:
                self._rng = random.Random(int(body["seed"]))
            if outage is not None:
                f.unavailable_until = time.monotonic() + outage if outage > 0 else 0.0
                if outage > 0:
                    self._outage_gen += 1
        if new_not_installed:
            self.store.drop_watches(new_not_installed)
        if outage:
            self.store.drop_watches()
        if body.get("drop_watches"):
            self.store.drop_watches()
        if body.get("compact"):
            self.store.compact()
        return f.describe()

    def unavailable(self) -> bool:
        return self.faults.unavailable_until > time.monotonic()

    def roll_error(self) -> bool:
        rate = self.faults.error_rate
        if rate <= 0:
            return False
        with self.faults.lock:
            return self._rng.random() < rate

    # ------------------------------------------------------------ discovery
    def served(self, kind: Kind) -> bool:
        return kind not in self.faults.not_installed

    def discovery_groups(self) -> dict[str, Any]:
        groups = []
        for group in dict.fromkeys(k.group for k in KINDS if k.group and self.served(k)):
            version = next(k.version for k in KINDS if k.group == group)
            gv = {"groupVersion": f"{group}/{version}", "version": version}
            groups.append({"name": group, "versions": [gv], "preferredVersion": gv})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def aggregated_discovery(self, *, core: bool) -> dict[str, Any]:
        """An apidiscovery.k8s.io/v2 APIGroupDiscoveryList for /api (core) or /apis (the groups)."""
        items = []
        groups = [""] if core else list(dict.fromkeys(k.group for k in KINDS if k.group))
        for group in groups:
            kinds = [k for k in KINDS if k.group == group and self.served(k)]
            if not kinds:
                continue
            items.append(
                {
                    "metadata": {"name": group, "creationTimestamp": None},
                    "versions": [
                        {
                            "version": kinds[0].version,
                            "freshness": "Current",
                            "resources": [_aggregated_resource(k) for k in kinds],
                        }
                    ],
                }
            )
        return {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": items,
        }

    def discovery_group(self, group: str) -> dict[str, Any] | None:
        for g in self.discovery_groups()["groups"]:
            if g["name"] == group:
                return {"kind": "APIGroup", "apiVersion": "v1", **g}
        return None

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        kinds = [k for k in KINDS if k.group == group and k.version == version and self.served(k)]
        if not kinds:
            return None
        resources = []
        for k in kinds:
            entry: dict[str, Any] = {
                "name": k.plural,
                "singularName": k.singular,
                "namespaced": k.namespaced,
                "kind": k.kind,
                "verbs": sorted(k.verbs),
            }
            if k.short_names:
                entry["shortNames"] = list(k.short_names)
            if k.categories:
                entry["categories"] = list(k.categories)
            resources.append(entry)
            if k.status_subresource:
                resources.append(
                    {
                        "name": f"{k.plural}/status",
                        "singularName": "",
                        "namespaced": k.namespaced,
                        "kind": k.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": kinds[0].api_version,
            "resources": resources,
        }


def _aggregated_resource(k: Kind) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": k.plural,
        "responseKind": {"group": k.group, "version": k.version, "kind": k.kind},
        "scope": "Namespaced" if k.namespaced else "Cluster",
        "singularResource": k.singular,
        "verbs": sorted(k.verbs),
    }
    if k.short_names:
        entry["shortNames"] = list(k.short_names)
    if k.categories:
        entry["categories"] = list(k.categories)
    if k.status_subresource:
        entry["subresources"] = [
            {
                "subresource": "status",
                "verbs": ["get", "patch", "update"],
                "responseKind": {"group": k.group, "version": k.version, "kind": k.kind},
            }
        ]
    return entry


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    sim: SimServer
    ssl_context: Any = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus delayed ACKs
        # add ~40 ms to every response.
        with contextlib.suppress(OSError):
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            # The TLS handshake happens here, in the connection's own thread, not in the accept loop.
            request.settimeout(10)
            try:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            except (OSError, ValueError):
                return
            request.settimeout(None)
            # wrap_socket detached the plain socket process_request_thread tracks, so stop() could
            # not shut this connection down: a stopped server kept answering on TLS keep-alive
            # connections. Track the TLS socket itself.
            self.sim._track(request, True)
            try:
                super().finish_request(request, client_address)
            finally:
                self.sim._track(request, False)
            return
        super().finish_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        self.sim._track(request, True)
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.sim._track(request, False)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up mid-response are normal (watch consumers stop reading).
        log.debug("sim apiserver: error while serving %s", client_address, exc_info=True)


class _Abort(Exception):
    """Close the connection without (further) response."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "volcano-sim-apiserver"
    sys_version = ""
    timeout = 300  # idle keep-alive connections are closed after this many seconds
    sim: SimServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("sim apiserver: " + format, *args)

    # Every method goes through one dispatcher.
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # ------------------------------------------------------------ plumbing
    def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        # One write for headers and body (end_headers() would flush the headers on their own).
        # _headers_buffer is BaseHTTPRequestHandler's own (undeclared in typeshed).
        self._headers_buffer.append(b"\r\n")  # type: ignore[attr-defined]
        if self.command != "HEAD":
            self._headers_buffer.append(body)  # type: ignore[attr-defined]
        self.flush_headers()

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, _dumps(obj))

    def _error(self, err: ApiError) -> None:
        self._json(err.code, err.status())

    def _read_body(self) -> None:
        # Always drain the request body first, so that an early error answer leaves a clean
        # keep-alive connection behind.
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        self._raw_body = self.rfile.read(length) if length > 0 else b""

    def _body(self) -> Any:
        raw = self._raw_body
        if not raw:
            return None
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip()
        if ctype == "application/vnd.kubernetes.protobuf":
            try:
                return protobuf.decode(raw)
            except (protobuf.ProtobufUnsupported, UnicodeDecodeError) as exc:
                raise ApiError(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format: {ctype} ({exc})",
                ) from None
        if "protobuf" in ctype or "cbor" in ctype:
            raise ApiError(
                415, "UnsupportedMediaType", f"the body of the request was in an unknown format: {ctype}"
            )
        try:
            if "yaml" in ctype:
                import yaml  # lazily: only apply-patch and YAML bodies need it

                return yaml.safe_load(raw)
            return json.loads(raw)
        except Exception as exc:  # noqa: BLE001 - any decoding failure is the client's
            raise ApiError(
                400, "BadRequest", f"the body of the request could not be decoded: {exc}"
            ) from None

    def _token(self) -> str | None:
        header = self.headers.get("Authorization") or ""
        scheme, _, value = header.partition(" ")
        return value.strip() if scheme.lower() == "bearer" else None

    def _dispatch(self, method: str) -> None:
        sim = self.sim
        try:
            self._read_body()
            parts = urlsplit(self.path)
            path = parts.path.rstrip("/") or "/"
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            if path.startswith("/_sim"):
                self._admin(method, path, query)
                return
            if sim.unavailable():
                self._hang()
                return
            if sim.faults.latency_ms:
                time.sleep(sim.faults.latency_ms / 1000.0)
            if path in ("/healthz", "/livez", "/readyz"):
                self._send(200, b"ok", "text/plain; charset=utf-8")
                return
            user = sim.auth.authenticate(self._token())
            if user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            if self._discovery(method, path):
                return
            self._resource(method, path, query, user)
        except _Abort:
            self.close_connection = True
        except ApiError as err:
            self._error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - report as a Kubernetes InternalError
            log.exception("sim apiserver: internal error for %s %s", method, self.path)
            self._error(ApiError(500, "InternalError", f"Internal error occurred: {exc}"))

    def _hang(self) -> None:
        """Dead API server: hold the request until the outage ends, then drop the connection."""
        sim = self.sim
        with sim.faults.lock:
            sim.faults.held += 1
        try:
            while sim.unavailable() and not sim.stopping.is_set():
                sim.stopping.wait(0.05)
        finally:
            with sim.faults.lock:
                sim.faults.held -= 1
        raise _Abort()

    # ------------------------------------------------------------ discovery
    def _discovery(self, method: str, path: str) -> bool:
        sim = self.sim
        segs = [s for s in path.split("/") if s]
        if method != "GET":
            return False
        doc: Any = None
        if path in ("/api", "/apis") and self._wants_aggregated():
            # Aggregated discovery (apidiscovery.k8s.io/v2): everything in one document per root,
            # which modern kubectl and client-go ask for first.
            body = _dumps(sim.aggregated_discovery(core=path == "/api"))
            self.sim.count("discovery")
            self._send(200, body, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
            return True
        if path == "/version":
            doc = SERVER_VERSION
        elif path == "/api":
            host = "{}:{}".format(*cast(tuple[str, int], self.server.server_address)[:2])
            doc = {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
            }
        elif path == "/api/v1":
            doc = sim.resource_list("", "v1")
        elif path == "/apis":
            doc = sim.discovery_groups()
        elif len(segs) == 2 and segs[0] == "apis":
            doc = sim.discovery_group(segs[1])
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
        elif len(segs) == 3 and segs[0] == "apis":
            doc = sim.resource_list(segs[1], segs[2])
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
        elif segs[:2] == ["openapi", "v3"]:
            docs = openapi.documents(k for k in KINDS if sim.served(k))
            doc = openapi.index(docs) if len(segs) == 2 else docs.get("/".join(segs[2:]))
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
        elif segs and segs[0] in ("openapi", "swagger.json", "swaggerapi"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        else:
            return False
        self.sim.count("discovery")
        self._json(200, doc)
        return True

    def _wants_aggregated(self) -> bool:
        accept = self.headers.get("Accept") or ""
        for part in accept.split(","):
            params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
            if (
                params.get("g") == "apidiscovery.k8s.io"
                and params.get("v") == "v2"
                and params.get("as") == "APIGroupDiscoveryList"
            ):
                return True
        return False

    # ------------------------------------------------------------ resources
    def _route(self, path: str) -> tuple[Kind, str | None, str | None, str | None, bool]:
        """(kind, namespace, name, subresource, legacy_watch) for a resource URL, or 404."""
        segs = [s for s in path.split("/") if s]
        not_found = ApiError(404, "NotFound", "the server could not find the requested resource")
        if len(segs) >= 2 and segs[0] == "api" and segs[1] == "v1":
            group, version, rest = "", "v1", segs[2:]
        elif len(segs) >= 3 and segs[0] == "apis":
            group, version, rest = segs[1], segs[2], segs[3:]
        else:
            raise not_found
        legacy_watch = bool(rest) and rest[0] == "watch"
        if legacy_watch:
            rest = rest[1:]
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] != "status":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise not_found
        kind = kind_for(group, rest[0])
        if kind is None or kind.version != version or not self.sim.served(kind):
            raise not_found
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) == 3 else None
        if namespace is not None and not kind.namespaced:
            raise not_found
        if kind.namespaced and name is not None and namespace is None:
            raise not_found
        if sub is not None and (sub != "status" or not kind.status_subresource):
            raise not_found
        return kind, namespace, name, sub, legacy_watch

    def _resource(self, method: str, path: str, query: dict[str, str], user: User) -> None:
        sim = self.sim
        kind, namespace, name, sub, legacy_watch = self._route(path)
        watch = legacy_watch or query.get("watch", "").lower() in ("1", "true")
        if method == "GET":
            verb = "get" if name else ("watch" if watch else "list")
        elif method == "POST":
            verb = "create"
            if name:
                raise ApiError(405, "MethodNotAllowed", f"POST is not supported on a named {kind.singular}")
        elif method in ("PUT", "PATCH"):
            verb = "update" if method == "PUT" else "patch"
            if not name:
                raise ApiError(405, "MethodNotAllowed", f"{method} needs an object name")
        elif method == "DELETE":
            verb = "delete" if name else "deletecollection"
        else:
            raise ApiError(405, "MethodNotAllowed", f"method {method} is not supported")
        if verb not in kind.verbs:
            raise ApiError(405, "MethodNotAllowed", f"{verb} is not supported on {kind.resource}")
        resource = f"{kind.plural}/{sub}" if sub else kind.plural
        sim.count(f"{verb} {stats_name(kind)}{'/' + sub if sub else ''}")
        if kind in sim.faults.forbidden:
            raise ApiError(
                403,
                "Forbidden",
                forbidden_message(user, verb, kind.group, resource, namespace, name),
                {"name": name or "", "group": kind.group, "kind": kind.plural},
            )
        if kind.review:
            self._review(kind, user)
            return
        ok, _ = sim.auth.allowed(user, verb, kind.group, resource, namespace, namespaced=kind.namespaced)
        if not ok:
            raise ApiError(
                403,
                "Forbidden",
                forbidden_message(user, verb, kind.group, resource, namespace, name),
                {"name": name or "", "group": kind.group, "kind": kind.plural},
            )
        if sim.roll_error():
            raise ApiError(500, "InternalError", "Internal error occurred: injected fault (error_rate)")
        store = sim.store
        dry_run = query.get("dryRun") == "All"
        if verb == "get":
            assert name is not None  # the single-object verbs are chosen only with a name
            entry = store.get_entry(kind, namespace, name)
            if self._wants_table():
                self._table(
                    kind, [entry.obj], str(entry.obj["metadata"].get("resourceVersion", "")), "", query
                )
            else:
                self._send(200, entry.raw)
        elif verb == "list":
            self._list(kind, namespace, query)
        elif verb == "watch":
            self._watch(kind, namespace, query)
        elif verb == "create":
            body = self._body()
            obj = store.create(kind, body, namespace, dry_run=dry_run)
            self._json(201, obj)
        elif verb == "update":
            body = self._body()
            obj = store.update(
                kind, body, status=sub == "status", namespace=namespace, name=name, dry_run=dry_run
            )
            self._json(200, obj)
        elif verb == "patch":
            assert name is not None
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            patch_type = PATCH_TYPES.get(ctype)
            if patch_type is None:
                raise ApiError(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types include: "
                    f"{', '.join(k for k, v in PATCH_TYPES.items() if v)}",
                )
            body = self._body()
            obj = store.patch(
                kind, namespace, name, body, patch_type, status=sub == "status", dry_run=dry_run
            )
            self._json(200, obj)
        elif verb == "delete":
            assert name is not None
            body = self._body() or {}
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "DeleteOptions must be a JSON object")
            propagation = query.get("propagationPolicy") or body.get("propagationPolicy") or "Background"
            if body.get("orphanDependents") is True or query.get("orphanDependents") == "true":
                propagation = "Orphan"
            pre = body.get("preconditions") or {}
            obj = store.delete(
                kind,
                namespace,
                name,
                propagation=propagation,
                uid=pre.get("uid"),
                resource_version=pre.get("resourceVersion"),
                dry_run=dry_run,
            )
            self._json(200, obj)
        elif verb == "deletecollection":
            body = self._body() or {}
            propagation = (
                query.get("propagationPolicy")
                or (body.get("propagationPolicy") if isinstance(body, dict) else None)
                or "Background"
            )
            deleted = store.delete_collection(
                kind,
                namespace,
                query.get("labelSelector"),
                query.get("fieldSelector"),
                propagation=propagation,
            )
            self._json(
                200,
                {
                    "kind": kind.list_kind,
                    "apiVersion": kind.api_version,
                    "metadata": {"resourceVersion": str(store.resource_version)},
                    "items": deleted,
                },
            )

    # ------------------------------------------------------------ tables
    def _table_version(self) -> str | None:
        accept = self.headers.get("Accept") or ""
        for part in accept.split(","):
            params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
            if (
                params.get("as") == "Table"
                and params.get("g") == "meta.k8s.io"
                and params.get("v") in ("v1", "v1beta1")
            ):
                return params["v"]
        return None

    def _wants_table(self) -> bool:
        return self._table_version() is not None

    def _table(self, kind: Kind, objs: list[dict], rv: str, token: str, query: dict[str, str]) -> None:
        version = self._table_version() or "v1"
        body = tables.table(
            kind,
            objs,
            self.sim.clock.now(),
            resource_version=rv,
            continue_token=token,
            include_object=query.get("includeObject", "Metadata"),
            api_version=f"meta.k8s.io/{version}",
        )
        self._send(200, _dumps(body), f"application/json;as=Table;v={version};g=meta.k8s.io")

    # ------------------------------------------------------------ list
    def _list(self, kind: Kind, namespace: str | None, query: dict[str, str]) -> None:
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", f"invalid limit {query.get('limit')!r}") from None
        if not query.get("continue"):
            # resourceVersion=N (N != 0) asks for data at least as new as N: a version this store
            # has not reached gets 504 "Too large resource version", as from kube-apiserver. The
            # list itself is always served at the current version (newer than N is allowed).
            self.sim.store.check_resource_version(query.get("resourceVersion"))
        page = self.sim.store.list_page(
            kind,
            namespace,
            query.get("labelSelector"),
            query.get("fieldSelector"),
            limit=limit,
            continue_token=query.get("continue") or None,
        )
        if self._wants_table():
            self._table(
                kind, [e.obj for e in page.entries], page.resource_version, page.continue_token, query
            )
            return
        meta: dict[str, Any] = {"resourceVersion": page.resource_version}
        if page.continue_token:
            meta["continue"] = page.continue_token
            if page.remaining is not None:
                meta["remainingItemCount"] = page.remaining
        head = _dumps({"kind": kind.list_kind, "apiVersion": kind.api_version, "metadata": meta})
        # Splice the cached per-object JSON into the list body: no re-encoding, no copies.
        body = b"".join((head[:-1], b',"items":[', b",".join(e.raw for e in page.entries), b"]}"))
        self._send(200, body)

    # ------------------------------------------------------------ watch
    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _watch(self, kind: Kind, namespace: str | None, query: dict[str, str]) -> None:
        sim = self.sim
        store = sim.store
        table_version = self._table_version()
        try:
            timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else sim.watch_timeout
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds") from None
        bookmarks = query.get("allowWatchBookmarks", "").lower() in ("1", "true")
        ctype = (
            f"application/json;as=Table;v={table_version};g=meta.k8s.io"
            if table_version
            else "application/json"
        )
        error: ApiError | None = None
        w = None
        try:
            w = store.watch(
                kind,
                namespace,
                query.get("resourceVersion") or None,
                query.get("labelSelector"),
                query.get("fieldSelector"),
            )
        except ApiError as err:
            # 410 comes as an ERROR event in a 200 stream, like kube-apiserver's; anything else
            # (400, and 504 "Too large resource version" from store.too_large_rv) as the HTTP status.
            if err.code != 410:
                raise
            error = err
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        if error is not None:
            # A real API server answers 200 and then an ERROR event carrying the 410 Status.
            self._write_chunk(_dumps({"type": "ERROR", "object": error.status()}) + b"\n")
            self._write_chunk(b"")
            return
        assert w is not None
        name = stats_name(kind)
        sim.watch_opened(name, +1)
        outage_gen = sim._outage_gen
        deadline = time.monotonic() + timeout
        next_bookmark = time.monotonic() + sim.bookmark_interval
        now_fn = sim.clock.now
        try:
            while True:
                now = time.monotonic()
                if now >= deadline or sim.stopping.is_set():
                    break
                wait = min(deadline - now, 0.5)
                if bookmarks:
                    wait = max(0.0, min(wait, next_bookmark - now))
                item = w.next_entry(wait)
                if item is not None:
                    type_, entry = item
                    self._write_chunk(self._event(kind, type_, entry, table_version, now_fn) + b"\n")
                    continue
                if sim._outage_gen != outage_gen:
                    raise _Abort()  # the API server "died": cut the stream without a clean end
                if w.closed:
                    break
                if bookmarks and time.monotonic() >= next_bookmark:
                    rv = w.bookmark_rv()
                    if rv is not None:
                        bm = {
                            "type": "BOOKMARK",
                            "object": {
                                "kind": kind.kind,
                                "apiVersion": kind.api_version,
                                "metadata": {"resourceVersion": rv},
                            },
                        }
                        self._write_chunk(_dumps(bm) + b"\n")
                    next_bookmark = time.monotonic() + sim.bookmark_interval
            self._write_chunk(b"")
        finally:
            w.close()
            sim.watch_opened(name, -1)

    def _event(
        self, kind: Kind, type_: str, entry: _Entry, table_version: str | None, now_fn: Callable[[], Any]
    ) -> bytes:
        if table_version:
            obj = tables.table(
                kind,
                [entry.obj],
                now_fn(),
                resource_version=entry.obj["metadata"]["resourceVersion"],
                api_version=f"meta.k8s.io/{table_version}",
            )
            return _dumps({"type": type_, "object": obj})
        return b'{"type":"%s","object":%s}' % (type_.encode(), entry.raw)

    # ------------------------------------------------------------ reviews
    def _review(self, kind: Kind, user: User) -> None:
        sim = self.sim
        body = self._body()
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", f"a {kind.kind} body is required")
        spec = body.get("spec") or {}
        out = {
            "kind": kind.kind,
            "apiVersion": kind.api_version,
            "metadata": body.get("metadata") or {},
            "spec": spec,
        }
        if kind.kind == "TokenReview":
            ok, _ = sim.auth.allowed(user, "create", kind.group, kind.plural, None, namespaced=False)
            if not ok:
                raise ApiError(
                    403, "Forbidden", forbidden_message(user, "create", kind.group, kind.plural, None)
                )
            target = sim.auth.authenticate(spec.get("token"))
            out["status"] = (
                {"authenticated": True, "user": target.describe(), "audiences": spec.get("audiences") or []}
                if target
                else {"authenticated": False, "error": "invalid bearer token"}
            )
        else:
            if kind.kind == "SubjectAccessReview":
                ok, _ = sim.auth.allowed(user, "create", kind.group, kind.plural, None, namespaced=False)
                if not ok:
                    raise ApiError(
                        403, "Forbidden", forbidden_message(user, "create", kind.group, kind.plural, None)
                    )
                subject = sim.auth.user_named(spec.get("user") or "")
                groups = spec.get("groups") or []
            else:  # SelfSubjectAccessReview: every authenticated user may ask about themselves
                subject, groups = user, []
            attrs = spec.get("resourceAttributes")
            if not isinstance(attrs, dict):
                out["status"] = {"allowed": False, "reason": "only resourceAttributes are supported"}
            else:
                resource = attrs.get("resource") or ""
                if attrs.get("subresource"):
                    resource += "/" + attrs["subresource"]
                group = attrs.get("group") or ""
                target_kind = kind_for(group, (attrs.get("resource") or ""))
                namespaced = target_kind.namespaced if target_kind else bool(attrs.get("namespace"))
                allowed, reason = sim.auth.decide(
                    subject,
                    groups,
                    attrs.get("verb") or "",
                    group,
                    resource,
                    attrs.get("namespace") or None,
                    namespaced=namespaced,
                )
                # As RBAC answers: a reason when allowed; a plain "not allowed" (no opinion) otherwise.
                out["status"] = {"allowed": True, "reason": reason} if allowed else {"allowed": False}
        self._json(201, out)

    # ------------------------------------------------------------ admin API
    def _admin(self, method: str, path: str, query: dict[str, str]) -> None:
        sim = self.sim
        user = sim.auth.authenticate(self._token())
        if user is None:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        if user.token != sim.auth.admin_token:
            raise ApiError(403, "Forbidden", f'User "{user.name}" may not use the simulator admin API')
        route = (method, path)
        if route == ("GET", "/_sim/stats"):
            self._json(200, sim.stats())
        elif route == ("POST", "/_sim/stats/reset"):
            sim.reset_stats()
            self._json(200, sim.stats())
        elif route == ("GET", "/_sim/faults"):
            self._json(200, sim.faults.describe())
        elif route == ("POST", "/_sim/faults"):
            self._json(200, sim.set_faults(self._body() or {}))
        elif route == ("POST", "/_sim/compact"):
            self._json(200, {"compactedResourceVersion": str(sim.store.compact())})
        elif route == ("POST", "/_sim/advance"):
            body = self._body() or {}
            value: Any = body.get("seconds")  # any JSON value
            try:
                seconds = float(value)
            except (TypeError, ValueError):
                raise ApiError(400, "BadRequest", 'expected {"seconds": <number>}') from None
            if seconds < 0:
                raise ApiError(400, "BadRequest", "seconds must be >= 0")
            sim._advance(seconds)
            self._json(200, {"now": sim.clock.rfc3339(), "resourceVersion": str(sim.store.resource_version)})
        elif route == ("GET", "/_sim/clock"):
            self._json(200, {"now": sim.clock.rfc3339(), "resourceVersion": str(sim.store.resource_version)})
        elif route == ("GET", "/_sim/users"):
            self._json(
                200,
                {
                    "users": [
                        {
                            "name": u.name,
                            "namespaces": None if u.namespaces is None else sorted(u.namespaces),
                            "groups": list(u.groups),
                        }
                        for u in sim.auth.users()
                    ]
                },
            )
        elif route == ("POST", "/_sim/users"):
            body = self._body() or {}
            if not isinstance(body, dict) or not body.get("name") or not body.get("token"):
                raise ApiError(
                    400, "BadRequest", 'expected {"name": ..., "token": ..., "namespaces": [...] | null}'
                )
            namespaces = body.get("namespaces")
            if namespaces is not None and not isinstance(namespaces, list):
                raise ApiError(400, "BadRequest", "namespaces must be a list or null")
            try:
                u = sim.auth.add_user(
                    str(body["name"]),
                    str(body["token"]),
                    namespaces,
                    body.get("groups") or (),
                    verbs=body.get("verbs"),
                    cluster_read=body.get("cluster_read") or ("queues",),
                )
            except ValueError as exc:
                raise ApiError(409, "Conflict", str(exc)) from None
            self._json(
                201, {"name": u.name, "namespaces": None if u.namespaces is None else sorted(u.namespaces)}
            )
        else:
            raise ApiError(404, "NotFound", f"no simulator admin endpoint {method} {path}")


def http_status_phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return ""
