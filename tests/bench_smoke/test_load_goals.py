"""bench.run's load goals: ratios of two numbers of the same run, judged against the goals."""

from __future__ import annotations

from bench.run import load_goal_rows, parse_args


def _latency(name: str, level: int, *, p50: float, rps: float, server: float, errors: int = 0) -> dict:
    return {
        "name": name,
        "concurrency": level,
        "count": 100,
        "errors": {"timeout": errors} if errors else {},
        "p50_ms": p50,
        "p95_ms": p50 * 3,
        "throughput_rps": rps,
        "server_p50_ms": server,
    }


def _results(poll_p95: float, errors_at_100: int = 0) -> dict:
    latency = []
    for level, rps in ((1, 40.0), (10, 100.0), (100, 110.0)):
        errors = errors_at_100 if level == 100 else 0
        latency += [
            _latency("fragment, unchanged (204)", level, p50=2.0, rps=400.0, server=0.8),
            _latency("jobs list, page 1", level, p50=20.0, rps=rps, server=18.0),
            _latency("job detail", level, p50=25.0, rps=rps, server=24.0, errors=errors),
        ]
    return {
        "latency": latency,
        "pollers": {
            "count": 3000,
            "p95_ms": poll_p95,
            "share_204_by_job": {"unchanged": {"polls": 2800, "share_204": 0.99}, "changed": {"polls": 200}},
        },
    }


def test_every_goal_is_a_ratio_of_the_same_run():
    rows = load_goal_rows(_results(poll_p95=9.0), parse_args([]))
    measured = {row[0]: row[2] for row in rows}
    assert measured["100 pollers' p95 / the 1-client p50 of the unchanged fragment"] == "9.0 / 2.0 ms = 4.5×"
    assert measured["jobs list req/s, 10 clients / 1 client"] == "100 / 40 = 2.5×"
    assert measured["jobs list page 1 / job detail, server p50 with 1 client(s)"] == "18.0 / 24.0 ms = 0.75×"
    assert all(row[3] == "met" for row in rows), rows


def test_a_long_poll_tail_and_errors_at_100_clients_are_missed():
    rows = load_goal_rows(_results(poll_p95=11.0, errors_at_100=3), parse_args([]))
    verdicts = {row[0]: row[3] for row in rows}
    assert verdicts["100 pollers' p95 / the 1-client p50 of the unchanged fragment"] == "**missed**"
    assert verdicts["100 clients on every endpoint"] == "**missed**"
    assert verdicts["204 share of the polls of unchanged Jobs"] == "met"


def test_levels_the_run_did_not_measure_give_no_row():
    args = parse_args(["--concurrency", "1,2"])
    names = [row[0] for row in load_goal_rows(_results(poll_p95=9.0), args)]
    assert not any("10 clients" in n or "100 clients" in n for n in names)
