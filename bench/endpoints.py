"""Which dashboard URLs the benchmark measures, resolved against the live cluster.

The URL shapes come from ``dashboard/urls.py`` (reversed by name inside a Django setup so a renamed
route fails loudly here rather than measuring a 404); the objects (a Job for the detail page, a
queue and a page number for the filtered deep page) are picked from the simulated cluster's own
list so they exist.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bench.common import LOOPBACK, http_get
from bench.loadgen import Target

HX = {"HX-Request": "true"}


@dataclass
class Endpoints:
    overview: str
    jobs_page1: str
    jobs_deep: str
    job_detail: str
    job_details: list[str]
    queues: str
    fragment: str  # a polled fragment URL without ?v=
    fragment_param: str  # name of the version query parameter
    notes: list[str]
    missing: set[str]  # paths that did not answer 200 (not measured)


def _reverse(route: str, **kwargs: str) -> str | None:
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse(route, kwargs=kwargs or None)
    except NoReverseMatch:
        return None


def _django() -> None:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")
    django.setup()


def pick_objects(kubeconfig: str) -> dict:
    """A stable Job (Running, loaded at start), the busiest leaf queue, and its Running job count."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        raw = client.CustomObjectsApi(api).list_cluster_custom_object(
            "batch.volcano.sh", "v1alpha1", "jobs", _preload_content=False
        )
        jobs = json.loads(raw.data)["items"]
    finally:
        api.close()
    by_queue: dict[str, int] = {}
    running = []
    for job in jobs:
        phase = ((job.get("status") or {}).get("state") or {}).get("phase")
        if phase == "Running":
            running.append(job)
            queue = (job.get("spec") or {}).get("queue", "default")
            by_queue[queue] = by_queue.get(queue, 0) + 1
    running.sort(key=lambda j: j["metadata"]["name"])
    queue = max(by_queue, key=lambda q: by_queue[q]) if by_queue else "default"
    sample = running[:: max(1, len(running) // 50)][:50] or jobs[:50]
    return {
        "jobs": len(jobs),
        "queue": queue,
        "queue_running": by_queue.get(queue, 0),
        "sample": [(j["metadata"]["namespace"], j["metadata"]["name"]) for j in sample],
    }


def resolve(base: str, kubeconfig: str) -> Endpoints:
    """Resolve every measured URL and check it answers 200 once (raises RuntimeError otherwise)."""
    _django()
    from django.conf import settings

    objs = pick_objects(kubeconfig)
    notes = []
    ns, name = objs["sample"][0]
    overview = _reverse("overview") or "/"
    jobs = _reverse("jobs") or _reverse("job_list") or _reverse("jobs:list") or "/jobs/"
    detail_paths = []
    for sns, sname in objs["sample"]:
        path = (
            _reverse("job_detail", namespace=sns, name=sname)
            or _reverse("jobs:detail", namespace=sns, name=sname)
            or f"/jobs/{sns}/{sname}/"
        )
        detail_paths.append(path)
    queues = _reverse("queues") or _reverse("queue_list") or _reverse("queues:list") or "/queues/"
    page_size = getattr(settings, "VOLCANO_UI_PAGE_SIZE", 50)
    deep_page = max(1, objs["queue_running"] // page_size)
    deep = f"{jobs}?queue={objs['queue']}&phase=Running&page={deep_page}"
    notes.append(
        f"deep page: queue {objs['queue']} has {objs['queue_running']} Running jobs; page {deep_page}"
    )
    fragment, param = _find_fragment(base, detail_paths[0])
    if not fragment:
        notes.append(
            "no polled fragment (hx-get with v=) found on the job detail page: fragment rows skipped"
        )
    missing = set()
    for label, path in (
        ("overview", overview),
        ("jobs list", jobs),
        ("deep page", deep),
        ("job detail", detail_paths[0]),
        ("queue list", queues),
    ):
        status, _, _ = http_get(f"{base}{path}")
        if status != 200:
            notes.append(f"{label} {path} answered {status}: not measured")
            missing.add(path)
    return Endpoints(
        overview, jobs, deep, detail_paths[0], detail_paths, queues, fragment, param, notes, missing
    )


_HX_GET_RE = re.compile(r'hx-get="([^"]+)"')


def _find_fragment(base: str, detail_path: str) -> tuple[str, str]:
    """The first polled fragment on the job detail page: its hx-get URL and version parameter."""
    status, body, _ = http_get(f"{base}{detail_path}")
    text = body.decode("utf-8", "replace")
    for match in _HX_GET_RE.finditer(text):
        url = match.group(1).replace("&amp;", "&")
        if "v=" in url:
            path, _, query = url.partition("?")
            params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            others = "&".join(f"{k}={v}" for k, v in params.items() if k != "v")
            return (path + ("?" + others if others else "")), "v"
    return "", "v"


def fragment_version(base: str, fragment: str, param: str = "v") -> str | None:
    """The current version of ``fragment``: what a client got with its last full render."""
    status, body, headers = http_get(f"{base}{fragment}", timeout=10)
    if status != 200:
        return None
    for key in ("X-Fragment-Version", "X-Version", "ETag"):
        if headers.get(key):
            return headers[key].strip('"')
    match = re.search(r'hx-get="[^"]*[?&]' + param + r'=([^"&]+)', body.decode("utf-8", "replace"))
    return match.group(1) if match else None


def targets(ep: Endpoints, base: str) -> list[Target]:
    """The measured requests, in table order."""
    out = [
        Target.fixed("overview", ep.overview),
        Target.fixed("jobs list, page 1", ep.jobs_page1),
        Target.fixed("jobs list, filtered deep page", ep.jobs_deep),
        Target.cycle("job detail", ep.job_details),
        Target.fixed("queue list", ep.queues),
    ]
    out = [t for t in out if (ep.job_detail if t.name == "job detail" else t.path()) not in ep.missing]
    if ep.fragment:
        sep = "&" if "?" in ep.fragment else "?"
        version = fragment_version(base, ep.fragment, ep.fragment_param)
        if version:
            out.append(
                Target.fixed(
                    "fragment, unchanged (204)",
                    f"{ep.fragment}{sep}{ep.fragment_param}={version}",
                    expect={204, 200},
                    headers=HX,
                )
            )
        out.append(
            Target.fixed("fragment, changed (200)", f"{ep.fragment}{sep}{ep.fragment_param}=0", headers=HX)
        )
    return out


__all__ = ["Endpoints", "resolve", "targets", "fragment_version", "LOOPBACK"]


def poll_mix(ep: Endpoints, base: str, page_every: int = 5):
    """(request, observe) for pollers behaving like open dashboard tabs.

    Each poller mostly polls the fragment with the version it last saw (204 when unchanged), and
    every ``page_every``-th request loads a full page, rotating over the measured pages, as a user
    clicking around would. Pages must answer 200, fragments 200 or 204.
    """
    pages = [
        p
        for p in [ep.overview, ep.jobs_page1, ep.jobs_deep, ep.queues, *ep.job_details[:5]]
        if p not in ep.missing
    ] or [ep.overview]
    sep = "&" if "?" in ep.fragment else "?"
    first = fragment_version(base, ep.fragment, ep.fragment_param) if ep.fragment else None

    def request(state):  # noqa: ANN001, ANN202
        n = state.data.get("n", 0)
        state.data["n"] = n + 1
        if not ep.fragment or (n + state.index) % page_every == 0:
            return pages[(n // page_every + state.index) % len(pages)], {}, frozenset({200})
        version = state.data.get("v", first or "0")
        return f"{ep.fragment}{sep}{ep.fragment_param}={version}", HX, frozenset({200, 204})

    def observe(state, status, body, headers) -> None:  # noqa: ANN001
        new = headers.get("X-Fragment-Version") if status == 200 and headers else None
        if new:
            state.data["v"] = new

    return request, observe
