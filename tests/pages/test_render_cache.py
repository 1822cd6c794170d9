"""Cheap overview and queue list at scale: counts from the cache's indexes, queue rows rendered
once per change (per language), and the page memos bounded by size.

A simulated cluster with its controllers off (objects exactly as written), read by a live cache.
"""

from __future__ import annotations

import itertools

import pytest

from dashboard.kube import kinds
from dashboard.presenters.clock import reference_now
from dashboard.presenters.podgroups import podgroup_gang
from dashboard.views import memo, overview
from dashboard.volcano import gang as volcano_gang
from dashboard.volcano import objects, phases
from dashboard.volcano import phases as volcano_phases
from dashboard.volcano.events import event_records, latest_per_object
from tests.pages.helpers import kind, text

QUEUES = ("scheduling.volcano.sh", "queues")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
JOBS = ("batch.volcano.sh", "jobs")
_seq = itertools.count()


@pytest.fixture(scope="module")
def rc_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=5, name="rc") as pair:
        yield pair


def _ns(cluster, ns: str) -> None:
    if cluster.store.try_get(kind("", "namespaces"), None, ns) is None:
        cluster.store.create(kind("", "namespaces"), {"metadata": {"name": ns}})


def _queue(cluster, cache, name: str, parent: str = "root") -> None:
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "parent": parent},
        "status": {"state": "Open"},
    }
    cluster.store.create(kind(*QUEUES), obj, None, replay=True)
    cache.wait_for(lambda s: s.queues.get(None, name) is not None, timeout=10)


def _podgroup(cluster, cache, ns: str, name: str, queue: str, phase: str, **status) -> None:
    _ns(cluster, ns)
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"minMember": 2, "queue": queue},
        "status": {"phase": phase, **status},
    }
    cluster.store.create(kind(*PODGROUPS), obj, ns, replay=True)
    cache.wait_for(lambda s: s.podgroups.get(ns, name) is not None, timeout=10)


def _set_pg_phase(cluster, cache, ns: str, name: str, phase: str) -> None:
    def edit(obj):
        obj["status"]["phase"] = phase

    cluster.store.mutate(kind(*PODGROUPS), ns, name, edit)
    cache.wait_for(lambda s: (s.podgroups.get(ns, name) or {}).get("status", {}).get("phase") == phase, 10)


def _row(page: str, queue: str) -> str:
    return page.split(f'data-queue="{queue}"')[1].split("</tr>")[0]


class _CountingTemplates:
    """Wraps memo.get_template to count how many queue rows are rendered."""

    def __init__(self, real):
        self.real = real
        self.rendered = 0

    def __call__(self, name):
        template = self.real(name)
        outer = self

        class Counting:
            def render(self, ctx):
                outer.rendered += 1
                return template.render(ctx)

        return Counting()


def test_queue_rows_render_once_until_their_queue_or_counts_change(rc_cluster, client, monkeypatch):
    cluster, cache = rc_cluster
    n = next(_seq)
    qa, qb = f"rc-a{n}", f"rc-b{n}"
    _queue(cluster, cache, qa)
    _queue(cluster, cache, qb)
    _podgroup(cluster, cache, "rc-ns", f"pg{n}", qa, "Running")
    counting = _CountingTemplates(memo.get_template)
    monkeypatch.setattr(memo, "get_template", counting)

    first = client.get("/queues/").content.decode()
    assert 'Running <span class="chip-count">1</span>' in _row(first, qa)
    client.get("/queues/")
    rendered = counting.rendered
    # Nothing changed: the second view renders no row at all (the first one rendered every row).
    client.get("/queues/")
    assert counting.rendered == rendered

    _set_pg_phase(cluster, cache, "rc-ns", f"pg{n}", "Pending")
    page = client.get("/queues/").content.decode()
    # Only qa's row and its parent root's, whose counts include its subtree's.
    assert counting.rendered == rendered + 2
    row = _row(page, qa)
    assert 'Pending <span class="chip-count">1</span>' in row
    # Only the phases that have PodGroups get a chip (one line per queue).
    assert "Running <span" not in row
    assert "data-no-podgroups" in _row(page, qb)


def test_cached_queue_rows_follow_the_language(rc_cluster, client):
    cluster, cache = rc_cluster
    n = next(_seq)
    _queue(cluster, cache, f"rc-lang{n}")
    english = _row(client.get("/queues/").content.decode(), f"rc-lang{n}")
    assert "No resources set or allocated." in text(english) and "(parent root)" in text(english)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/queues/"})
    chinese = _row(client.get("/queues/").content.decode(), f"rc-lang{n}")
    assert "未设置或分配资源。" in text(chinese) and "父队列" in text(chinese)
    client.post("/i18n/setlang/", {"language": "en", "next": "/queues/"})
    assert "No resources set or allocated." in text(
        _row(client.get("/queues/").content.decode(), f"rc-lang{n}")
    )


