"""Raw JSON access to the Kubernetes API through the official client's transport and auth.

Connection settings come from the kubernetes client's own loaders (``load_kube_config`` /
``load_incluster_config`` with ``client_configuration=``), so client certificates, bearer tokens and
the exec / OIDC auth plugins (which refresh tokens through ``Configuration.refresh_api_key_hook``)
all work. Requests go through ``ApiClient.param_serialize`` (which applies that auth) and
``ApiClient.call_api`` with the body left unread, and this module decodes JSON itself: the
generated model classes are far too slow for tens of thousands of pods (see README "Cluster cache").
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
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


class KubeError(Exception):
    """Any failure talking to the API server. ``status`` is the HTTP code (0: no HTTP answer)."""

    def __init__(self, status: int, reason: str, message: str = "", retry_after: float | None = None):
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after

    def describe(self) -> str:
        if self.status == 0 and self.reason in ("WatchClosed", "BadWatchEvent", "BadResponse"):
            return self.message
        if self.status == 0:
            return f"API server unreachable ({self.reason}): {self.message}"
        return f"HTTP {self.status} {self.reason}" + (f": {self.message}" if self.message else "")


class Gone(KubeError):
    """410 Gone: the resourceVersion is older than the server's history; the informer re-lists."""


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


@dataclass
class Timeouts:
    connect: float = 5.0
    read: float = 30.0


class KubeClient:
    """A small raw-JSON client: ``get_json`` for lists/discovery, ``stream_lines`` for watches."""

    def __init__(self, configuration: k8s_client.Configuration, timeouts: Timeouts | None = None):
        configuration = copy_configuration(configuration)
        # Our informers own the retry policy (backoff with jitter, Retry-After); urllib3's silent
        # immediate retries would hide failures from it and multiply requests during an outage.
        configuration.retries = False
        self.configuration = configuration
        self.api = k8s_client.ApiClient(configuration)
        self.api.user_agent = "volcano-ui"
        self.timeouts = timeouts or Timeouts()

    @property
    def host(self) -> str:
        return self.configuration.host

    def close(self) -> None:
        self.api.close()

    def _request(self, path: str, query: list[tuple[str, Any]] | None, timeout) -> Any:
        method, url, headers, body, post = self.api.param_serialize(
            "GET",
            path,
            query_params=query or [],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            resp = self.api.call_api(method, url, header_params=headers, _request_timeout=timeout)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise KubeError(0, type(exc).__name__, str(exc)) from exc
        except k8s_client.ApiException as exc:  # raised for TLS errors by the REST layer
            raise KubeError(exc.status or 0, str(exc.reason or "error"), str(exc.body or "")) from exc
        if not 200 <= resp.status <= 299:
            raw = resp.response
            try:
                data = raw.read(64 * 1024)
            except (urllib3.exceptions.HTTPError, OSError):
                data = b""
            finally:
                raw.release_conn()
            message = ""
            try:
                status = json.loads(data)
                if isinstance(status, dict):
                    message = str(status.get("message") or "")
            except ValueError:
                message = data[:200].decode("utf-8", "replace")
            cls = Gone if resp.status == 410 else KubeError
            raise cls(resp.status, str(resp.reason or ""), message, _retry_after(raw.headers))
        return resp.response

    def get_json(self, path: str, query: list[tuple[str, Any]] | None = None) -> dict:
        """GET ``path`` and decode the JSON body. Raises KubeError / Gone."""
        raw = self._request(path, query, (self.timeouts.connect, self.timeouts.read))
        try:
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
        self, path: str, query: list[tuple[str, Any]], inactivity_timeout: float, holder: list | None = None
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
