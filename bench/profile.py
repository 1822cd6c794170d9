"""Where does a page's time go? py-spy on the gunicorn worker while one endpoint is under load.

    python -m bench.profile --endpoint "jobs list, page 1" --seconds 20
    python -m bench.profile --endpoint "job detail" --scenario large --jobs 10000

Starts the same three processes as bench/run.py, loads one endpoint with a single client for
``--seconds`` while ``py-spy record`` samples the worker (collapsed stacks, idle threads
excluded), then prints the functions with the most samples: inclusive ("in the stack") and
exclusive ("on top"), restricted to request-serving threads. Writes the raw collapsed stacks and a
flame graph SVG next to the results.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench import endpoints as ep_mod
from bench.common import (
    REPO,
    add_cluster_arguments,
    exit_on_sigterm,
    log,
    percentile,
    start_dashboard,
    start_sim,
    wait_ready,
)
from bench.loadgen import closed_loop
from bench.run import sim_extra


def py_spy() -> str:
    exe = Path(sys.executable).with_name("py-spy")
    found = str(exe) if exe.exists() else shutil.which("py-spy")
    if not found:
        raise SystemExit("py-spy is not installed: pip install -e '.[bench]'")
    return found


def summarize(collapsed: Path, top: int = 25, focus: str = "") -> str:
    """Inclusive and exclusive sample counts per function from py-spy's collapsed (raw) output.

    Only stacks passing through ``focus`` (e.g. the WSGI handler) are counted, so informer and
    idle threads do not drown the request path.
    """
    inclusive: Counter = Counter()
    exclusive: Counter = Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        if focus and focus not in stack:
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        for frame in set(frames):
            inclusive[_short(frame)] += n
        exclusive[_short(frames[-1])] += n
    if not total:
        return "no samples"
    lines = [f"{total} samples in request threads", "", "inclusive (in the stack):"]
    lines += [f"  {n * 100 / total:5.1f}%  {name}" for name, n in inclusive.most_common(top)]
    lines += ["", "exclusive (on top of the stack):"]
    lines += [f"  {n * 100 / total:5.1f}%  {name}" for name, n in exclusive.most_common(top)]
    return "\n".join(lines)


def _short(frame: str) -> str:
    # py-spy frames look like "function (path/to/file.py:123)"; keep the function and a short path.
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path, _, _line = where.rpartition(":")
    for marker in ("site-packages/", str(REPO) + "/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{name} ({path})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--endpoint", action="append", help="a row name of bench/run.py's table (repeatable)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples per second")
    add_cluster_arguments(parser)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    exit_on_sigterm()

    workdir = Path(tempfile.mkdtemp(prefix="volcano-ui-profile-"))
    sim = dash = None
    try:
        sim = start_sim(workdir, scenario=args.scenario, extra=sim_extra(args))
        dash = start_dashboard(workdir, sim, workers=1)
        wait_ready(dash)
        eps = ep_mod.resolve(dash.base, str(sim.kubeconfig))
        by_name = {t.name: t for t in ep_mod.targets(eps, dash.base)}
        for endpoint in args.endpoint or ["jobs list, page 1"]:
            target = by_name.get(endpoint)
            if target is None:
                raise SystemExit(f"no endpoint named {endpoint!r}; have {sorted(by_name)}")
            closed_loop(target, port=dash.port, concurrency=1, max_requests=20, max_seconds=10)  # warm
            worker = dash.worker_pids()[-1]
            args.out.mkdir(parents=True, exist_ok=True)
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
            slug = "".join(c if c.isalnum() else "-" for c in endpoint).strip("-")
            raw = args.out / f"profile-{slug}-{stamp}.txt"
            svg = args.out / f"profile-{slug}-{stamp}.svg"
            cmd = [
                py_spy(),
                "record",
                "--pid",
                str(worker),
                "--duration",
                str(int(args.seconds)),
                "--rate",
                str(args.rate),
                "--format",
                "raw",
                "--output",
                str(raw),
                "--nonblocking",
            ]
            log("profiling: " + " ".join(cmd[1:]))
            spy = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            res = closed_loop(
                target,
                port=dash.port,
                concurrency=args.concurrency,
                max_requests=1_000_000,
                max_seconds=args.seconds - 1.5,
            )
            _, err = spy.communicate(timeout=args.seconds + 60)
            if spy.returncode != 0:
                log(f"py-spy: {err.strip()[-500:]}")
            print(
                f"### Profile of `{endpoint}` ({res.count} requests, p50 {res.p(50):.1f} ms, "
                f"server p50 {res.server_p(50) or 0:.1f} ms, "
                f"server CPU p50 {percentile(res.cpu_ms, 50) or 0:.1f} ms)\n"
            )
            print("```")
            print(summarize(raw, focus="handle_request"))
            print("```")
            _flamegraph(raw, svg)
            log(f"wrote {raw}")
        return 0
    finally:
        if dash is not None:
            dash.stop()
        if sim is not None:
            sim.stop()


def _flamegraph(raw: Path, svg: Path) -> None:
    """A flame graph SVG from the collapsed stacks, when the flamegraph script is at hand."""
    tool = shutil.which("flamegraph.pl") or shutil.which("inferno-flamegraph")
    if tool and raw.exists():
        with open(svg, "w") as fh:
            subprocess.run([tool, str(raw)], stdout=fh, check=False)


if __name__ == "__main__":
    sys.exit(main())
