"""The benchmark harness at a tiny scale for a few seconds, so that it cannot rot.

This asserts that the harness runs end to end (simulated cluster process, gunicorn, load, tables)
and that nothing failed; it asserts no timing: performance is measured by `make bench`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

pytest.importorskip("psutil", reason="the benchmark harness reads RSS through psutil (test extra)")


def test_it_runs_the_scale_benchmark_at_tiny_scale(tmp_path: Path) -> None:
    pytest.importorskip("dashboard.sim.cluster", reason="the simulated cluster has not landed")
    cmd = [
        sys.executable,
        "-m",
        "bench.run",
        "--scenario",
        "tiny",
        "--concurrency",
        "1,3",
        "--seconds",
        "1",
        "--max-requests",
        "30",
        "--pollers",
        "3",
        "--interval",
        "0.5",
        "--poll-seconds",
        "3",
        "--compare-runs",
        "1",
        "--arrivals-per-min",
        "60",
        "--out",
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "| jobs list, page 1 | 1 |" in proc.stdout
    results = json.loads(next(tmp_path.glob("bench-tiny-*.json")).read_text())
    assert results["sim"]["counts"]["jobs"] > 0
    assert results["initial_sync_s"] > 0
    for row in results["latency"]:
        assert row["count"] > 0, row
        assert row["errors"] == {}, row
    assert results["pollers"]["count"] > 0
    assert results["pollers"]["errors"] == {}
    assert results["comparison"]["client_items"] > 0