def test_cached_queue_rows_escape_hostile_names(rc_cluster, client):
    cluster, cache = rc_cluster
    # A queue name the API server would refuse, but the cache renders whatever it is given.
    hostile = '<img src=x onerror="alert(1)">'
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": f"rc-h{next(_seq)}"},
        "spec": {"weight": 1, "parent": hostile},
        "status": {"state": hostile},
    }
    cluster.store.create(kind(*QUEUES), obj, None, replay=True)
    cache.wait_for(lambda s: s.queues.get(None, obj["metadata"]["name"]) is not None, timeout=10)
    for path in ("/queues/", "/"):
        page = client.get(path).content.decode()
        assert hostile not in page
        assert "&lt;img src=x" in page


def test_overview_counts_and_attention_come_from_indexes_restricted_to_namespaces(rc_cluster):
    cluster, cache = rc_cluster
    n = next(_seq)
    q = f"rc-idx{n}"
    _queue(cluster, cache, q)
    _podgroup(cluster, cache, f"rc-x{n}", "pg-low", q, "Running", running=1)  # below minMember 2
    _podgroup(cluster, cache, f"rc-x{n}", "pg-ok", q, "Running", running=2)
    _podgroup(cluster, cache, f"rc-y{n}", "pg-other", q, "Inqueue")
    everything = cache.snapshot()
    only_x = cache.snapshot(namespaces=frozenset({f"rc-x{n}"}))
    for snap in (everything, only_x):
        walked = {}
        for pg in snap.podgroups.all():
            key = (kinds.queue_of(pg), phases.podgroup_phase(pg))
            walked[key] = walked.get(key, 0) + 1
        assert snap.podgroups.count_by("queue_phase") == walked
        by_phase = {}
        for pg in snap.podgroups.all():
            by_phase[phases.podgroup_phase(pg)] = by_phase.get(phases.podgroup_phase(pg), 0) + 1
        assert snap.podgroups.count_by("phase") == by_phase
    assert only_x.podgroup_counts_by_queue()[q] == {"Running": 2}
    assert everything.podgroup_counts_by_queue()[q] == {"Running": 2, "Inqueue": 1}
    below = [objects.name(r["pg"]) for r in overview.attention(only_x, cluster.clock.now())["below"]]
    assert below == ["pg-low"]


@pytest.mark.parametrize(
    "status, min_member",
    [
        ({"phase": "Running", "running": 1}, 2),
        ({"phase": "Running", "running": 1, "succeeded": 1}, 2),
        ({"phase": "Unknown", "running": "1"}, "3"),
        ({"phase": "Running", "running": -5, "succeeded": 1}, 1),
        ({"phase": "Running", "running": -5}, -1),
        ({"phase": "Pending", "running": 0}, 2),
        ({"phase": "Running", "running": True}, 2),
        ({"phase": "Running", "running": "x"}, None),
        (None, 2),
        ({"phase": 7}, 2),
    ],
)
def test_below_gang_index_agrees_with_the_pages_gang(status, min_member):
    pg = {"metadata": {"name": "g", "namespace": "n"}, "spec": {"minMember": min_member}}
    if status is not None:
        pg["status"] = status
    gang = podgroup_gang(pg)
    # Negative counters and sizes prove nothing: the page's gang shows them unknown ("—") and
    # claims neither met nor below.
    trusted = volcano_gang.podgroup_gang(pg).trusted
    below = (
        phases.podgroup_phase(pg) in ("Running", "Unknown")
        and trusted
        and gang.ready is not None
        and gang.min_available is not None
        and gang.ready < gang.min_available
    )
    assert kinds.podgroup_below_gang(pg) is below
    assert volcano_phases.podgroup_phase(pg) == phases.podgroup_phase(pg)


def test_sized_memo_evicts_least_recently_used_by_size():
    sized = memo.SizedMemo(budget=100)
    sized.put(("a",), "A", 40)
    sized.put(("b",), "B", 40)
    assert sized.get(("a",)) == "A"  # now the most recently used
    sized.put(("c",), "C", 40)  # 120 > 100: the least recently used ("b") goes
    assert sized.get(("b",)) is None and sized.get(("a",)) == "A" and sized.get(("c",)) == "C"
    assert sized.total == 80
    sized.put(("huge",), "H", 101)  # larger than the whole budget: not kept, nothing evicted
    assert sized.get(("huge",)) is None and len(sized) == 2
    sized.put(("a",), "A2", 10)  # replacing an entry replaces its size
    assert sized.total == 50 and sized.get(("a",)) == "A2"


