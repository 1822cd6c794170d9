"""States Volcano users report, loaded verbatim into a simulated cluster with its controllers off
and read over the Django test client: a Job without status, a status holding only
taskStatusCount, timestamps slightly and far in the future, PodGroups forbidden while Queues are
readable, and a namespace-scoped user in proxy mode.

The rules: unknown is not zero (no counter reads 0 when nobody has counted; a count that cannot be
computed reads "unavailable" with the reason), time never runs backwards (clock skew reads "just
now", a real future time is shown as the absolute time with "clock skew?"), and no placeholder word
from code (None, null, NaN, undefined, Infinity, 1970, a Python repr) appears in any page or
fragment's visible text.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import override_settings

from bench.page_text import _Text
from tests.pages.helpers import create_seen, fragment_url, iso, kind, sim_faults, text, with_version

QUEUES = ("scheduling.volcano.sh", "queues")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
JOBS = ("batch.volcano.sh", "jobs")
NS = "reported"
QUEUE = "reported-q"

# Placeholder words that must never be visible: Python's and JavaScript's empty and invalid
# values, the epoch year of a zero timestamp, and reprs of Python objects.
BASELINE = re.compile(
    r"\bNone\b|\bnull\b|\bNaN\b|\bundefined\b|\bInfinity\b|\b1970\b|<[a-z_.]+ object at 0x|\{'|\['|"
    r"\bdatetime\.|\bDecimal\("
)


def _job(name: str, status: dict | None = None, **meta) -> dict:
    obj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, **meta},
        "spec": {
            "queue": QUEUE,
            "minAvailable": 2,
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
                }
            ],
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


def _queue(name: str) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1},
        "status": {"state": "Open"},
    }


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """(cluster, cache) holding the reported states; the pages' clock is the cluster's."""
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=14, name="reported") as (cluster, cache):
        now = cluster.clock.now()
        soon, later = iso(now + timedelta(seconds=30)), iso(now + timedelta(days=2))
        create_seen(cluster, cache, QUEUES, _queue(QUEUE))
        create_seen(cluster, cache, JOBS, _job("no-status"))
        create_seen(
            cluster, cache, JOBS, _job("tsc-only", {"taskStatusCount": {"worker": {"phase": {"Running": 2}}}})
        )
        create_seen(
            cluster,
            cache,
            JOBS,
            _job(
                "skewed",
                {"state": {"phase": "Running", "lastTransitionTime": soon}, "running": 2},
                creationTimestamp=soon,
            ),
        )
        create_seen(
            cluster,
            cache,
            JOBS,
            _job(
                "far-ahead",
                {"state": {"phase": "Pending", "lastTransitionTime": later}},
                creationTimestamp=later,
            ),
        )
        create_seen(
            cluster,
            cache,
            PODGROUPS,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "pg-no-status", "namespace": NS},
                "spec": {"minMember": 2, "queue": QUEUE},
            },
        )
        yield cluster, cache


def _visible(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return " ".join(parser.runs)


def _counts(page: str) -> dict[str, str]:
    """The Job page's pod counts card: {label: shown value}."""
    card = page.split('aria-label="Pod counts"', 1)[1].split("</dl>", 1)[0]
    return {
        dt: re.sub(r"<[^>]+>", "", dd).strip()
        for dt, dd in re.findall(r"<dt>([^<]+)</dt><dd[^>]*>(.*?)</dd>", card)
    }


def _row(page: str, name: str) -> str:
    (row,) = re.findall(rf'<tr data-job="{NS}/{name}">.*?</tr>', page, re.S)
    return text(row)


# -- unknown is not zero -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["no-status", "tsc-only"])
def test_a_job_whose_counters_nobody_reported_shows_dashes_not_zeros(reported, client, name):
    page = client.get(f"/jobs/{NS}/{name}/").content.decode()
    counts = _counts(page)
    assert counts["Pending"] == counts["Running"] == counts["Failed"] == counts["Terminating"] == "—", counts
    assert counts["Retries"].startswith("—"), counts
    shown = text(page)
    assert "The Job controller has not reported pod counts yet." in shown
    assert "0 are" not in shown and "0 /2" not in shown.split("Tasks")[0]
    row = _row(client.get(f"/jobs/?ns={NS}").content.decode(), name)
    # Gang, Pending, Succeeded, Failed, Retries: every counter cell a dash, no "0".
    assert re.search(r"\b0\b", row) is None, row
    assert row.count("—") >= 5, row
    queue_page = client.get(f"/queues/{QUEUE}/").content.decode()
    (queue_row,) = re.findall(rf"<tr>(?:(?!</tr>).)*?/jobs/{NS}/{name}/.*?</tr>", queue_page, re.S)
    assert "0 /2" not in text(queue_row) and "—" in text(queue_row)


