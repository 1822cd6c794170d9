"""A list pass patched from the slot's last one (views.listing._patched) gives exactly what a full
pass (one sort of everything) gives, for every sort, direction and filter, after Jobs are
replaced, added and removed."""

from __future__ import annotations

import random

import pytest
from django.test import RequestFactory

from dashboard.views import listing, memo
from dashboard.views.jobs import JOB_LIST

PHASES = ("Pending", "Running", "Completed", "Failed", "Restarting", "Oddity")


def _job(rng: random.Random, i: int, generation: int = 0) -> dict:
    phase = rng.choice(PHASES)
    minute = rng.randrange(60)
    return {
        "metadata": {
            "namespace": f"ns-{i % 7}",
            "name": f"job-{i:04d}",
            "creationTimestamp": f"2026-11-29T10:{minute:02d}:00Z",
            "labels": {"team": "a" if i % 2 else "b", "gen": str(generation)},
        },
        "spec": {"queue": f"q{i % 3}"},
        "status": {
            "state": {"phase": phase, "lastTransitionTime": f"2026-11-29T11:{rng.randrange(60):02d}:00Z"},
            "running": rng.randrange(4),
            "pending": rng.choice([0, 1, None]),
            "retryCount": rng.randrange(3),
        },
    }


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(listing, "_PASSES", type(listing._PASSES)())
    monkeypatch.setattr(listing, "LIST_FIELDS", {})
    monkeypatch.setattr(listing, "SORT_VALUES", {})
    monkeypatch.setattr(memo, "LIST_MEMO", memo.SizedMemo(memo.LIST_MEMO_BYTES))


full = listing._full_pass


def _full_sort(source: list[dict], lq: listing.ListQuery) -> tuple[list[dict], dict]:
    """Every matching row sorted in one go, in the query's direction."""
    judge = listing._Judge(lq, JOB_LIST, None)
    _entries, rows, counts = full(lambda: source, JOB_LIST, judge, False)
    descending = lq.descending != (lq.sort_key in listing.INVERTED_SORTS)
    return [row[3] for row in sorted(rows, reverse=descending)], counts


QUERIES = [
    "",
    "sort=-attention",
    "sort=name",
    "sort=-age",
    "sort=inphase",
    "sort=pending",
    "sort=-retries",
    "phase=Running&phase=Oddity",
    "queue=q1&sort=phase",
    "q=job-00&sort=-name",
    "selector=team%3Da&sort=running",
]


@pytest.mark.parametrize("query", QUERIES)
def test_patched_passes_equal_full_ones(query, monkeypatch):
    full_passes = []
    monkeypatch.setattr(listing, "_full_pass", lambda *a: full_passes.append(1) or full(*a))
    rng = random.Random(query)
    jobs = {i: _job(rng, i) for i in range(300)}
    lq = listing.ListQuery(
        RequestFactory().get(f"/jobs/?{query}"),
        JOB_LIST.sort_keys,
        JOB_LIST.default_sort,
        JOB_LIST.known_phases,
    )
    slot = ("jobs", 0, None, lq.key())
    next_id = 300
    for version in range(1, 30):
        # Churn: a few Jobs replaced (new dicts), added, removed; now and then none at all.
        for i in rng.sample(sorted(jobs), k=rng.randrange(0, 6)):
            jobs[i] = _job(rng, i, version)
        for _ in range(rng.randrange(0, 3)):
            jobs[next_id] = _job(rng, next_id)
            next_id += 1
        for i in rng.sample(sorted(jobs), k=rng.randrange(0, 3)):
            del jobs[i]
        source = sorted(jobs.values(), key=lambda j: (j["metadata"]["namespace"], j["metadata"]["name"]))
        objs, counts = listing.filtered(lambda s=source: list(s), slot, version, lq, JOB_LIST)
        full_objs, full_counts = _full_sort(source, lq)
        assert [id(o) for o in objs] == [id(o) for o in full_objs]
        assert counts == full_counts and all(counts.values())
    assert slot in listing._PASSES
    assert len(full_passes) == 1  # the first; every later pass was patched


def test_a_large_change_sorts_afresh(monkeypatch):
    rng = random.Random(1)
    lq = listing.ListQuery(RequestFactory().get("/jobs/"), JOB_LIST.sort_keys, JOB_LIST.default_sort)
    slot = ("jobs", 0, None, lq.key())
    first = [_job(rng, i) for i in range(100)]
    listing.filtered(lambda: first, slot, 1, lq, JOB_LIST)
    second = [_job(rng, i, 1) for i in range(100)]  # every Job replaced
    calls = []
    monkeypatch.setattr(listing, "_full_pass", lambda *a: calls.append(1) or full(*a))
    objs, _counts = listing.filtered(lambda: second, slot, 2, lq, JOB_LIST)
    assert calls and {id(o) for o in objs} == {id(o) for o in second}
