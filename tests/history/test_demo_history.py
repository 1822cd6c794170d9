"""The demo's fast-forwarded history, chart by chart, against what the simulated cluster did.

Two hours of the demo scenario (across midnight UTC, so the waits fall on two days) are recorded
by ``fast_forward``. Meanwhile ``Truth`` listens to the simulator's own store: it keeps every
Job, PodGroup, Queue and pod as they change, with the simulated time of each change, and at every
sampled minute computes what the charts must say from those objects alone (no recorder, no
cache, no history table). The rows are then read back through the pages a user opens.
"""

from __future__ import annotations

import csv
import html as htmllib
import io
import re
import statistics
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from kubernetes.utils import parse_quantity

from dashboard.history import reads
from dashboard.history.fastforward import demo_cluster, fast_forward, mirrored_cache
from dashboard.history.models import Admission
from dashboard.history.service import HistoryService, override_service
from dashboard.kube import override_cluster_cache
from dashboard.presenters.clock import set_time_source
from dashboard.views.history import unknown_key_label
from tests.history.conftest import drop_alias, sqlite_alias

HOURS = 2
END = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
START = END - timedelta(hours=HOURS)
SAMPLE = timedelta(seconds=60)
GPU = "nvidia.com/gpu"
GROUP = "scheduling.k8s.io/group-name"
JOB_NAME = "volcano.sh/job-name"
_KINDS = {"jobs", "podgroups", "queues", "pods"}


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None