def test_task_status_count_alone_still_shows_the_tasks_pods(reported, client):
    shown = text(client.get(f"/jobs/{NS}/tsc-only/").content.decode())
    tasks = shown.split("Tasks", 1)[1].split("Phase history", 1)[0]
    assert "2 /2" in tasks and "Running 2" in tasks, tasks


def test_a_podgroup_without_status_shows_dashes(reported, client):
    page = client.get(f"/podgroups/{NS}/pg-no-status/").content.decode()
    card = page.split('aria-label="Pod counts"', 1)[1].split("</dl>", 1)[0]
    assert "<dd>—</dd>" in card and "<dd>0</dd>" not in card, card
    listing = text(client.get(f"/podgroups/?ns={NS}").content.decode())
    assert "pg-no-status" in listing and "0 /2" not in listing


# -- time never runs backwards -------------------------------------------------------------------


def test_a_timestamp_seconds_ahead_reads_just_now(reported, client):
    shown = text(client.get(f"/jobs/{NS}/skewed/").content.decode())
    assert "Created just now" in shown and "in this phase for just now" in shown, shown[:1500]
    assert "in 30s" not in shown and "starts in" not in shown
    row = _row(client.get(f"/jobs/?ns={NS}").content.decode(), "skewed")
    assert "just now" in row and "in 30s" not in row, row


def test_a_timestamp_days_ahead_shows_the_absolute_time_and_says_clock_skew(reported, client):
    cluster, _cache = reported
    when = (cluster.clock.now() + timedelta(days=2)).strftime("%Y-%m-%d %H:%M:%S")
    shown = text(client.get(f"/jobs/{NS}/far-ahead/").content.decode())
    assert f"Created {when} UTC (clock skew?)" in shown, shown[:1500]
    assert f"in this phase for unknown: starts {when} UTC (clock skew?)" in shown
    assert "in 2d" not in shown and "starts in" not in shown
    row = _row(client.get(f"/jobs/?ns={NS}").content.decode(), "far-ahead")
    assert "clock skew?" in row and "in 2d" not in row, row
    overview = text(client.get("/").content.decode())
    assert "waiting unknown: starts" in overview and "in 2d" not in overview


@override_settings(VOLCANO_UI_CLOCK_SKEW_SECONDS=10)
def test_the_clock_skew_allowance_is_a_setting(reported, client):
    shown = text(client.get(f"/jobs/{NS}/skewed/").content.decode())
    assert "Created just now" not in shown and "(clock skew?)" in shown


# -- no placeholder words ------------------------------------------------------------------------


def test_empty_policies_and_plugins_say_so_in_words(reported, client):
    shown = _visible(client.get(f"/jobs/{NS}/no-status/").content.decode())
    assert "No policies" in shown and "No plugins" in shown


def _crawl(client, seeds: list[str], limit: int = 120) -> dict[str, str]:
    """GET every seed, every object page linked from them and every fragment of each (htmx, a
    version the server never issued); {url: body}. Every answer must be 200."""
    bodies: dict[str, str] = {}
    todo = list(dict.fromkeys(seeds))
    while todo and len(bodies) < limit:
        url = todo.pop(0)
        if url in bodies:
            continue
        resp = client.get(url)
        assert resp.status_code == 200, (url, resp.status_code)
        page = resp.content.decode()
        bodies[url] = page
        for frag in re.findall(r'id="frag-([a-z]+)" hx-get=', page):
            frag_url = with_version(fragment_url(page, frag), "x")
            f = client.get(frag_url, headers={"HX-Request": "true"})
            assert f.status_code == 200, (frag_url, f.status_code)
            bodies[frag_url] = f.content.decode()
        for link in re.findall(r'href="(/(?:jobs|podgroups|queues|pods)/[^"?#]+/)"', page):
            if link not in bodies and link not in todo:
                todo.append(link)
    return bodies


def _baseline_words(bodies: dict[str, str]) -> list[tuple[str, str]]:
    found = []
    for url, body in bodies.items():
        # The YAML view quotes the object as stored (a null there is the object's own value).
        visible = _visible(re.sub(r'<pre class="yaml.*?</pre>', "", body, flags=re.S))
        found += [(url, m.group(0)) for m in BASELINE.finditer(visible)]
    return found


def test_no_page_or_fragment_of_these_states_shows_a_placeholder_word(reported, client):
    seeds = ["/", "/jobs/", "/podgroups/", "/queues/", "/kiosk/", f"/jobs/?ns={NS}", f"/queues/{QUEUE}/"]
    bodies = _crawl(client, seeds)
    assert f"/jobs/{NS}/no-status/" in bodies and f"/podgroups/{NS}/pg-no-status/" in bodies
    assert _baseline_words(bodies) == []


