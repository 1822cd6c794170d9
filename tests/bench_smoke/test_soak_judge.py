"""The soak verdict's arithmetic (bench/soak.py judge): window medians, not single samples."""

from __future__ import annotations

from types import SimpleNamespace

from bench.soak import _slope_mb_per_10min, judge

OK = SimpleNamespace(error_count=0, count=100, errors={})


def _samples(rss: list[float]) -> list[dict]:
    return [
        {"t_s": 30 * i, "rss_mb": r, "threads": 16, "watches": 5, "objects": {"pods": 10}}
        for i, r in enumerate(rss)
    ]


def test_a_swinging_but_level_rss_passes():
    # 30 min of 30 s samples swinging ±25 MB around 450 MB, the last three happening to be high:
    # three-sample medians would read +6 %, sixth-of-the-run medians read the level.
    level = [450, 425, 475, 440, 460, 450] * 5 + [430, 445, 455, 470, 485, 478]
    verdict, checks = judge(_samples(level), OK, OK)
    assert verdict == "PASS", checks


def test_a_steady_climb_fails_and_reports_its_trend():
    climbing = [400 + 3 * i for i in range(30)]  # +3 MB per 30 s = +60 MB per 10 min
    verdict, checks = judge(_samples(climbing), OK, OK)
    assert verdict == "FAIL"
    assert "+60.0 MB per 10 min" in checks[0][1]
    assert abs(_slope_mb_per_10min(_samples(climbing)) - 60.0) < 1e-9


def test_errors_or_more_threads_fail():
    assert judge(_samples([450] * 12), SimpleNamespace(error_count=1, count=100, errors={"x": 1}), OK)[0] == "FAIL"
    grown = _samples([450] * 12)
    for s in grown[-3:]:
        s["threads"] = 17
    assert judge(grown, OK, OK)[0] == "FAIL"
