"""The log handler that writes from a thread of its own (dashboard/logs.py)."""

from __future__ import annotations

import io
import json
import logging
import os
import threading

import pytest

from dashboard.logs import BackgroundHandler, JsonFormatter, RequestIdFilter, request_id_var


def _logger(handler: logging.Handler, name: str) -> logging.Logger:
    logger = logging.getLogger(name)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return logger


def test_lines_are_written_whole_in_order_by_another_thread():
    stream = io.StringIO()
    handler = BackgroundHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    writers: set[int] = set()
    original = handler.target.emit

    def emit(record: logging.LogRecord) -> None:
        writers.add(threading.get_ident())
        original(record)

    handler.target.emit = emit  # type: ignore[method-assign]
    logger = _logger(handler, "test.background.order")
    try:
        for i in range(200):
            logger.info("line %d of %s", i, "many")
    finally:
        logger.removeHandler(handler)
        handler.close()  # writes what is still queued
    assert stream.getvalue().splitlines() == [f"INFO line {i} of many" for i in range(200)]
    assert writers and threading.get_ident() not in writers


def test_the_request_id_and_json_are_those_of_the_logging_thread():
    stream = io.StringIO()
    handler = BackgroundHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    logger = _logger(handler, "test.background.json")
    token = request_id_var.set("req-7")
    try:
        logger.info("served %s", "/", extra={"status": 204})
    finally:
        request_id_var.reset(token)
        logger.removeHandler(handler)
        handler.close()
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["message"] == "served /" and entry["request_id"] == "req-7" and entry["status"] == 204


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_writes_its_own_lines_once():
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    handler = BackgroundHandler(stream)
    logger = _logger(handler, "test.background.fork")
    logger.info("parent before fork")
    pid = os.fork()
    if pid == 0:  # the child: its own writer thread, none of the parent's queued lines
        try:
            logger.info("child")
            handler.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    logger.info("parent after fork")
    logger.removeHandler(handler)
    handler.close()
    stream.close()
    with os.fdopen(read_end) as out:
        lines = out.read().splitlines()
    assert sorted(lines) == ["child", "parent after fork", "parent before fork"]
