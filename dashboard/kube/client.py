"""Raw JSON access to the Kubernetes API through the official client's transport and auth.

Connection settings come from the kubernetes client's own loaders (``load_kube_config`` /
``load_incluster_config`` with ``client_configuration=``), so client certificates, bearer tokens and
the exec / OIDC auth plugins (which refresh tokens through ``Configuration.refresh_api_key_hook``)
all work. Requests go through ``ApiClient.param_serialize`` (which applies that auth) and
``ApiClient.call_api`` with the body left unread, and this module decodes JSON itself: the
generated model classes are far too slow for tens of thousands of pods (see docs/cache.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import urllib3
from django.core.exceptions import ImproperlyConfigured
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
# Connections kept for reuse per API server. Every kind holds one open watch and pages add access
# reviews and log streams; the client's default (5 per CPU) is fewer than the kinds on a small
# machine, and a connection handed back to a full pool is closed, so the next call over it pays
# for a new TLS connection.
CONNECTION_POOL_SIZE = 32


# KubeError.category values. "rejected": the server answered but refused our credentials (401) or
# we refused its TLS certificate (verification failed) - a configuration/credential problem that
# retrying with the same kubeconfig cannot fix, unlike "unreachable" (no connection at all).
REJECTED = "rejected"
UNREACHABLE = "unreachable"
# The connection settings do not load (no kubeconfig yet, a bad context): retried whenever the
# kubeconfig file changes.
UNCONFIGURED = "unconfigured"


class KubeError(Exception):
    """Any failure talking to the API server. ``status`` is the HTTP code (0: no HTTP answer);
    ``category`` is REJECTED (401 Unauthorized, or TLS certificate verification failed),
    UNREACHABLE (no HTTP answer for another reason) or "" (any other HTTP error)."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str = "",
        retry_after: float | None = None,
        category: str | None = None,
    ):
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        if category is None:
            if status == 401:
                category = REJECTED
            elif status == 0 and reason not in ("WatchClosed", "BadWatchEvent", "BadResponse"):
                category = UNREACHABLE
            else:
                category = ""
        self.category = category

    def describe(self) -> str:
        if self.category == UNCONFIGURED:
            return f"No usable cluster connection: {self.message}"
        if self.category == REJECTED and self.status == 0:
            return (
                "Credentials or trust rejected: the API server's TLS certificate failed verification "
                f"against the kubeconfig's certificate authority ({self.reason}): {self.message}"
            )
        if self.category == REJECTED:
            return "Credentials or trust rejected: the API server answered HTTP 401 Unauthorized" + (
                f": {self.message}" if self.message else ""
            )
        if self.status == 0 and self.reason in ("WatchClosed", "BadWatchEvent", "BadResponse"):
            return self.message
        if self.status == 0:
            plain = _plain_transport_cause(self.message)
            return (
                f"API server unreachable: {plain}"
                if plain
                else f"API server unreachable ({self.reason}): {self.message}"
            )
        return f"HTTP {self.status} {self.reason}" + (f": {self.message}" if self.message else "")


_HOST_PORT = re.compile(r"host='([^']*)', port=(\d+)")
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


def _plain_transport_cause(message: str) -> str:
    """The gist of a urllib3 connection error's text for a page notice, e.g. "cannot connect to
    127.0.0.1:6443: connection refused" from "HTTPSConnectionPool(host='127.0.0.1', port=6443): Max
    retries exceeded ... [Errno 111] Connection refused')", or "the connection was closed without a
    response" from "('Connection aborted.', RemoteDisconnected('Remote end closed connection without
    response'))"; "" when the text has no such gist (the full text then stays; logs always keep it)."""
    where = _HOST_PORT.search(message)
    at = f" to {where.group(1)}:{where.group(2)}" if where else ""
    errno = _ERRNO.search(message)
    if errno:
        return f"cannot connect{at}: {errno.group(1).strip().rstrip('.').lower()}"
    lowered = message.lower()
    if "timed out" in lowered:
        return f"no answer{' from ' + at[4:] if at else ''} (timed out)"
    if "connection reset by peer" in lowered or "broken pipe" in lowered:
        # ECONNRESET / EPIPE named by the exception's repr (ConnectionResetError(104, ...)) rather
        # than "[Errno 104]": the server (or a proxy) dropped the connection mid-request.
        return f"the connection{at} was reset"
    if "remote end closed connection" in lowered or "eof occurred in violation of protocol" in lowered:
        # http.client.RemoteDisconnected / ssl.SSLEOFError: the server went away mid-request
        # (stopping, restarting, or a proxy dropping the connection).
        return f"the connection{at} was closed without a response"
    if (
        "response ended prematurely" in lowered
        or "incompleteread" in lowered
        or "connection broken" in lowered
    ):
        # urllib3 ProtocolError while streaming a body (a watch): the server or a proxy cut it off.
        return f"the connection{at} was cut off in the middle of a response"
    return ""