def _requests(pod: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for c in pod["spec"].get("containers", []):
        for res, amount in ((c.get("resources") or {}).get("requests") or {}).items():
            out[res] = out.get(res, 0.0) + float(parse_quantity(amount))
    return out


class Truth:
    """The simulated cluster's own record: objects as they change, and the expected samples."""

    def __init__(self, cluster) -> None:
        self.clock = cluster.clock
        self.now: dict[str, dict[tuple[str, str], dict]] = {k: {} for k in _KINDS}
        self.podgroups_ever: dict[tuple[str, str], dict] = {}
        self.pods_final: dict[str, dict] = {}  # uid -> the last version seen
        self.pod_deleted: dict[str, datetime] = {}
        self.pod_bound: dict[str, datetime] = {}  # uid -> when its nodeName was first set
        self.pg_first: dict[tuple[str, str], datetime] = {}  # (uid, phase) -> when first in it
        self.pg_created: dict[str, datetime | None] = {}
        self.pg_queue: dict[str, str] = {}
        self.samples: dict[datetime, dict[str, Any]] = {}
        self.next_sample = START
        for kind in ("queues", "jobs", "podgroups", "pods"):
            for obj in cluster.store.list(_kind(kind))[0]:
                self._apply("ADDED", kind, obj, START)
        cluster.store.add_listener(self.listener)

    def listener(self, event_type: str, kind, obj: dict) -> None:
        if kind.plural not in _KINDS:
            return
        at = self.clock.now()
        # Every change at or before a sampled minute happened before that sample was taken.
        while self.next_sample < at:
            self._take(self.next_sample)
            self.next_sample += SAMPLE
        self._apply(event_type, kind.plural, obj, at)

    def finish(self, end: datetime) -> None:
        while self.next_sample < end:
            self._take(self.next_sample)
            self.next_sample += SAMPLE

    def _apply(self, event_type: str, kind: str, obj: dict, at: datetime) -> None:
        md = obj["metadata"]
        key = (md.get("namespace", ""), md["name"])
        if event_type == "DELETED":
            self.now[kind].pop(key, None)
        else:
            self.now[kind][key] = obj
        if kind == "pods":
            self.pods_final[md["uid"]] = obj
            if obj["spec"].get("nodeName"):
                self.pod_bound.setdefault(md["uid"], at)
            if event_type == "DELETED":
                self.pod_deleted[md["uid"]] = at
        elif kind == "podgroups":
            self.podgroups_ever[key] = obj
            uid = md["uid"]
            self.pg_created[uid] = _time(md.get("creationTimestamp"))
            self.pg_queue[uid] = obj["spec"].get("queue", "default")
            phase = (obj.get("status") or {}).get("phase")
            if phase and event_type != "DELETED":
                self.pg_first.setdefault((uid, phase), at)

    def queue_of_pod(self, pod: dict) -> str:
        group = (pod["metadata"].get("annotations") or {}).get(GROUP, "")
        pg = self.podgroups_ever.get((pod["metadata"]["namespace"], group))
        return pg["spec"].get("queue", "default") if pg else ""

    def _take(self, at: datetime) -> None:
        queues: dict[str, dict[str, Any]] = {}
        for (_ns, name), q in self.now["queues"].items():
            # None: the scheduler has not written the Queue's status.allocated yet (unknown).
            stated = (q.get("status") or {}).get("allocated")
            allocated = None if stated is None else {r: float(parse_quantity(v)) for r, v in stated.items()}
            queues[name] = {"allocated": allocated, "phases": {}, "pod_gpus": 0.0}
        for pg in self.now["podgroups"].values():
            phase = (pg.get("status") or {}).get("phase") or "Pending"
            counts = queues.setdefault(pg["spec"].get("queue", "default"), {"phases": {}})["phases"]
            counts[phase] = counts.get(phase, 0) + 1
        for pod in self.now["pods"].values():
            running = pod["spec"].get("nodeName") and pod.get("status", {}).get("phase") in (
                "Pending",
                "Running",
            )
            queue = self.queue_of_pod(pod)
            if running and queue in queues:
                queues[queue]["pod_gpus"] += _requests(pod).get(GPU, 0.0)
        # A parent queue's allocation is its own pods' and its descendants' (hierarchical queues).
        parents = {name: (q.get("spec") or {}).get("parent") for (_ns, name), q in self.now["queues"].items()}
        for name in list(queues):
            own = queues[name].get("pod_gpus", 0.0)
            parent = parents.get(name)
            while parent and parent in queues and parent != name:
                queues[parent]["subtree_gpus"] = queues[parent].get("subtree_gpus", 0.0) + own
                parent = parents.get(parent)
        for q in queues.values():
            q["subtree_gpus"] = q.get("subtree_gpus", 0.0) + q.get("pod_gpus", 0.0)
        self.samples[at] = queues

    # -- what the other charts must say ----------------------------------------------------
    def waits(self, queue: str) -> list[tuple[datetime, float]]:
        """(when Running, seconds from creation) of the queue's PodGroups that ran."""
        out = []
        for uid, made in self.pg_created.items():
            running = self.pg_first.get((uid, "Running"))
            if self.pg_queue[uid] == queue and running is not None and made is not None:
                out.append((running, max((running - made).total_seconds(), 0.0)))
        return sorted(out)

    def pod_interval(self, uid: str, until: datetime) -> tuple[datetime | None, datetime]:
        pod = self.pods_final[uid]
        status = pod.get("status") or {}
        started = _time(status.get("startTime"))
        end = None
        if status.get("phase") in ("Succeeded", "Failed"):
            ends = [
                _time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
                for cs in status.get("containerStatuses") or []
            ]
            known = [e for e in ends if e is not None]
            end = max(known) if known else None
        return started, end or self.pod_deleted.get(uid) or until

    def resource_hours(self, resource: str, since: datetime, until: datetime) -> dict[str, float]:
        out: dict[str, float] = {}
        for uid, pod in self.pods_final.items():
            started, end = self.pod_interval(uid, until)
            amount = _requests(pod).get(resource, 0.0)
            lo, hi = max(started, since) if started else None, min(end, until)
            if lo is not None and hi > lo:
                queue = self.queue_of_pod(pod)
                out[queue] = out.get(queue, 0.0) + amount * (hi - lo).total_seconds() / 3600
        return out


def _kind(plural: str):
    from dashboard.sim.kinds import JOB, POD, PODGROUP, QUEUE

    return {"jobs": JOB, "podgroups": PODGROUP, "queues": QUEUE, "pods": POD}[plural]


@pytest.fixture(scope="module")
def demo_day(tmp_path_factory, django_db_blocker):
    """(cluster, truth, database alias) after HOURS of the demo, served as the pages' history."""
    cluster = demo_cluster(START, seed=0, tick_seconds=10)
    truth = Truth(cluster)
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path_factory.mktemp("demo-history") / "history.sqlite3")
        try:
            from django.core.management import call_command

            call_command("migrate", "history", database=alias, verbosity=0)
            fast_forward(alias, END, hours=HOURS, cluster=cluster)
            truth.finish(END)
            cache, _mirror = mirrored_cache(cluster)
            service = HistoryService(cache, alias, record=False)
            previous = set_time_source(cluster.clock.now)
            try:
                with override_cluster_cache(cache), override_service(service):
                    yield cluster, truth, alias
            finally:
                set_time_source(previous)
        finally:
            drop_alias(alias)


