"""Which dashboard URLs the benchmark measures, resolved against the live cluster.

URL shapes come from ``dashboard/urls.py`` (reversed by name inside a Django setup, so a renamed
route shows up here as "not measured" rather than as a fast 404). Objects (the Jobs for the detail
page, the queue and page number of the filtered deep page) are picked from the simulated
cluster's own list so they exist, among the newest Jobs so that churn (which retires the oldest)
does not delete them mid-run.

Live fragments (dashboard/templatetags/volcano.py ``poll``): an element polls
``<page>?f=<fragment>&v=<version>`` with ``HX-Request: true``; the view answers 204 when ``v`` is
still the fragment's version, else renders the fragment, whose own ``hx-get`` carries the new
version. Pollers here do exactly what htmx does: keep the version from the last 200.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urlencode

from bench.common import http_get
from bench.loadgen import PollState, Target

HX = {"HX-Request": "true"}
FRAGMENT = "status"  # the job detail page's status fragment (phase, gang progress, why pending)
_V_RE = re.compile(r'hx-get="[^"]*?[?&](?:amp;)?v=([^"&]*)')


@dataclass
class Endpoints:
    overview: str
    jobs_page1: str
    jobs_deep: str
    job_details: list[str]
    queues: str
    nodes: str = "/nodes/"
    hypernodes: str = "/hypernodes/"
    # The HyperNode of the highest tier (a spine: its page lists the most nodes and pods); None when
    # the cluster has no HyperNodes.
    hypernode_detail: str | None = None
    notes: list[str] = field(default_factory=list)
    missing: set[str] = field(default_factory=set)  # paths that did not answer 200 (not measured)

    @property
    def job_detail(self) -> str:
        return self.job_details[0]

    def fragment(self, i: int = 0) -> str:
        """The status fragment URL (without ``v``) of the ``i``-th sampled Job."""
        return f"{self.job_details[i % len(self.job_details)]}?{urlencode({'f': FRAGMENT})}"


def _reverse(route: str, **kwargs: str) -> str | None:
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse(route, kwargs=kwargs or None)
    except NoReverseMatch:
        return None


def _django() -> None:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    django.setup()


def pick_objects(kubeconfig: str) -> dict:
    """Running Jobs among the newest half, the leaf queue with most Running Jobs, and that count."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        raw = client.CustomObjectsApi(api).list_cluster_custom_object(
            "batch.volcano.sh", "v1alpha1", "jobs", _preload_content=False
        )
        jobs = json.loads(raw.data)["items"]
    finally:
        api.close()
    # Churn arrivals finish and are deleted mid-run: measure only Jobs that were loaded.
    jobs = [j for j in jobs if "bench.volcano-ui/arrival" not in (j["metadata"].get("labels") or {})]
    jobs.sort(key=lambda j: (j["metadata"].get("creationTimestamp") or "", j["metadata"]["name"]))
    by_queue: dict[str, int] = {}
    running = []
    for job in jobs:
        phase = ((job.get("status") or {}).get("state") or {}).get("phase")
        if phase == "Running":
            running.append(job)
            queue = (job.get("spec") or {}).get("queue", "default")
            by_queue[queue] = by_queue.get(queue, 0) + 1
    leaves = {q: n for q, n in by_queue.items() if q != "default"} or by_queue
    queue = max(leaves, key=lambda q: leaves[q]) if leaves else "default"
    newest = running[len(running) // 2 :] or jobs[len(jobs) // 2 :]
    sample = newest[:: max(1, len(newest) // 100)][:100]
    return {
        "jobs": len(jobs),
        "queue": queue,
        "queue_running": by_queue.get(queue, 0),
        "running": len(running),
        "sample": [(j["metadata"]["namespace"], j["metadata"]["name"]) for j in sample],
    }


def top_hypernode(kubeconfig: str) -> tuple[str | None, int]:
    """(the HyperNode of the highest spec.tier, then the first by name; how many HyperNodes there
    are); (None, 0) when there are none or the kind is not installed."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        raw = client.CustomObjectsApi(api).list_cluster_custom_object(
            "topology.volcano.sh", "v1alpha1", "hypernodes", _preload_content=False
        )
        items = json.loads(raw.data)["items"]
    except ApiException:
        return None, 0
    finally:
        api.close()
    if not items:
        return None, 0

    def key(hn: dict) -> tuple[int, str]:
        tier = (hn.get("spec") or {}).get("tier")
        return (-tier if isinstance(tier, int) else 0, hn["metadata"]["name"])

    return min(items, key=key)["metadata"]["name"], len(items)


def resolve(base: str, kubeconfig: str) -> Endpoints:
    """Resolve every measured URL; the ones that do not answer 200 are noted and not measured."""
    _django()
    objs = pick_objects(kubeconfig)
    try:
        from dashboard.views.listing import PAGE_SIZE as page_size
    except ImportError:
        page_size = 50
    overview = _reverse("overview") or "/"
    jobs = _reverse("jobs") or "/jobs/"
    details = [_reverse("job_detail", namespace=ns, name=n) or f"/jobs/{ns}/{n}/" for ns, n in objs["sample"]]
    queues = _reverse("queues") or "/queues/"
    # A deep page of a filtered list: the middle page of the Running Jobs. (One
    # queue's Running Jobs fit on one page once the generator spreads Jobs over ~180 leaf queues.)
    deep_page = max(1, (objs["running"] // page_size + 1) // 2)
    deep = f"{jobs}?{urlencode({'phase': 'Running', 'page': deep_page})}"
    spine, n_hypernodes = top_hypernode(kubeconfig)
    spine_path = (_reverse("hypernode_detail", name=spine) or f"/hypernodes/{spine}/") if spine else None
    ep = Endpoints(
        overview,
        jobs,
        deep,
        details,
        queues,
        nodes=_reverse("nodes") or "/nodes/",
        hypernodes=_reverse("hypernodes") or "/hypernodes/",
        hypernode_detail=spine_path,
    )
    if spine:
        ep.notes.append(f"HyperNode detail: {spine}, the highest tier of {n_hypernodes} HyperNodes")
    else:
        ep.notes.append("the cluster has no HyperNodes: HyperNode detail not measured")
    ep.notes.append(
        f"filtered deep page: phase Running ({objs['running']} Jobs, newest first, the default order), "
        f"page {deep_page} of {max(1, -(-objs['running'] // page_size))}"
    )
    for label, path in (
        ("overview", overview),
        ("jobs list", jobs),
        ("deep page", deep),
        ("job detail", details[0]),
        ("queue list", queues),
        ("node list", ep.nodes),
        ("HyperNode tree", ep.hypernodes),
        *((("HyperNode detail", ep.hypernode_detail),) if ep.hypernode_detail else ()),
    ):
        status, _, _ = http_get(f"{base}{path}", timeout=60)
        if status != 200:
            ep.notes.append(f"{label} {path} answered {status}: not measured")
            ep.missing.add(path)
    if fragment_version(base, ep.fragment()) is None:
        ep.notes.append(f"{ep.fragment()} gave no fragment version: fragment rows not measured")
        ep.missing.add("fragment")
    return ep


def version_in(body: bytes) -> str | None:
    """The ``v`` of the first ``hx-get`` in a rendered fragment (its own refresh URL)."""
    match = _V_RE.search(body.decode("utf-8", "replace"))
    return match.group(1) if match else None


def fragment_version(base: str, fragment: str) -> str | None:
    """The fragment's current version, as the page that rendered it would carry."""
    status, body, _ = http_get_hx(f"{base}{fragment}")
    return version_in(body) if status == 200 else None


def http_get_hx(url: str, timeout: float = 30.0) -> tuple[int, bytes, dict]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers=HX)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read(), dict(resp.headers.items())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers.items())


def _with_version(fragment: str, version: str) -> str:
    return f"{fragment}&{urlencode({'v': version})}"


def targets(ep: Endpoints, base: str) -> list[Target]:
    """The measured requests, in table order."""
    out = []
    if ep.overview not in ep.missing:
        out.append(Target.fixed("overview", ep.overview))
    if ep.jobs_page1 not in ep.missing:
        out.append(Target.fixed("jobs list, page 1", ep.jobs_page1))
    if ep.jobs_deep not in ep.missing:
        out.append(Target.fixed("jobs list, filtered deep page", ep.jobs_deep))
    if ep.job_detail not in ep.missing:
        out.append(Target.cycle("job detail", ep.job_details))
    if ep.queues not in ep.missing:
        out.append(Target.fixed("queue list", ep.queues))
    if ep.nodes not in ep.missing:
        out.append(Target.fixed("node list", ep.nodes))
    if ep.hypernodes not in ep.missing:
        out.append(Target.fixed("HyperNode tree", ep.hypernodes))
    if ep.hypernode_detail and ep.hypernode_detail not in ep.missing:
        out.append(Target.fixed("HyperNode detail (highest tier)", ep.hypernode_detail))
    if "fragment" not in ep.missing:
        out.append(unchanged_fragment_target(ep, base))
        # Every sampled Job's fragment in turn: one deleted by churn meanwhile (a slow run) leaves
        # the rotation instead of answering 404 for the rest of the phase.
        changed = [_with_version(ep.fragment(i), "0") for i in range(len(ep.job_details))]
        out.append(Target.cycle("fragment, changed (200)", changed, headers=HX))
    return out


def unchanged_fragment_target(ep: Endpoints, base: str) -> Target:
    """Polls of one fragment with its current version: 204 unless it changed meanwhile.

    A 200 (the Job changed, or the age bucket moved on) hands the new version to the next
    request, as htmx swapping the fragment in would; the share of 204s is reported. A 404 (the
    Job was deleted by churn: a slow run outlives the sampled Jobs' retirement) moves on to the
    next sampled Job, as poll_mix's pollers do; such 404s are counted in the statuses.
    """
    state = {"i": 0, "v": fragment_version(base, ep.fragment()) or "0"}
    lock = threading.Lock()

    def path() -> str:
        with lock:
            return _with_version(ep.fragment(state["i"]), state["v"])

    def observe(status: int, body: bytes, headers: object, path: str) -> None:
        if status == 200:
            new = version_in(body)
            if new:
                with lock:
                    state["v"] = new
        elif status == 404:
            with lock:
                if path.startswith(ep.fragment(state["i"]) + "&"):
                    state["i"] += 1
                    state["v"] = "0"  # the next request answers 200 with the new Job's version

    return Target("fragment, unchanged (204)", path, frozenset({200, 204, 404}), dict(HX), observe)


def poll_mix(ep: Endpoints, base: str, page_every: int = 0):
    """(request, observe) for pollers behaving like open dashboard tabs.

    Poller ``i`` watches the status fragment of the ``i``-th sampled Job with the version it last
    saw (204 while unchanged). With ``page_every`` > 0, every ``page_every``-th request instead
    loads a full page, rotating over the measured pages, as a user clicking around would. Pages
    must answer 200, fragments 200 or 204.
    """
    pages = [
        p
        for p in [ep.overview, ep.jobs_page1, ep.jobs_deep, ep.queues, *ep.job_details[:5]]
        if p not in ep.missing
    ] or [ep.overview]
    fragments_ok = "fragment" not in ep.missing

    def request(state: PollState):  # noqa: ANN202
        n = state.data.get("n", 0)
        state.data["n"] = n + 1
        if not fragments_ok or (page_every and (n + state.index) % page_every == 0):
            page = pages[(n // max(1, page_every) + state.index) % len(pages)]
            state.data["fragment"] = False
            return page, {}, frozenset({200, 404} if page in ep.job_details else {200})
        fragment = ep.fragment(state.index + state.data.get("skip", 0))
        state.data["fragment"] = True
        if "v" not in state.data:
            state.data["v"] = fragment_version(base, fragment) or "0"
        return _with_version(fragment, state.data["v"]), HX, frozenset({200, 204, 404})

    # Per polled Job's page path: {"204": n, "200": n} of its fragment polls (bench/run.py sorts
    # them by whether the Job changed while polled).
    tally: dict[str, dict[str, int]] = {}

    def observe(state: PollState, status: int, body: bytes, headers: object) -> None:
        if state.data.get("fragment") and status in (200, 204):
            job = ep.job_details[(state.index + state.data.get("skip", 0)) % len(ep.job_details)]
            counts = tally.setdefault(job, {"204": 0, "200": 0})
            counts[str(status)] += 1
        if status == 200 and body:
            new = version_in(body)
            if new:
                state.data["v"] = new
        elif status == 404:
            # The Job was deleted by churn (finished and garbage-collected): like a user opening
            # another Job, this poller moves on to the next sampled one. Counted in the statuses.
            state.data["skip"] = state.data.get("skip", 0) + 1
            state.data.pop("v", None)

    observe.tally = tally  # type: ignore[attr-defined]
    return request, observe