def _tls_verify_failure(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from/while handling) is a failed TLS
    certificate verification. The kubernetes REST layer turns urllib3's SSLError into an
    ApiException(status=0, reason="SSLError\\n<text>") raised while handling it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        if "CERTIFICATE_VERIFY_FAILED" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _transport_error(exc: BaseException) -> KubeError:
    """A KubeError for a failure below HTTP (connection, TLS)."""
    if isinstance(exc, k8s_client.ApiException):
        reason, _, message = str(exc.reason or "error").partition("\n")
        status = exc.status or 0
    else:
        reason, message, status = type(exc).__name__, str(exc), 0
    if status == 0 and _tls_verify_failure(exc):
        return KubeError(0, reason, message, category=REJECTED)
    if isinstance(exc, k8s_client.ApiException):
        return KubeError(status, reason, message or str(exc.body or ""))
    return KubeError(0, reason, message)


class Gone(KubeError):
    """410 Gone: the resourceVersion is older than the server's history; the informer re-lists."""


class TooLargeResourceVersion(KubeError):
    """504 "Too large resource version": the server has not reached the resourceVersion asked for
    (kube-apiserver's watch cache after waiting ~3 s; apimachinery NewTooLargeResourceVersionError).
    A resourceVersion from the future means it came from another server or an earlier run of it
    (etcd restored or replaced, the simulator restarted): the informer re-lists from scratch, as
    client-go's reflector does on apierrors.IsTooLargeResourceVersion."""


# metav1.CauseTypeResourceVersionTooLarge
_CAUSE_RV_TOO_LARGE = "ResourceVersionTooLarge"


def error_from_status(code: int, reason: str, status: object, retry_after: float | None = None) -> KubeError:
    """The KubeError for an HTTP error ``code`` (or a watch ERROR event's Status ``code``) whose body
    is the decoded Kubernetes Status ``status`` (anything else is tolerated): Gone for 410,
    TooLargeResourceVersion for 504 with a ResourceVersionTooLarge cause (or, from older servers,
    only the message), KubeError otherwise, with ``reason`` and the Status's message."""
    message = ""
    causes: list[Any] = []
    if isinstance(status, dict):
        message = str(status.get("message") or "")
        details = status.get("details")
        if isinstance(details, dict) and isinstance(details.get("causes"), list):
            causes = details["causes"]
    if code == 410:
        return Gone(code, reason, message, retry_after)
    if code == 504 and (
        any(isinstance(c, dict) and c.get("reason") == _CAUSE_RV_TOO_LARGE for c in causes)
        or "Too large resource version" in message
    ):
        return TooLargeResourceVersion(code, reason, message, retry_after)
    return KubeError(code, reason, message, retry_after)