def test_sized_memo_keeps_one_entry_per_slot():
    sized = memo.SizedMemo(budget=1000)
    sized.put(("q", 1), "old", 10, slot=("q",))
    sized.put(("r", 1), "other", 10, slot=("r",))
    sized.put(("q", 2), "new", 10, slot=("q",))  # a newer counter of the same query
    assert sized.get(("q", 1)) is None and sized.get(("q", 2)) == "new" and sized.get(("r", 1)) == "other"
    assert sized.total == 20 and len(sized) == 2
    sized.put(("q", 2), "again", 10, slot=("q",))  # the same key again: replaced, not dropped
    assert sized.get(("q", 2)) == "again" and sized.total == 20


def test_list_memo_lets_go_of_objects_the_cache_replaced(rc_cluster, client):
    """A list computed for an older change counter is never asked for again; kept, it would hold
    the replaced objects alive (the soak's RSS growth, bench/memory_growth.py)."""
    cluster, cache = rc_cluster
    n = next(_seq)
    q = f"rc-rep{n}"
    _queue(cluster, cache, q)
    _podgroup(cluster, cache, f"rc-r{n}", "pg0", q, "Pending")
    assert client.get(f"/podgroups/?queue={q}").status_code == 200
    before = cache.snapshot().podgroups.get(f"rc-r{n}", "pg0")
    _set_pg_phase(cluster, cache, f"rc-r{n}", "pg0", "Running")
    page = client.get(f"/podgroups/?queue={q}").content.decode()
    assert "Running" in text(page)
    entries = [v for k, v in memo.LIST_MEMO.values() if q in repr(k)]
    assert len(entries) == 1
    assert not any(obj is before for obj in entries[0][0])


def test_section_memo_keeps_the_newest_entry_of_each_section(monkeypatch):
    monkeypatch.setattr(memo, "SECTIONS", memo.SectionMemo())
    monkeypatch.setattr(memo.SECTIONS, "clock", lambda: 100.0)  # computations take 0 s: stay exact
    assert memo.section(("s", 1), lambda: "one", stale_key=("s",)) == "one"
    assert memo.section(("t", 1), lambda: "other", stale_key=("t",)) == "other"
    assert memo.section(("s", 2), lambda: "two", stale_key=("s",)) == "two"
    assert list(memo.SECTIONS.entries) == [("t", 1), ("s", 2)]
    assert memo.section(("s", 2), lambda: "recomputed", stale_key=("s",)) == "two"
    # Without a stale key (detail fragments) entries stay LRU-bounded only.
    memo.section(("d", 1), lambda: 1)
    memo.section(("d", 2), lambda: 2)
    assert ("d", 1) in memo.SECTIONS.entries and ("d", 2) in memo.SECTIONS.entries


def test_list_memo_stays_within_its_byte_budget_and_pages_stay_right(rc_cluster, client, monkeypatch):
    cluster, cache = rc_cluster
    n = next(_seq)
    q = f"rc-mem{n}"
    _queue(cluster, cache, q)
    for i in range(6):
        _podgroup(cluster, cache, f"rc-m{n}", f"pg{i}", q, "Running" if i % 2 else "Pending")
    budget = memo.list_entry_size([None] * 6, {"Running": 3, "Pending": 3}) * 2
    monkeypatch.setattr(memo, "LIST_MEMO", memo.SizedMemo(budget))
    for sort in ("name", "-name", "age", "phase"):
        page = client.get(f"/podgroups/?queue={q}&sort={sort}").content.decode()
        assert memo.LIST_MEMO.total <= budget
        names = [f"pg{i}" for i in range(6)]
        shown = [name for name in names if f"/podgroups/rc-m{n}/{name}/" in page]
        assert shown == names
    assert 1 <= len(memo.LIST_MEMO) <= 2
    page = client.get(f"/podgroups/?queue={q}&sort=-name").content.decode()
    order = [i for i in range(6) if f"/podgroups/rc-m{n}/pg{i}/" in page]
    assert sorted(order, key=lambda i: page.index(f"/podgroups/rc-m{n}/pg{i}/"), reverse=True) == list(
        range(6)
    )