# -- counts that cannot be computed --------------------------------------------------------------


@pytest.fixture
def pgs_forbidden(tmp_path_factory):
    """A cluster whose PodGroups the dashboard may not list while Queues and Jobs are readable."""
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from dashboard.presenters import clock as presenters
    from tests.conftest import _new_cluster, fast_cache_options

    cluster = _new_cluster(seed=15, controllers=False)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path_factory.mktemp("pgs-forbidden") / "kubeconfig", user="admin"
    )
    sim_faults(cluster, forbidden=["podgroups"])
    cache = build_cluster_cache(
        kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options()
    )
    cache.start()
    previous = presenters.set_time_source(cluster.clock.now)
    try:
        cache.wait_for(
            lambda s: (
                s.podgroups.state.name == "forbidden"
                and all(v.state.name == "synced" for n, v in s.views().items() if n != "podgroups")
            ),
            timeout=20,
        )
        with override_cluster_cache(cache):
            create_seen(cluster, cache, QUEUES, _queue(QUEUE))
            create_seen(cluster, cache, JOBS, _job("blind", {"state": {"phase": "Running"}, "running": 2}))
            yield cluster, cache
    finally:
        presenters.set_time_source(previous)
        cache.stop()
        cluster.stop()


def test_podgroup_counts_read_unavailable_when_podgroups_are_forbidden(pgs_forbidden, client):
    overview = text(client.get("/").content.decode())
    assert "count unavailable: forbidden" in overview and "0 PodGroups" not in overview
    assert "Nothing needs attention." not in overview
    assert "Not checked: PodGroups (forbidden)." in overview
    assert "Nothing needs attention among what can be read." in overview
    kiosk = text(client.get("/kiosk/").content.decode())
    assert "unavailable: forbidden" in kiosk
    queues = client.get("/queues/").content.decode()
    (row,) = re.findall(rf'<tr data-queue="{QUEUE}">.*?</tr>', queues, re.S)
    assert "PodGroup counts unavailable: forbidden" in text(row) and "Pending 0" not in text(row)
    queue_page = text(client.get(f"/queues/{QUEUE}/").content.decode())
    assert "PodGroup counts unavailable: forbidden." in queue_page
    assert "PodGroups unavailable: forbidden." in queue_page
    assert "No PodGroups in this queue." not in queue_page
    assert "0 Pending" not in queue_page
    # Jobs stay readable and counted.
    assert "blind" in queue_page


# -- counts limited to the viewer's namespaces ---------------------------------------------------


@pytest.fixture
def carol(reported):
    """A user who may see only NS (and read Queues), behind a trusted authenticating proxy."""
    from dashboard.access import review_cache
    from tests.prod.conftest import proxy_settings

    cluster, _cache = reported
    if cluster.auth.user_named("carol") is None:
        cluster.add_user("carol", "token-carol-0123456789", [NS])
    review_cache.clear()
    with override_settings(**proxy_settings()):
        yield {"HTTP_X_FORWARDED_USER": "carol"}
    review_cache.clear()


def test_counts_limited_to_the_users_namespaces_say_so(reported, client, carol):
    cluster, cache = reported
    if cluster.store.try_get(kind("", "namespaces"), None, "elsewhere") is None:
        create_seen(
            cluster, cache, JOBS, {**_job("other"), "metadata": {"name": "other", "namespace": "elsewhere"}}
        )
    overview = text(client.get("/", **carol).content.decode())
    assert "in your 1 namespace" in overview, overview[:2000]
    listing = text(client.get("/jobs/", **carol).content.decode())
    assert re.search(r"\d+ Jobs match in your 1 namespace", listing), listing
    assert "other" not in listing.split("Jobs match")[1]


@pytest.mark.parametrize("kind", ["Jobs", "PodGroups", "CronJobs", "JobFlows", "JobTemplates"])
def test_a_namespace_the_user_cannot_see_is_not_no_objects(reported, client, carol, kind):
    shown = text(client.get(f"/{kind.lower()}/?ns=elsewhere", **carol).content.decode())
    assert f"No {kind} match" not in shown and f"0 {kind} match" not in shown
    assert "Namespace “elsewhere” is not among the namespaces you may see" in shown
    assert f"so its {kind} cannot be shown" in shown


# -- last: the demo's cache stays installed for the rest of the module ------------------------


def test_no_page_or_fragment_of_the_demo_shows_a_placeholder_word(demo_cache, client):
    bodies = _crawl(client, ["/", "/jobs/", "/podgroups/", "/queues/", "/kiosk/"], limit=150)
    assert len(bodies) > 40
    assert _baseline_words(bodies) == []
