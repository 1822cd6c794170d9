"""An API server that accepts connections and answers nothing (the simulator's fault
``unavailable_seconds``): while a reconnecting informer's watch or list request waits, the kind's
state says since when (``KindState.waiting_since``) and its notice says so, the error that ended the
previous attempt being the previous cause; the mark goes as soon as the server answers.

Real HTTP against the simulated cluster. The waits are the cache's own (``wait_for``, with
deadlines) and end well before the hanging request's own timeout (``UNANSWERED``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import translation

from dashboard.views.notices import notices
from tests.kube.test_informers import JOBS, api, faults, job_body

# The read timeout of the hanging request (the watch's inactivity timeout, or a list's request
# timeout): far longer than any wait below, so every check runs while the request still waits.
UNANSWERED = 60.0
OUTAGE = 600  # seconds; every test ends it itself


def _notice(cache, kind: str) -> dict:
    with translation.override("en"):  # English whatever language an earlier test left active
        (found,) = notices(cache.snapshot(), kind)
    return found


def test_a_cut_watch_whose_reconnect_is_not_answered_says_since_when_it_waits(sim_cluster, make_live_cache):
    cache = make_live_cache(sim_cluster, inactivity_timeout=UNANSWERED)
    api(sim_cluster, "POST", JOBS, job_body("before-stall"))
    cache.wait_for(lambda s: s.jobs.get("default", "before-stall"), 5.0)  # the jobs watch is open
    cut = datetime.now(UTC)
    try:
        faults(sim_cluster, unavailable_seconds=OUTAGE)  # cuts the watches; answers nothing more
        state = cache.wait_for(lambda s: s.jobs.state.waiting_since and s.jobs.state, 10.0)
        assert state.name == "stale"
        assert "cut off in the middle of a response" in state.last_error  # how the watch ended
        assert cut <= state.waiting_since <= datetime.now(UTC)

        notice = _notice(cache, "jobs")
        assert notice["waiting_since"] == state.waiting_since
        assert "Waiting for an answer from the API server since" in notice["waiting"]
        assert f'<time datetime="{state.waiting_since.isoformat()}">' in notice["waiting"]
        assert "cut off in the middle of a response" in notice["error"]  # shown as the previous cause
        assert cache.snapshot().jobs.state.waiting_since == state.waiting_since  # still waiting
    finally:
        faults(sim_cluster, unavailable_seconds=0)

    # Answered again (after the held request's own failure and a backoff): no mark, no notice.
    state = cache.wait_for(lambda s: s.jobs.state.name == "synced" and s.jobs.state, 10.0)
    assert state.waiting_since is None
    assert notices(cache.snapshot(), "jobs") == []


def test_a_list_that_is_not_answered_after_a_refusal_says_since_when_it_waits(sim_cluster, make_live_cache):
    # A backoff of about 3 s after each failure: once the kind is forbidden, no request of its is
    # in flight until the next list, which the outage set meanwhile holds.
    cache = make_live_cache(sim_cluster, request_timeout=UNANSWERED, backoff_initial=3.0, backoff_max=3.0)
    faults(sim_cluster, forbidden=["queues"], drop_watches=True)  # the next request gets 403
    cache.wait_for(lambda s: s.queues.state.name == "forbidden", 10.0)
    assert cache.snapshot().queues.state.waiting_since is None  # refused: answered
    stalled = datetime.now(UTC)
    try:
        faults(sim_cluster, unavailable_seconds=OUTAGE)
        state = cache.wait_for(lambda s: s.queues.state.waiting_since and s.queues.state, 10.0)
        assert state.name == "forbidden" and "403" in state.last_error
        assert state.waiting_since >= stalled  # the list sent after the backoff, not the refused one
        notice = _notice(cache, "queues")
        assert "Waiting for an answer from the API server since" in notice["waiting"]
        assert "403" in notice["error"]
    finally:
        faults(sim_cluster, reset=True)

    state = cache.wait_for(lambda s: s.queues.state.name == "synced" and s.queues.state, 15.0)
    assert state.waiting_since is None
