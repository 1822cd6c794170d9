"""The review cache's promises, with a review function the test controls: a bounded wait, one review
per key in flight, backoff after a failure, last known answers served (and marked) while reviews
fail, and "unknown" only when no answer ever came."""

from __future__ import annotations

import threading
import time

from dashboard.access import _ReviewCache
from dashboard.kube.reviews import ReviewError


def _deadline(seconds: float = 0.3) -> float:
    return time.monotonic() + seconds


def test_a_hanging_review_costs_one_bounded_wait_and_is_not_asked_twice():
    cache, release, asked = _ReviewCache(), threading.Event(), []

    def hang(key: tuple) -> bool:
        asked.append(key)
        release.wait(10)
        return True

    keys = [("u", (), "list", "g", "r", f"ns{i}", "") for i in range(20)]
    started = time.monotonic()
    answers = cache.answers(keys, hang, _deadline())
    assert time.monotonic() - started < 1.0  # all twenty in parallel, one bounded wait
    assert all(not a.known and not a.allowed for a in answers)  # never answered: fail closed
    cache.answers(keys, hang, _deadline(0.05))
    release.set()
    answers = cache.answers(keys, hang, _deadline(2))
    assert all(a.allowed and a.known and a.as_of is None for a in answers)
    # The reviews in flight (or queued for the pool) were waited for, never asked again.
    assert sorted(asked) == sorted(keys)


def test_failures_back_off_and_the_last_answer_is_served_with_its_time():
    cache, calls = _ReviewCache(), []
    key = ("u", (), "list", "g", "r", "ns", "")
    assert cache.answers([key], lambda k: True, _deadline())[0].allowed
    answered = time.time()

    def fail(k: tuple) -> bool:
        calls.append(k)
        raise ReviewError("the API server did not answer")

    cache.expire()
    for _ in range(5):
        answer = cache.answers([key], fail, _deadline())[0]
        assert answer.allowed and answer.known and answer.as_of is not None
        assert abs(answer.as_of - answered) < 1.0
    assert len(calls) == 1  # backing off: one failed review, not one per request