def load_configuration(
    mode: str = "auto", kubeconfig: str = "", context: str = ""
) -> k8s_client.Configuration:
    """Build a client Configuration the way kubectl would find the cluster.

    ``mode``: "kubeconfig" (``kubeconfig`` path, else $KUBECONFIG, else ~/.kube/config; ``context``
    or the current context), "incluster" (the pod's service account), or "auto" (incluster when
    running in a pod — KUBERNETES_SERVICE_HOST set and the token file present — else kubeconfig).
    Raises ImproperlyConfigured with the loader's message when nothing usable is found.
    """
    configuration = k8s_client.Configuration()
    if mode == "auto":
        in_pod = bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and SERVICE_ACCOUNT_TOKEN.exists()
        mode = "incluster" if in_pod else "kubeconfig"
    if (
        mode != "incluster"
        and kubeconfig
        and not any(Path(p).exists() for p in kubeconfig.split(os.pathsep) if p)
    ):
        # The loader would say "Invalid kube-config file. No configuration found."
        raise ImproperlyConfigured(
            f"Cannot load the Kubernetes connection ({mode}): {kubeconfig} does not exist (yet)"
        )
    try:
        if mode == "incluster":
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            k8s_config.load_kube_config(
                config_file=kubeconfig or None,
                context=context or None,
                client_configuration=configuration,
                persist_config=False,
            )
    except (k8s_config.ConfigException, OSError, ValueError) as exc:
        raise ImproperlyConfigured(f"Cannot load the Kubernetes connection ({mode}): {exc}") from exc
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, CONNECTION_POOL_SIZE)
    return configuration


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # the HTTP-date form
        from datetime import UTC, datetime

        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class ConfigSource:
    """How to (re)build the connection settings: ``load_configuration(mode, kubeconfig, context)``.
    ``fingerprint()`` identifies the kubeconfig file(s) by their content on disk now."""

    mode: str = "auto"
    kubeconfig: str = ""
    context: str = ""

    def load(self) -> k8s_client.Configuration:
        return load_configuration(self.mode, self.kubeconfig, self.context)

    def files(self) -> list[Path]:
        """The kubeconfig files the loader reads (none in-cluster: the client's loader already
        re-reads the rotated service-account token)."""
        mode = self.mode
        if mode == "auto":
            in_pod = bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and SERVICE_ACCOUNT_TOKEN.exists()
            mode = "incluster" if in_pod else "kubeconfig"
        if mode == "incluster":
            return []
        if self.kubeconfig:
            return [Path(self.kubeconfig).expanduser()]
        # The loader's own default: $KUBECONFIG (a path list) else ~/.kube/config.
        env = os.environ.get("KUBECONFIG", "")
        paths = [p for p in env.split(os.pathsep) if p] if env else ["~/.kube/config"]
        return [Path(p).expanduser() for p in paths]

    def fingerprint(self) -> tuple[Any, ...]:
        # Content, not mtime: a tool rewriting the same kubeconfig (e.g. a restarted simcluster
        # keeping its identity) must not cause a re-list of every kind.
        out: list[tuple[str, str | None]] = []
        for path in self.files():
            try:
                out.append((str(path), hashlib.sha256(path.read_bytes()).hexdigest()))
            except OSError:
                out.append((str(path), None))
        return tuple(out)


@dataclass
class Timeouts:
    connect: float = 5.0
    read: float = 30.0