def test_a_request_that_waited_for_a_concurrent_computation_takes_its_result(monkeypatch):
    """Under churn the change counters differ between any two requests; a request that waited for
    another's computation of the same section takes that (newer) result instead of computing again."""
    import threading

    monkeypatch.setattr(memo, "SECTIONS", memo.SectionMemo())
    # A still monotonic clock: the slow computation "takes" 0 s, so the last assertion (a cheap
    # section stays exact) does not depend on how long the threads took on a loaded machine.
    monkeypatch.setattr(memo.SECTIONS, "clock", lambda: 100.0)
    started, release = threading.Event(), threading.Event()
    calls = itertools.count(1)

    def slow():
        started.set()
        release.wait(10)
        return next(calls)

    results = {}

    def run(name, key, compute):
        results[name] = memo.section(key, compute, stale_key=("s",))

    first = threading.Thread(target=run, args=("first", ("s", 1), slow))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=run, args=("second", ("s", 2), lambda: next(calls)))
    second.start()
    # The second request is registered on the section's flight before the first finishes.
    for _ in range(1000):
        if memo.SECTIONS.flights._in_flight.get(("s",)) == 2:
            break
        threading.Event().wait(0.001)
    assert memo.SECTIONS.flights._in_flight.get(("s",)) == 2
    release.set()
    first.join(10)
    second.join(10)
    assert results == {"first": 1, "second": 1}
    # Without concurrency a cheap section stays exact.
    assert memo.section(("s", 3), lambda: next(calls), stale_key=("s",)) == 2


def test_attention_html_is_shared_by_viewers_and_follows_language(rc_cluster, client):
    cluster, cache = rc_cluster
    n = next(_seq)
    _queue(cluster, cache, f"rc-att{n}")
    _podgroup(cluster, cache, f"rc-att{n}", "pg-below", f"rc-att{n}", "Running", running=1)
    now = cluster.clock.now()
    attention = overview.attention(cache.snapshot(), now)
    first = memo.attention_html(attention, now)
    assert memo.attention_html(attention, now) is first
    assert "pg-below" in first and "below minMember" in text(first)
    from django.utils import translation

    with translation.override("zh-hans"):
        chinese = memo.attention_html(attention, now)
    assert chinese != first and "pg-below" in chinese
    page = client.get("/").content.decode()
    assert "pg-below" in page


def test_queue_rows_draw_icons_from_the_page_sprite_and_keep_every_value(rc_cluster, client):
    import re

    cluster, cache = rc_cluster
    n = next(_seq)
    name = f"rc-sprite{n}"
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "guarantee": {"resource": {"cpu": "1"}}, "capability": {"cpu": "8"}},
        "status": {"state": "Open", "allocated": {"cpu": "2"}},
    }
    cluster.store.create(kind(*QUEUES), obj, None, replay=True)
    cache.wait_for(lambda s: s.queues.get(None, name) is not None, timeout=10)
    for path in ("/queues/", "/"):
        page = client.get(path).content.decode()
        used = set(re.findall(r'<use href="#(vi-[a-z]+)"', page))
        defined = set(re.findall(r'<symbol id="(vi-[a-z]+)"', page))
        assert used and used <= defined, (path, used - defined)
        assert page.count('class="icon-sprite"') == 1
    row = _row(client.get("/queues/").content.decode(), name)
    assert '<use href="#vi-unlock">' in row and "Open" in text(row)
    # Guarantee and capability are no longer repeated as marker titles, but stay in the bar's label.
    assert re.search(r'aria-label="cpu: allocated 2, deserved [^"]*, guarantee 1, capability 8"', row)


def test_recent_warnings_from_the_index_match_a_sort_over_every_event(rc_cluster):
    cluster, cache = rc_cluster
    n = next(_seq)
    ns = f"rc-ev{n}"
    _ns(cluster, ns)
    for i in range(30):
        ev = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"e{i:02d}", "namespace": ns},
            "involvedObject": {
                "kind": "PodGroup",
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "namespace": ns,
                "name": f"pg{i % 12}",
            },
            "reason": f"R{i % 3}",
            "message": "m",
            "type": "Warning" if i % 4 else "Normal",
            "count": 1,
            # Several share a second: the tiebreak must be (namespace, name) as before.
            "lastTimestamp": f"2026-11-29T10:00:{i // 3:02d}Z",
        }
        cluster.store.create(kind("", "events"), ev, ns, replay=True)
    cache.wait_for(lambda s: s.events.get(ns, "e29") is not None, timeout=10)
    snap = cache.snapshot()
    every = [e for e in snap.events.all() if e.get("type") == "Warning"]
    every.sort(key=overview.event_sort_time, reverse=True)
    expected = latest_per_object(event_records(every[:300]), limit=10)
    assert overview.recent_warnings(snap, reference_now(snap)) == expected
    assert len(snap.events.lookup("warning", True)) == len(every)


def test_memo_keys_tell_caches_apart_even_when_an_id_is_reused():
    """Two caches with equal change counters must not share memo entries (a garbage-collected
    test cache's id may be reused by the next one)."""
    import gc

    from dashboard.kube import ClusterCache

    first = ClusterCache()
    token = memo.cache_token(first)
    assert memo.cache_token(first) == token
    del first
    gc.collect()
    others = [ClusterCache() for _ in range(50)]  # one of them may well land on the freed id
    assert all(memo.cache_token(c) != token for c in others)
