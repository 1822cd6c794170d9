""" "Data as of" is the last moment the cache was known current: for a kind whose watch broke, the
moment it left "synced" (not the start-up list); kinds that can never be read do not freeze it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.kube import store as kube_store
from dashboard.views import notices

ALL = ("jobs", "podgroups", "queues", "pods", "events")
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


@pytest.fixture
def clock(monkeypatch):
    """The store's own clock (KindState times), moved by hand: no sleeping."""
    now = {"t": T0}
    monkeypatch.setattr(kube_store, "utcnow", lambda: now["t"])
    return now


@pytest.fixture
def cache(memory_cache, clock):
    for kind in ALL:
        memory_cache.store(kind).mark_synced()  # the start-up list, at T0
    return memory_cache


def _as_of(client, path="/jobs/") -> str:
    page = client.get(path).content.decode()
    m = re.search(r'<time datetime="([^"]+)" data-as-of>', page)
    assert m, "no data-as-of"
    return m.group(1)


def test_leaving_synced_records_when_the_kind_was_last_live(cache, clock):
    store = cache.store("jobs")
    assert store.state.live_until is None
    clock["t"] = T0 + timedelta(hours=2)  # the watch kept the cache current for two hours
    store.set_state("stale", error="watch dropped")
    assert store.state.live_until == T0 + timedelta(hours=2)
    assert store.state.synced_at == T0
    clock["t"] = T0 + timedelta(hours=3)
    store.set_state("unreachable", error="still down")  # not live in between: unchanged
    store.set_state("stale", error="again")
    assert store.state.live_until == T0 + timedelta(hours=2)
    assert store.state.current_at == T0 + timedelta(hours=2)


def test_data_as_of_during_an_outage_is_when_the_watch_broke(client, cache, clock):
    clock["t"] = T0 + timedelta(hours=2)
    cache.store("jobs").set_state("stale", error="watch dropped")
    assert _as_of(client) == (T0 + timedelta(hours=2)).isoformat()
    snap = cache.snapshot()
    now = T0 + timedelta(hours=5)
    assert notices.data_as_of(snap, now, "jobs", "queues") == T0 + timedelta(hours=2)
    # Recovered (a new list) and broken again later: the later moment.
    cache.store("jobs").mark_synced()
    clock["t"] = T0 + timedelta(hours=4)
    cache.store("jobs").set_state("stale", error="watch dropped")
    assert notices.data_as_of(cache.snapshot(), now, "jobs") == T0 + timedelta(hours=4)


def test_a_kind_never_live_falls_back_to_its_last_list(cache, clock):
    cache.store("pods").set_state("syncing")  # leaving synced at T0 after the list at T0
    clock["t"] = T0 + timedelta(hours=1)
    assert notices.data_as_of(cache.snapshot(), T0 + timedelta(hours=1), "pods") == T0


@pytest.mark.parametrize("state", ["forbidden", "not_installed"])
def test_an_unreadable_kind_does_not_freeze_data_as_of(client, cache, clock, state):
    clock["t"] = T0 + timedelta(hours=2)
    cache.store("events").set_state(state, error="nope")
    now = T0 + timedelta(hours=3)
    assert notices.data_as_of(cache.snapshot(), now, "jobs", "events") == now
    # With another kind stale, that kind decides.
    cache.store("queues").set_state("stale", error="watch dropped")
    assert notices.data_as_of(cache.snapshot(), now, "jobs", "events", "queues") == T0 + timedelta(hours=2)


def test_the_stale_notice_says_last_synced_when_the_watch_broke(client, cache, clock):
    from django.utils import timezone

    clock["t"] = T0 + timedelta(hours=2)
    cache.store("jobs").set_state("stale", error="watch dropped")
    found = notices.notices(cache.snapshot(), "jobs")
    assert found[0]["synced_at"] == T0 + timedelta(hours=2)
    page = client.get("/jobs/").content.decode()
    assert "Last synced" in page
    local = timezone.localtime(T0 + timedelta(hours=2))
    assert local.strftime("%H:%M") in page.split("Last synced")[1][:200]