class KubeClient:
    """A small raw-JSON client: ``get_json`` for lists/discovery, ``stream_lines`` for watches."""

    def __init__(
        self,
        configuration: k8s_client.Configuration | None,
        timeouts: Timeouts | None = None,
        source: ConfigSource | None = None,
        load_error: str = "",
    ):
        """``configuration`` None (with ``load_error``, the loader's message, and a ``source``): the
        connection does not load yet (e.g. the kubeconfig is not written yet). Every request then
        raises KubeError(0, "NotConfigured", load_error) with category UNCONFIGURED, and
        reload_if_changed() loads it as soon as the kubeconfig file appears or changes."""
        self.timeouts = timeouts or Timeouts()
        # Where the configuration came from: reload_if_changed() re-reads it when the kubeconfig
        # file changes (rotated token or CA, a restarted cluster with new credentials).
        self.source = source
        self._fingerprint = source.fingerprint() if source is not None else None
        self._reload_lock = threading.Lock()
        self.reloads = 0
        self.load_error = load_error
        self.configuration: k8s_client.Configuration | None = None
        self.api: k8s_client.ApiClient | None = None
        if configuration is not None:
            self._install(configuration)

    def _install(self, configuration: k8s_client.Configuration) -> None:
        configuration = copy_configuration(configuration)
        # Our informers own the retry policy (backoff with jitter, Retry-After); urllib3's silent
        # immediate retries would hide failures from it and multiply requests during an outage.
        configuration.retries = False
        api = k8s_client.ApiClient(configuration)
        api.user_agent = "volcano-ui"
        self.configuration = configuration
        self.api = api

    def reload_if_changed(self) -> bool:
        """Re-load the configuration through the kubernetes client's loaders when the kubeconfig
        file(s)' content changed on disk since the last load; True when it did. Called by
        the informers before reconnecting. A file that does not load (e.g. half written) is logged
        and retried at the next call; the current configuration stays in use meanwhile."""
        if self.source is None:
            return False
        with self._reload_lock:
            fingerprint = self.source.fingerprint()
            if fingerprint == self._fingerprint:
                return False
            try:
                configuration = self.source.load()
            except ImproperlyConfigured as exc:
                if self.api is None:
                    self.load_error = str(exc)
                    self._fingerprint = fingerprint
                log.warning("kubeconfig changed but does not load; keeping the old one: %s", exc)
                return False
            old = self.api
            self._install(configuration)
            self._fingerprint = fingerprint
            self.load_error = ""
            self.reloads += 1
        log.warning("kubeconfig changed on disk: reloaded the connection settings (%s)", self.host)
        # Idle pooled connections still hold the old TLS settings and token; in-flight requests
        # (open watches) finish on theirs.
        if old is not None:
            with contextlib.suppress(Exception):
                old.rest_client.pool_manager.clear()
        return True

    @property
    def host(self) -> str:
        return self.configuration.host if self.configuration is not None else ""

    def close(self) -> None:
        if self.api is not None:
            self.api.close()

    def _request(self, path: str, query: list[tuple[str, Any]] | None, timeout: tuple[float, float]) -> Any:
        api = self.api  # one ApiClient per request, even if reload_if_changed() swaps it meanwhile
        if api is None:
            raise KubeError(
                0, "NotConfigured", self.load_error or "no connection settings", category=UNCONFIGURED
            )
        method, url, headers, body, post = api.param_serialize(
            "GET",
            path,
            query_params=query or [],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            resp = api.call_api(method, url, header_params=headers, _request_timeout=timeout)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise _transport_error(exc) from exc
        except k8s_client.ApiException as exc:  # raised for TLS errors by the REST layer
            raise _transport_error(exc) from exc
        if not 200 <= resp.status <= 299:
            raw = resp.response
            try:
                data = raw.read(64 * 1024)
            except (urllib3.exceptions.HTTPError, OSError):
                data = b""
            finally:
                raw.release_conn()
            try:
                status: object = json.loads(data)
            except ValueError:
                status = {"message": data[:200].decode("utf-8", "replace")}
            raise error_from_status(resp.status, str(resp.reason or ""), status, _retry_after(raw.headers))
        return resp.response

    def get_json(
        self,
        path: str,
        query: list[tuple[str, Any]] | None = None,
        answered: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """GET ``path`` and decode the JSON body. Raises KubeError / Gone. ``answered()`` is called
        once a successful response's headers arrive, before its body is read."""
        raw = self._request(path, query, (self.timeouts.connect, self.timeouts.read))
        try:
            if answered is not None:
                answered()
            data = raw.read()
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise KubeError(0, type(exc).__name__, str(exc)) from exc
        finally:
            raw.release_conn()
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise KubeError(0, "BadResponse", f"invalid JSON from {path}: {exc}") from exc
        if not isinstance(body, dict):
            raise KubeError(0, "BadResponse", f"expected a JSON object from {path}")
        return body

    @contextmanager
    def stream_lines(
        self,
        path: str,
        query: list[tuple[str, Any]],
        inactivity_timeout: float,
        holder: list[Any] | None = None,
    ) -> Iterator[Iterator[bytes]]:
        """Open a watch stream; yields an iterator of raw JSON lines (bytes).

        ``inactivity_timeout`` is the socket read timeout: no byte (event or bookmark) for that long
        raises KubeError(0, "ReadTimeoutError"). ``holder`` (a list) receives the live response so
        another thread can ``abort()`` it on shutdown.
        """
        raw = self._request(path, query, (self.timeouts.connect, inactivity_timeout))
        if holder is not None:
            holder.append(raw)
        try:
            yield _iter_lines(raw)
        finally:
            if holder is not None and raw in holder:
                holder.remove(raw)
            raw.release_conn()
            raw.close()


def abort_response(raw: Any) -> None:
    """Unblock a thread reading ``raw`` (an urllib3 response) from another thread."""
    # Best effort: shutdown() unblocks a blocked read; close() covers responses without a socket.
    with contextlib.suppress(Exception):
        raw.shutdown()
    with contextlib.suppress(Exception):
        raw.close()


def _iter_lines(raw: Any) -> Iterator[bytes]:
    chunked = raw.chunked and raw.supports_chunked_reads()
    buffer = b""
    try:
        while True:
            if chunked:
                chunk_iter = raw.read_chunked(decode_content=True)
                for chunk in chunk_iter:
                    buffer += chunk
                    if b"\n" in buffer:
                        *lines, buffer = buffer.split(b"\n")
                        yield from (line for line in lines if line.strip())
                break
            chunk = raw.read1(65536)
            if not chunk:
                break
            buffer += chunk
            if b"\n" in buffer:
                *lines, buffer = buffer.split(b"\n")
                yield from (line for line in lines if line.strip())
    except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError) as exc:
        raise KubeError(0, type(exc).__name__, str(exc) or "watch stream broken") from exc
    if buffer.strip():
        yield buffer


def copy_configuration(configuration: k8s_client.Configuration) -> k8s_client.Configuration:
    import copy

    return copy.copy(configuration)
