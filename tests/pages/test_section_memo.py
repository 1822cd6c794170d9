"""The overview's section memo: exact for cheap sections, bounded staleness for expensive
aggregates, bounded size, one computation per key."""

from __future__ import annotations

import itertools

import pytest

from dashboard.views import memo as views_memo

REAL_STALE_MIN_COMPUTE_SECONDS = views_memo.STALE_MIN_COMPUTE_SECONDS


@pytest.fixture
def memo(monkeypatch):
    # The real reuse threshold (the pages' conftest turns reuse off for the other page tests).
    monkeypatch.setattr(views_memo, "STALE_MIN_COMPUTE_SECONDS", REAL_STALE_MIN_COMPUTE_SECONDS)
    monkeypatch.setattr(views_memo, "SECTIONS", views_memo.SectionMemo())
    clock = {"now": 100.0}
    monkeypatch.setattr(views_memo.SECTIONS, "clock", lambda: clock["now"])
    return clock


def _computing(clock, took: float):
    calls = itertools.count(1)

    def compute():
        n = next(calls)
        clock["now"] += took  # the computation "takes" this long on the fake monotonic clock
        return n

    return compute


def test_same_counters_hit_and_cheap_sections_stay_exact(memo):
    compute = _computing(memo, took=0.0)
    assert views_memo.section(("s", 1), compute, stale_key=("s",)) == 1
    assert views_memo.section(("s", 1), compute, stale_key=("s",)) == 1
    # Counters moved and the section was cheap: recomputed at once.
    assert views_memo.section(("s", 2), compute, stale_key=("s",)) == 2


def test_expensive_aggregate_is_reused_within_the_window_only(memo):
    compute = _computing(memo, took=0.5)  # window = min(STALE_MAX_SECONDS, 5 × 0.5 s) = 1.5 s
    assert views_memo.section(("s", 1), compute, stale_key=("s",)) == 1
    memo["now"] += 1.0
    assert views_memo.section(("s", 2), compute, stale_key=("s",)) == 1
    memo["now"] += 1.0  # 2 s after the computation finished: too old
    assert views_memo.section(("s", 3), compute, stale_key=("s",)) == 2


def test_exact_keys_without_stale_key_never_reuse(memo):
    compute = _computing(memo, took=0.5)
    assert views_memo.section(("d", 1), compute) == 1
    assert views_memo.section(("d", 2), compute) == 2


def test_the_memo_is_bounded(memo):
    for i in range(views_memo.SECTIONS.max_entries * 3):
        views_memo.section(("s", i), lambda i=i: i, stale_key=("s", i % 50))
    assert len(views_memo.SECTIONS.entries) <= views_memo.SECTIONS.max_entries
    assert len(views_memo.SECTIONS.latest) <= views_memo.SECTIONS.max_entries


def test_per_object_values_are_derived_once_per_object():
    derived = []

    def derive(obj):
        derived.append(obj["n"])
        return obj["n"] if obj["n"] % 2 else None

    per = views_memo.PerObject(derive)
    objs = [{"n": n} for n in range(10)]
    assert per.newest(objs) == 9
    assert per.newest(objs) == 9 and len(derived) == 10  # the same dicts: nothing derived again
    objs[9] = {"n": 9 - 9}  # replaced (the cache never mutates an object): derived afresh
    assert per.newest(objs) == 7 and len(derived) == 11
    assert per.newest([]) is None


def test_per_object_memo_forgets_objects_no_longer_walked():
    per = views_memo.PerObject(lambda obj: obj["n"])
    per.newest([{"n": n} for n in range(3 * views_memo.PerObject.SLACK)])
    kept = [{"n": 1}]
    per.newest(kept)  # judged against the walk before: the large one
    per.newest(kept)
    assert len(per) == len(kept)
