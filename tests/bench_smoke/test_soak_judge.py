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
    assert (
        judge(_samples([450] * 12), SimpleNamespace(error_count=1, count=100, errors={"x": 1}), OK)[0]
        == "FAIL"
    )
    grown = _samples([450] * 12)
    for s in grown[-3:]:
        s["threads"] = 17
    assert judge(grown, OK, OK)[0] == "FAIL"


def test_the_report_table_shows_one_sample_a_minute_and_the_last():
    from bench.soak import _every_minute

    samples = [{"t_s": t, "rss_mb": 400} for t in range(0, 185, 10)]  # 10 s samples, 0..180 s
    assert [s["t_s"] for s in _every_minute(samples)] == [0, 60, 120, 180]
    odd = [{"t_s": t, "rss_mb": 400} for t in (0, 31, 62, 93, 124, 155)]  # drifting sample times
    assert [s["t_s"] for s in _every_minute(odd)] == [0, 62, 124, 155]


def test_windows_re_judges_later_windows_of_a_saved_run(tmp_path, capsys):
    import json

    from bench.soak import windows

    # 60 minutes of 10 s samples: climbing 60 MB over the first 30 minutes, level after.
    samples = [
        {"t_s": t, "rss_mb": 400 + min(t, 1800) / 30, "threads": 16, "watches": 5} for t in range(0, 3601, 10)
    ]
    path = tmp_path / "soak.json"
    path.write_text(json.dumps({"samples": samples}))
    assert windows([str(path), "--window-minutes", "30", "--step-minutes", "30"]) == 0
    out = capsys.readouterr().out
    first, second = [
        line for line in out.splitlines() if line.startswith("| 0-30") or line.startswith("| 30-60")
    ]
    assert "FAIL" in first and "+12." in first  # 405 -> 455 MB: the climb
    assert "pass" in second and "+0.0%" in second


def test_windows_can_start_in_the_warm_up(tmp_path, capsys):
    import json

    import pytest

    from bench.soak import windows

    # A 20-minute warm-up climbing 40 MB, then 30 level minutes: counted from the warm-up's start.
    warm = [
        {"t_s": t - 1200, "rss_mb": 400 + t / 30, "threads": 16, "watches": 5} for t in range(0, 1200, 10)
    ]
    level = [{"t_s": t, "rss_mb": 440.0, "threads": 16, "watches": 5} for t in range(0, 1801, 10)]
    path = tmp_path / "soak.json"
    path.write_text(json.dumps({"samples": level, "warmup_samples": warm}))
    assert windows([str(path), "--include-warmup", "--window-minutes", "20", "--step-minutes", "20"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert "minutes after warm-up start" in rows[0]
    first, second = rows[1], rows[2]
    assert first.startswith("| 0-20") and "FAIL" in first
    assert second.startswith("| 20-40") and "pass" in second and "+0.0%" in second
    # A run saved before the warm-up was sampled says so instead of judging the wrong span.
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"samples": level}))
    with pytest.raises(SystemExit):
        windows([str(old), "--include-warmup"])


def test_the_default_warm_up_covers_the_population_s_turnover_and_the_events_hour():
    from bench.soak import EVENT_EXPIRY_MARGIN_MIN, EVENT_TTL_MIN, default_warmup_minutes

    hour_and_margin = EVENT_TTL_MIN + EVENT_EXPIRY_MARGIN_MIN
    assert default_warmup_minutes(30, 10_000, 120.0) == 90  # 83.3 minutes, rounded up
    # Jobs replaced sooner than the first Events expire: the Events' hour decides.
    assert default_warmup_minutes(30, 10_000, 600.0) == hour_and_margin
    assert default_warmup_minutes(30, 10, 120.0) == hour_and_margin
    assert default_warmup_minutes(30, 100, 1.0) == 100
    # No churn: nothing is replaced and no Event expires; only the floor, min(10, minutes / 3).
    assert default_warmup_minutes(30, 10_000, 0.0) == 10
    assert default_warmup_minutes(30, None, None) == 10
    assert default_warmup_minutes(3, 10, None) == 1


def test_the_cluster_objects_are_reported_over_the_same_windows():
    # RSS level; the Events double through the run, then a mass expiry in the very last sample:
    # the report must show the windows' growth, not the first and last sample.
    samples = _samples([450] * 36)
    for i, s in enumerate(samples):
        s["objects"] = {"events": 100_000 + 3_000 * i}
    samples[-1]["objects"] = {"events": 90_000}
    verdict, checks = judge(samples, OK, OK)
    assert verdict == "PASS"
    assert "cluster objects, medians of the same samples, 107,500 -> 194,500 (+80.9%)" in checks[0][1]


def test_open_watches_are_judged_by_the_most_in_each_window():
    # Each watch ends after its timeoutSeconds and is opened again: a sample between the two reads
    # one short. The first sample catching such a moment is no growth when the last reads whole.
    samples = _samples([450] * 36)
    for s in samples:
        s["watches"] = 11
    samples[0]["watches"] = 10
    verdict, checks = judge(samples, OK, OK)
    assert verdict == "PASS", checks
    assert "11 -> 11" in checks[3][1]
    for s in samples[-6:]:  # a leaked watch: the last window always reads one more
        s["watches"] = 12
    verdict, checks = judge(samples, OK, OK)
    assert verdict == "FAIL" and "11 -> 12" in checks[3][1]
