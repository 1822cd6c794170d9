"""The worker's render gate (dashboard/gunicorn_worker.py ``PageGate``, ``page_head_key``): at most
VOLCANO_UI_RENDER_SLOTS whole pages in the thread pool, fragment polls and riders of a rendering
page pass."""

from __future__ import annotations

import http.client
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from dashboard.gunicorn_worker import PageGate, page_head_key
from tests.faults.conftest import wait_for
from tests.faults.test_serving import Gunicorn

PAGE = b"GET /jobs/?page=2 HTTP/1.1\r\nHost: x\r\nCookie: t=dark\r\nX-Request-Id: 1\r\n\r\n"


def test_a_fragment_poll_static_file_or_post_passes_the_gate():
    poll = b"GET /jobs/ns/a/?f=status&v=3 HTTP/1.1\r\nHost: x\r\nHX-Request: true\r\n\r\n"
    assert page_head_key(poll) is None
    assert page_head_key(b"GET /static/app.1234.js HTTP/1.1\r\nHost: x\r\n\r\n") is None
    assert page_head_key(b"POST /jobs/ns/a/suspend HTTP/1.1\r\nHost: x\r\n\r\n") is None
    assert page_head_key(b"garbage\r\n\r\n") is None


def test_whole_pages_are_gated_and_boosted_navigation_too():
    assert page_head_key(PAGE) is not None
    # ?f= without htmx is a whole page (the view renders it all), and htmx without ?f= as well.
    assert page_head_key(b"GET /jobs/?f=status HTTP/1.1\r\nHost: x\r\n\r\n") is not None
    assert page_head_key(b"GET /jobs/ HTTP/1.1\r\nHost: x\r\nHX-Request: true\r\nHX-Boosted: true\r\n\r\n")


def test_the_key_names_the_viewer_and_page_but_not_the_request_id():
    other_id = PAGE.replace(b"X-Request-Id: 1", b"X-Request-Id: 2")
    assert page_head_key(PAGE) == page_head_key(other_id)
    assert page_head_key(PAGE) != page_head_key(PAGE.replace(b"t=dark", b"t=light"))
    assert page_head_key(PAGE) != page_head_key(PAGE.replace(b"page=2", b"page=3"))


def test_at_most_k_pages_go_and_the_rest_wait_in_order():
    gate = PageGate(2)
    assert gate.admit(b"a", "a1") == (True, True)
    assert gate.admit(b"b", "b1") == (True, True)
    assert gate.admit(b"c", "c1") == (False, False)
    assert gate.admit(b"d", "d1") == (False, False)
    assert gate.release(b"a") == [("c1", b"c")]
    assert gate.release(b"b") == [("d1", b"d")]
    assert gate.release(b"c") == []
    assert gate.release(b"d") == []
    assert not gate.rendering and not gate.waiting


def test_a_request_for_a_page_being_rendered_holds_no_slot():
    gate = PageGate(1)
    assert gate.admit(b"a", "a1") == (True, True)
    # It waits for a1's rendering (sharing.py), so it takes no slot and does not queue.
    assert gate.admit(b"a", "a2") == (True, False)
    assert gate.admit(b"b", "b1") == (False, False)
    assert gate.admit(b"b", "b2") == (False, False)
    assert gate.admit(b"c", "c1") == (False, False)
    # b1 gets the slot; b2, queued behind it for the same page, goes with it without one.
    assert gate.release(b"a") == [("b1", b"b"), ("b2", None)]
    assert [item for _, item in gate.waiting] == ["c1"]
    assert gate.release(b"b") == [("c1", b"c")]


def test_no_slots_means_no_gate():
    gate = PageGate(0)
    assert all(gate.admit(b"a", i) == (True, False) for i in range(10))
    assert not gate.waiting


@pytest.fixture(scope="module")
def one_slot(demo_cluster, tmp_path_factory):
    kubeconfig = demo_cluster.write_kubeconfig(tmp_path_factory.mktemp("gate") / "kubeconfig")
    server = Gunicorn(kubeconfig, VOLCANO_UI_RENDER_SLOTS="1", VOLCANO_UI_MAX_QUEUED="64")
    try:
        wait_for(server.ready, timeout=60, what="gunicorn's /readyz on the health port", every=0.2)
        yield server
    finally:
        server.stop()


def _fetch(port: int, path: str, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.mark.slow
def test_a_crowd_of_pages_through_one_slot_is_answered_with_the_polls(one_slot):
    """Thirty pages (three distinct ones, so most wait for the slot or ride a rendering) and
    thirty fragment polls at once, through one render slot and four threads: every one is
    answered, none refused (they fit VOLCANO_UI_MAX_QUEUED)."""
    job = re.search(
        r'href="(/jobs/[^/"]+/[^/"]+/)"', requests.get(f"http://127.0.0.1:{one_slot.port}/jobs/").text
    )
    assert job, "the demo cluster lists a Job"
    poll = (f"{job.group(1)}?f=status", {"HX-Request": "true"})
    asks = [(path, {}) for path in ("/", "/jobs/", "/queues/") * 10] + [poll] * 30
    with ThreadPoolExecutor(len(asks)) as pool:
        statuses = list(pool.map(lambda ask: _fetch(one_slot.port, *ask), asks))
    assert statuses[:30] == [200] * 30
    assert set(statuses[30:]) <= {200, 204}


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_frozen_survivors_leave_the_collections_and_a_full_turn_frees_frozen_cycles():
    import gc
    import weakref

    from dashboard.gunicorn_worker import freeze_survivors

    try:
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        assert freeze_survivors(full=True) > 0
        del cycle
        gc.collect()  # frozen: no collection walks it
        assert alive() is not None
        freeze_survivors(full=False)  # nor a turn that only freezes what is new
        assert alive() is not None
        freeze_survivors(full=True)  # a full turn unfreezes and frees it
        assert alive() is None
    finally:
        gc.unfreeze()


def test_a_turn_between_full_ones_freezes_without_a_walk_and_the_next_full_one_frees():
    import gc
    import weakref

    from dashboard.gunicorn_worker import freeze_survivors

    try:
        freeze_survivors(full=True)
        cycle = _Cycle()
        garbage = weakref.ref(cycle)
        del cycle
        frozen_before = gc.get_freeze_count()
        assert freeze_survivors(full=False) > frozen_before  # what was new is frozen, garbage too
        assert garbage() is not None
        freeze_survivors(full=True)
        assert garbage() is None
    finally:
        gc.unfreeze()
