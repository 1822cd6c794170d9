"""Log records that carry the request id, and a JSON-lines formatter.

The request id of the request being served lives in a context variable set by
``dashboard.middleware.RequestContextMiddleware``; ``RequestIdFilter`` copies it onto every record
(``"-"`` outside a request), so any logger anywhere in the process tags its lines without being
handed the request.

``BackgroundHandler`` writes the lines from a thread of its own: a request's line is formatted
by the thread serving it and written after, so writing it is not part of the request's time.
"""

from __future__ import annotations

import json
import logging
import os
import queue
from contextvars import ContextVar
from datetime import UTC, datetime
from logging.handlers import QueueHandler, QueueListener
from typing import TextIO

#: The id of the request the current thread is serving, or "-" outside a request.
request_id_var: ContextVar[str] = ContextVar("volcano_ui_request_id", default="-")

# Attributes every LogRecord has; anything else was passed through ``extra=`` and is emitted too.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None))) | {
    "message",
    "asctime",
    "request_id",
}


class RequestIdFilter(logging.Filter):
    """Set ``record.request_id`` from the request context (never drops a record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
        return True


class ReadinessProbeFilter(logging.Filter):
    """Drop django.request's "Service Unavailable: /readyz" record; keep every other one.

    /readyz answers 503 on purpose while a kind has not been listed yet (dashboard/health.py), and
    kubelet asks every few seconds: logged as an ERROR, an expected state buries the real errors.
    Its JSON body says which kinds it waits for. Matches the record's ``status_code`` and
    ``request`` attributes, set by ``django.utils.log.log_response``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        return not (
            getattr(record, "status_code", None) == 503 and getattr(request, "path_info", None) == "/readyz"
        )


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (RFC 3339 UTC), level, logger, message, request_id, extras.

    Values given with ``extra={...}`` become top-level keys; values JSON cannot encode are written
    with ``str()``. Exceptions go in ``exc_info`` as the formatted traceback text.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", request_id_var.get()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class BackgroundHandler(QueueHandler):
    """Format each record in the thread that logs it; write it to ``stream`` (stderr by default)
    from a writer thread (``logging.handlers.QueueListener``).

    Why: a write is a system call, and a thread in one gives up the interpreter lock. Under load,
    a request thread that wrote its log line waited for the lock behind the informers and other
    requests before it could send its response. Queued, the line costs the request thread no wait.

    The writer starts with the first record of each process (a gunicorn worker forked from the
    master starts its own) and writes what is queued when the handler closes (``logging.shutdown``
    at exit). Lines keep their order."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(queue.SimpleQueue())
        self.target: logging.StreamHandler[TextIO] = logging.StreamHandler(stream)
        # Records arrive formatted (QueueHandler.prepare): the message is the whole line.
        self.target.setFormatter(logging.Formatter("%(message)s"))
        self._listener: QueueListener | None = None
        self._pid = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        if self._pid != os.getpid():
            self._start()
        self.queue.put_nowait(record)

    def _start(self) -> None:
        # The handler's own lock: logging re-creates it in a forked child.
        with self.lock:  # type: ignore[union-attr]
            if self._pid == os.getpid():
                return
            # A forked child does not inherit the parent's writer thread, nor the lines it had
            # not written yet (the parent writes those).
            self.queue = queue.SimpleQueue()
            self._listener = QueueListener(self.queue, self.target)
            self._listener.start()
            self._pid = os.getpid()

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            listener, self._listener = self._listener, None
            if listener is not None and self._pid == os.getpid():
                listener.stop()  # writes every queued line, then ends the writer thread
            self._pid = 0
        self.target.flush()
        super().close()