def _table(page: str, marker: str) -> list[list[str]]:
    """The body rows of the first table after ``marker`` in ``page``, as cell texts."""
    part = page.split(marker, 1)[1]
    body = part.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    return [
        [
            htmllib.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)
        ]
        for r in rows
    ]


def _allocated(sample: dict, resource: str) -> float | None:
    """A sampled Queue's allocated ``resource``: 0 where its status.allocated leaves it out (Volcano
    lists what it placed), None without a status.allocated."""
    allocated = sample.get("allocated", {})
    return None if allocated is None else allocated.get(resource, 0.0)


def _busy_queues(truth: Truth) -> list[str]:
    """The queues whose GPU allocation changed during the window (the charts worth checking)."""
    seen: dict[str, set[float]] = {}
    for queues in truth.samples.values():
        for name, q in queues.items():
            value = _allocated(q, GPU)
            if value is not None:
                seen.setdefault(name, set()).add(value)
    return sorted(name for name, values in seen.items() if len(values) > 1)


def test_every_queue_sample_is_the_queue_and_its_pods_at_that_minute(demo_day):
    _cluster, truth, alias = demo_day
    assert len(truth.samples) == HOURS * 60
    checked = 0
    for queue in sorted({name for queues in truth.samples.values() for name in queues}):
        series = {s.resource: s for s in reads.queue_usage(alias, queue, START, END)}
        got = dict(series[GPU].allocated) if GPU in series else {}
        for at, queues in truth.samples.items():
            expected = queues[queue].get("allocated", {})
            if expected is None:  # unknown: a gap in every resource's series
                assert all(dict(r.allocated).get(at, None) is None for r in series.values()), (queue, at)
                continue
            if GPU in expected:
                assert got.get(at) == expected[GPU], (queue, at)
                # Volcano's allocated is what the bound, unfinished pods of the queue and of the
                # queues below it request.
                assert expected[GPU] == queues[queue]["subtree_gpus"], (queue, at)
                checked += 1
            for res, amount in expected.items():
                assert dict(series[res].allocated).get(at) == pytest.approx(amount), (queue, res, at)
    assert checked > 60 and _busy_queues(truth), "the demo's GPUs did not move: nothing was checked"


