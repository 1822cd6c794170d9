"""Background threads give way to requests in flight: at once when none is, until the last one
finishes, at most the wait bound per step and the share bound per window."""

from __future__ import annotations

import threading

from dashboard.priority import RequestPriority


def test_no_request_in_flight_means_no_wait():
    priority = RequestPriority(max_wait_s=10.0)
    assert priority.give_way() == 0.0
    priority.started()
    priority.finished()
    assert priority.in_flight == 0
    assert priority.give_way() == 0.0


def test_the_wait_ends_when_the_last_request_finishes():
    priority = RequestPriority(max_wait_s=30.0)
    priority.started()
    priority.started()
    waited: list[float] = []
    worker = threading.Thread(target=lambda: waited.append(priority.give_way()))
    worker.start()
    priority.finished()
    worker.join(0.2)
    assert worker.is_alive()  # one request still in flight
    priority.finished()
    worker.join(10)
    assert not worker.is_alive()
    assert 0.0 < waited[0] < 30.0
    assert priority.waited_seconds == waited[0]


def test_a_step_waits_at_most_the_bound():
    priority = RequestPriority(max_wait_s=0.01, share=1.0, window_s=1000.0)
    priority.started()  # never finishes
    waited = priority.give_way()
    assert 0.01 <= waited < 5.0


def test_waits_stop_once_the_windows_share_is_spent_and_resume_in_the_next():
    priority = RequestPriority(max_wait_s=0.02, share=0.00004, window_s=1000.0)  # 40 ms a window
    priority.started()  # never finishes
    first = priority.give_way()
    assert first >= 0.02
    priority.give_way()  # what is left of the share, if anything
    assert priority.give_way() == 0.0  # spent: background work goes on at full speed
    priority._window_start -= 1000.0  # the window is over
    assert priority.give_way() > 0.0


def test_finished_never_goes_below_zero():
    priority = RequestPriority()
    priority.finished()
    assert priority.in_flight == 0
    priority.started()
    assert priority.in_flight == 1
    priority.finished()
    assert priority.give_way() == 0.0


def test_pace_gives_way_before_every_nth_item():
    priority = RequestPriority()
    calls: list[int] = []
    seen: list[int] = []
    priority.give_way = lambda: calls.append(len(seen)) or 0.0  # type: ignore[method-assign]
    for item in priority.pace(range(7), every=3):
        seen.append(item)
    assert seen == list(range(7))
    assert calls == [0, 3, 6]  # before items 0, 3 and 6
