"""memo.SingleFlight: requests that arrive while a slot is computed take that result; later ones
compute afresh; nothing is kept once no request is in flight."""

from __future__ import annotations

import threading

import pytest

from dashboard.views import memo


def test_a_request_arriving_during_a_computation_takes_its_result() -> None:
    flights = memo.SingleFlight()
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []
    got: dict[str, object] = {}

    def slow() -> object:
        calls.append("first")
        started.set()
        assert release.wait(10)
        return "first's result"

    def first() -> None:
        got["first"] = flights.run(("jobs", 1), slow)

    def second() -> None:
        got["second"] = flights.run(("jobs", 1), lambda: calls.append("second") or "second's result")

    t1 = threading.Thread(target=first)
    t1.start()
    assert started.wait(10)
    t2 = threading.Thread(target=second)
    t2.start()
    # The second request is registered before the first finishes: it waits on the slot.
    for _ in range(1000):
        if flights._in_flight.get(("jobs", 1)) == 2:
            break
        threading.Event().wait(0.001)
    assert flights._in_flight.get(("jobs", 1)) == 2
    release.set()
    t1.join()
    t2.join()
    assert calls == ["first"]
    assert got == {"first": "first's result", "second": "first's result"}
    assert flights._results == {} and flights._in_flight == {}


def test_a_request_after_the_computation_computes_again() -> None:
    flights = memo.SingleFlight()
    assert flights.run(("pgs",), lambda: 1) == 1
    assert flights.run(("pgs",), lambda: 2) == 2
    assert flights.run(("other",), lambda: 3) == 3


def test_a_failed_computation_lets_the_next_request_compute() -> None:
    flights = memo.SingleFlight()

    def boom() -> object:
        raise RuntimeError("cache changed under the pass")

    with pytest.raises(RuntimeError):
        flights.run(("jobs",), boom)
    assert flights.run(("jobs",), lambda: "ok") == "ok"


def test_idle_slots_are_pruned_beyond_the_bound() -> None:
    flights = memo.SingleFlight(max_slots=4)
    for i in range(20):
        flights.run(("q", i), lambda i=i: i)
    assert len(flights) <= 5