def test_the_queue_page_tables_show_the_last_hour_of_samples(demo_day):
    _cluster, truth, _alias = demo_day
    client = Client()
    last_hour = [at for at in sorted(truth.samples) if at >= END - timedelta(hours=1)]
    for queue in _busy_queues(truth):
        page = client.get(f"/queues/{queue}/?window=1h").content.decode()
        rows = _table(page, f'data-chart="{GPU}"')
        # One sample per minute, 96 spans of 37.5 s: every row is one sample, in time order.
        # A Queue whose status.allocated names no GPUs has none allocated (the scheduler lists
        # only what it placed).
        expected = [_allocated(truth.samples[at][queue], GPU) for at in last_hour]
        assert [None if r[1] == "—" else float(r[1]) for r in rows] == expected, queue
        if not any(truth.samples[at][queue]["phases"] for at in last_hour):
            assert 'data-chart="PodGroups by phase"' not in page, queue  # a parent queue: no gangs
            continue
        phases = _table(page, 'data-chart="PodGroups by phase"')
        headers = page.split('data-chart="PodGroups by phase"', 1)[1].split("</thead>", 1)[0]
        names = [htmllib.unescape(h) for h in re.findall(r'<th scope="col">([^<]*)</th>', headers)][1:]
        counts = [[float(truth.samples[at][queue]["phases"].get(p, 0)) for p in names] for at in last_hour]
        assert [[float(c) for c in r[1:]] for r in phases] == counts, queue


def test_podgroup_counts_by_phase_are_the_simulators_podgroups(demo_day):
    _cluster, truth, alias = demo_day
    for queue in _busy_queues(truth):
        counts = reads.queue_phase_counts(alias, queue, START, END)
        for at, queues in truth.samples.items():
            expected = queues[queue]["phases"]
            got = {phase: dict(points).get(at, 0.0) for phase, points in counts.items()}
            assert {p: n for p, n in got.items() if n} == expected, (queue, at)


def _duration(seconds: float) -> str:
    from dashboard.views.history import _duration as text

    return text(seconds)


def test_wait_percentiles_per_day_are_the_podgroups_own_waits(demo_day):
    _cluster, truth, alias = demo_day
    client = Client()
    checked_days = 0
    for queue in sorted(set(truth.pg_queue.values())):
        expected = truth.waits(queue)
        got = sorted(
            Admission.objects.using(alias)
            .filter(queue=queue, wait__isnull=False)
            .values_list("running", "wait")
        )
        assert [(at, pytest.approx(s)) for at, s in got] == expected, queue
        if not expected:
            continue
        by_day: dict[str, list[float]] = {}
        for at, seconds in expected:
            by_day.setdefault(at.date().isoformat(), []).append(seconds)
        rows = _table(client.get(f"/queues/{queue}/").content.decode(), "data-waits")
        want = []
        for day, values in sorted(by_day.items()):
            p90 = statistics.quantiles(values, n=10, method="inclusive")[8] if len(values) > 1 else values[0]
            want.append([day, _duration(statistics.median(values)), _duration(p90), str(len(values))])
        assert rows == want, queue
        checked_days += len(want)
    assert checked_days >= 2


def test_usage_gpu_and_cpu_hours_are_the_pods_requests_times_their_running_time(demo_day):
    _cluster, truth, _alias = demo_day
    client = Client()
    since = END - timedelta(hours=24)
    gpu = truth.resource_hours(GPU, since, END)
    cpu = truth.resource_hours("cpu", since, END)
    rows = list(
        csv.reader(io.StringIO(client.get("/usage/?window=24h&by=queue&format=csv").content.decode()))
    )
    # Pods of no queue (their PodGroup unknown) are one row, named alike in the CSV, table and bars.
    unknown = unknown_key_label("queue")
    got = {"" if r[0] == unknown else r[0]: (float(r[1]), float(r[2])) for r in rows[1:]}
    assert sum(gpu.values()) > 10  # the demo's GPU jobs ran: the sums are not trivially 0
    for queue in set(gpu) | set(cpu) | set(got):
        g, c = got.get(queue, (0.0, 0.0))
        assert g == pytest.approx(gpu.get(queue, 0.0), abs=0.002), queue
        assert c == pytest.approx(cpu.get(queue, 0.0), abs=0.002), queue
    # The page's table (GPU-hours, CPU-hours with one decimal) and its bar chart of GPU-hours.
    page = client.get("/usage/?window=24h&by=queue").content.decode()
    shown = {r[0]: (r[1], r[2]) for r in _table(page, 'class="table" data-usage')}
    ran = {q for q in set(gpu) | set(cpu) if gpu.get(q, 0.0) or cpu.get(q, 0.0)}
    assert set(shown) == {q or unknown for q in ran}
    for queue in ran:
        assert shown[queue or unknown] == (f"{gpu.get(queue, 0.0):.1f}", f"{cpu.get(queue, 0.0):.1f}"), queue
    bars = page.split("chart-bar-labels", 1)[1].split("</ul>", 1)[0]
    labels = re.findall(r"<span>([^<]*)</span> <strong>([^<]*)</strong>", bars)
    top = sorted(((q, h) for q, h in gpu.items() if h), key=lambda x: (-x[1], -cpu.get(x[0], 0.0), x[0]))
    assert labels == [(q or unknown, f"{h:.1f}") for q, h in top]


def _job_with_deleted_pods(truth: Truth) -> tuple[str, str]:
    """A Job still there at the end with at least one pod that was deleted and one that ran."""
    for (ns, name), _job in sorted(truth.now["jobs"].items()):
        uids = [u for u, p in truth.pods_final.items() if _pod_job(p) == (ns, name)]
        if any(u in truth.pod_deleted for u in uids) and any(
            (truth.pods_final[u].get("status") or {}).get("startTime") for u in uids
        ):
            return ns, name
    raise AssertionError("no Job with deleted pods in the window")


def _pod_job(pod: dict) -> tuple[str, str]:
    md = pod["metadata"]
    name = (md.get("labels") or {}).get(JOB_NAME) or (md.get("annotations") or {}).get(JOB_NAME) or ""
    return md["namespace"], name


def test_the_job_timeline_is_its_pods_lifetimes(demo_day):
    _cluster, truth, alias = demo_day
    ns, name = _job_with_deleted_pods(truth)
    job = truth.now["jobs"][(ns, name)]
    created = _time(job["metadata"]["creationTimestamp"])
    spans = {p.name: p for p in reads.job_pods(alias, ns, name, created - timedelta(minutes=5))}
    pods = {p["metadata"]["name"]: (u, p) for u, p in truth.pods_final.items() if _pod_job(p) == (ns, name)}
    assert set(spans) == set(pods)
    page = Client().get(f"/jobs/{ns}/{name}/").content.decode()
    span = (END - created).total_seconds()
    for pod_name, (uid, pod) in pods.items():
        started, end = truth.pod_interval(uid, END)
        got = spans[pod_name]
        assert got.created == _time(pod["metadata"]["creationTimestamp"])
        assert got.scheduled == truth.pod_bound.get(uid)
        assert got.started == started
        assert got.deleted == truth.pod_deleted.get(uid)
        assert (got.finished or got.deleted or END) == end
        if started is None:
            continue
        # The running bar of the rendered timeline spans the pod's start to its end.
        rect = re.search(
            rf'<rect class="gantt-\w+" x="([\d.]+)" y="\d+" width="([\d.]+)" height="10">'
            rf"<title>{re.escape(pod_name)}: running</title>",
            page,
        )
        assert rect is not None, pod_name
        x0 = 100 * max(0.0, (started - created).total_seconds()) / span
        x1 = 100 * (end - created).total_seconds() / span
        assert float(rect.group(1)) == pytest.approx(x0, abs=0.01)
        assert float(rect.group(2)) == pytest.approx(max(x1 - x0, 0.3), abs=0.02)


def test_queue_sparklines_peak_is_the_highest_sample_and_now_the_newest(demo_day):
    from dashboard.views.history import amount_text

    _cluster, truth, _alias = demo_day
    truth._take(END)  # the newest sample, taken by the recorder at END
    at_end = truth.samples.pop(END)
    client = Client()
    queues_page, overview = client.get("/queues/").content.decode(), client.get("/").content.decode()
    checked = 0
    for queue in _busy_queues(truth):
        hourly: dict[datetime, list[float]] = {}
        for at, queues in sorted(truth.samples.items()):
            value = _allocated(queues[queue], GPU)
            hourly.setdefault(at.replace(minute=0), [])
            if value is not None:
                hourly[at.replace(minute=0)].append(value)
        means = [statistics.fmean(v) if v else None for _h, v in sorted(hourly.items())]
        fmt = amount_text(GPU)
        # "now": the newest sample (kubectl's allocated then), not the last hour's mean.
        now = fmt(at_end[queue]["allocated"].get(GPU, 0.0))
        assert any(m is not None for m in means), queue
        # The peak: the highest sample of the 24 h (never below "now", unlike an hourly mean).
        since = END - timedelta(hours=24)
        day = [_allocated(q[queue], GPU) for at, q in truth.samples.items() if at >= since]
        peak = fmt(max([v for v in day if v is not None] + [at_end[queue]["allocated"].get(GPU, 0.0)]))
        label = f"{GPU} allocated over the last 24 h: now {now}, peak {peak}"
        row = queues_page.split(f'data-queue="{queue}"', 1)[1].split("</tr>", 1)[0]
        assert f'aria-label="{label}"' in row, (queue, re.findall(r"aria-label=\"[^\"]*\"", row))
        assert f"<title>{label}</title>" in overview, queue
        checked += 1
    assert checked >= 2


def test_the_recorded_past_shares_no_uid_with_the_live_demo(demo_day):
    """The live demo starts the same scenario with the same seed: its objects are other objects
    than the recorded past's, and a wait looked up by uid must not find another object's."""
    from dashboard.history.models import PhaseTransition
    from dashboard.sim.cluster import SimulatedCluster
    from dashboard.sim.kinds import JOB, PODGROUP

    _cluster, _truth, alias = demo_day
    live = SimulatedCluster(seed=0, scenario="demo", controllers=True, start_time=END)
    live_uids = {o["metadata"]["uid"] for k in (JOB, PODGROUP) for o in live.store.list(k)[0]}
    recorded = set(PhaseTransition.objects.using(alias).values_list("uid", flat=True))
    assert live_uids and recorded
    assert not live_uids & recorded


def test_the_live_demo_starts_on_the_wall_clock_after_its_recorded_past(tmp_path, django_db_blocker):
    """The demo's live cluster is created when the demo starts and stands still while the past
    is recorded; ``catch_up`` brings it to the wall clock, recording the stretch between."""
    from django.core.management import call_command

    from dashboard.history.fastforward import catch_up
    from dashboard.history.models import PodLifetime, QueueSample
    from dashboard.sim.cluster import SimulatedCluster

    started = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=150)  # the past took 150 s
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "history.sqlite3")
        try:
            call_command("migrate", "history", database=alias, verbosity=0)
            fast_forward(alias, started, hours=0.25)
            live = SimulatedCluster(seed=0, scenario="demo", controllers=True, start_time=started)
            catch_up(live, alias)
            assert abs((live.clock.now() - datetime.now(UTC)).total_seconds()) < 1
            times = sorted(QueueSample.objects.using(alias).values_list("at", flat=True).distinct())
            steps = {(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)}
            # One sample a minute from the past into the caught-up stretch: none twice, no gap.
            assert times[-1] > started and max(steps) <= 60
            keys = list(QueueSample.objects.using(alias).values_list("queue", "resource", "at"))
            assert len(keys) == len(set(keys))
            live_uids = {p["metadata"]["uid"] for p in live.store.list("pods")[0]}
            assert set(
                PodLifetime.objects.using(alias).filter(deleted=None).values_list("uid", flat=True)
            ) == {u for u in live_uids if PodLifetime.objects.using(alias).filter(uid=u).exists()}
        finally:
            drop_alias(alias)
