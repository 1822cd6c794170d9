"""Objects the Volcano CRD schemas admit but that no controller would write: absurd quantity
exponents, very deep queue chains, huge messages, Go zero times, negative counters, objects being
deleted. Each is loaded into a simulated cluster with its controllers off, read by a live cache,
and every page (and fragment) that shows it must answer without a 500 and without lying.
"""

from __future__ import annotations

import itertools
import re

import pytest

from dashboard.presenters.jobs import job_gang
from dashboard.presenters.podgroups import podgroup_gang
from dashboard.presenters.queues import queue_tree
from dashboard.presenters.resources import PCT_CAP, _pct, queue_resource_bars
from dashboard.volcano import objects
from dashboard.volcano.quantities import format_quantity, quantity
from dashboard.volcano.time import parse_time
from tests.pages.helpers import fragment_url, kind, text, with_version

_seq = itertools.count()


@pytest.fixture(scope="module")
def odd_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=3, name="odd") as pair:
        yield pair


QUEUES = ("scheduling.volcano.sh", "queues")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
JOBS = ("batch.volcano.sh", "jobs")
EVENTS = ("", "events")


def _create(odd_cluster, plural: tuple[str, str], obj: dict, namespace: str | None = None) -> dict:
    """Create ``obj`` verbatim (status as written) and wait until the cache holds it."""
    cluster, cache = odd_cluster
    store = cluster.store
    if namespace and store.try_get(kind("", "namespaces"), None, namespace) is None:
        store.create(kind("", "namespaces"), {"metadata": {"name": namespace}})
    created = store.create(kind(*plural), obj, namespace, replay=True)
    view = {"queues": "queues", "podgroups": "podgroups", "jobs": "jobs", "events": "events"}[plural[1]]
    name = obj["metadata"]["name"]
    cache.wait_for(lambda s: getattr(s, view).get(namespace, name) is not None, timeout=10)
    return created


def _queue(name: str, spec: dict | None = None, status: dict | None = None, **meta) -> dict:
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, **meta},
        "spec": {"weight": 1, **(spec or {})},
    }
    if status is not None:
        obj["status"] = status
    return obj


def _podgroup(ns: str, name: str, queue: str, spec: dict | None = None, status: dict | None = None, **meta):
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns, **meta},
        "spec": {"minMember": 1, "queue": queue, **(spec or {})},
    }
    if status is not None:
        obj["status"] = status
    return obj


def _get_all(client, urls: list[str]) -> dict[str, str]:
    """GET each url and every fragment of each page; assert no 500; return the page bodies."""
    pages = {}
    for url in urls:
        resp = client.get(url)
        assert resp.status_code == 200, (url, resp.status_code)
        page = resp.content.decode()
        pages[url] = page
        for frag in re.findall(r'id="frag-([a-z]+)" hx-get=', page):
            f = client.get(with_version(fragment_url(page, frag), "x"), headers={"HX-Request": "true"})
            assert f.status_code == 200, (url, frag, f.status_code)
    return pages


# --- 1. absurd quantity exponents ---------------------------------------------------------------


@pytest.mark.parametrize("huge", ["1e1000000", "1e999999", "9e999999", "-1e1000000", "1e-1000000"])
def test_queue_with_absurd_capability_renders_compactly(odd_cluster, client, huge):
    name = f"huge-{next(_seq)}"
    _create(odd_cluster, QUEUES, _queue(name, {"capability": {"cpu": huge, "memory": huge}}))
    pages = _get_all(client, ["/", "/queues/", "/kiosk/", f"/queues/{name}/"])
    for page in pages.values():
        assert len(page) < 500_000, len(page)
    assert huge in text(pages[f"/queues/{name}/"])


def test_pending_podgroup_with_absurd_min_resources(odd_cluster, client):
    n = next(_seq)
    ns, qname = f"odd-{n}", f"q-{n}"
    _create(odd_cluster, QUEUES, _queue(qname, {"capability": {"cpu": "4"}}, {"state": "Open"}))
    _create(
        odd_cluster,
        PODGROUPS,
        _podgroup(
            ns,
            "pg",
            qname,
            {"minResources": {"cpu": "1e1000000", "memory": "1e999999"}},
            {"phase": "Pending"},
        ),
        ns,
    )
    pages = _get_all(client, ["/", "/podgroups/", f"/podgroups/{ns}/pg/", f"/queues/{qname}/"])
    assert "1e1000000" in text(pages[f"/podgroups/{ns}/pg/"])
    assert all(len(p) < 500_000 for p in pages.values())


def test_percentage_of_tiny_deserved_and_huge_allocated(odd_cluster, client):
    name = f"pct-{next(_seq)}"
    _create(
        odd_cluster,
        QUEUES,
        _queue(name, {"deserved": {"cpu": "1m"}}, {"state": "Open", "allocated": {"cpu": "9e999999"}}),
    )
    pages = _get_all(client, ["/", "/queues/", "/kiosk/", f"/queues/{name}/"])
    assert all(len(p) < 500_000 for p in pages.values())


@pytest.mark.parametrize(
    "value",
    ["1e1000000", "1e999999", "-9e999999", "1e-1000000", "1e30", "1e-30", "1E", "999999Ei", "1n", "0"],
)
def test_quantity_helpers_never_raise(value):
    for res in ("cpu", "memory", "nvidia.com/gpu", "requests.cpu", "pods"):
        q = quantity(value)
        shown = format_quantity(res, q, value)
        assert shown and len(shown) < 40, shown
        for other in ("1m", "0", "1e30", value):
            o = quantity(other)
            if q is not None and o is not None:
                assert 0 <= _pct(abs(q), abs(o)) <= PCT_CAP
    queue = {"spec": {"capability": {"cpu": value}}, "status": {"allocated": {"cpu": "1m"}}}
    for bar in queue_resource_bars(queue):
        assert bar.pct is None or 0 <= bar.pct <= PCT_CAP


# --- 2. very deep queue hierarchies ---------------------------------------------------------------


def test_deep_queue_chain_renders_in_depth_order(odd_cluster, client):
    cluster, cache = odd_cluster
    n = next(_seq)
    depth = 1100  # deeper than Python's default recursion limit
    store = cluster.store
    for i in range(depth):
        spec = {"parent": f"chain{n}-{i - 1}"} if i else {}
        store.create(kind(*QUEUES), _queue(f"chain{n}-{i}", spec), replay=True)
    last = f"chain{n}-{depth - 1}"
    cache.wait_for(lambda s: s.queues.get(None, last) is not None, timeout=20)
    pages = _get_all(client, ["/queues/", "/", "/kiosk/", f"/queues/{last}/"])
    names = re.findall(rf"chain{n}-(\d+)", text(pages["/queues/"]))
    firsts = list(dict.fromkeys(int(x) for x in names))
    assert firsts == list(range(depth))  # parents before children, all of them


def test_queue_tree_is_iterative_and_keeps_cycles():
    rows = queue_tree(
        [_queue(f"c{i}", {"parent": f"c{i - 1}"} if i else {}) for i in range(5000)]
        + [_queue("x", {"parent": "y"}), _queue("y", {"parent": "x"}), _queue("self", {"parent": "self"})]
    )
    by_name = {objects.name(r.queue): r for r in rows}
    assert len(rows) == 5003
    assert by_name["c4999"].depth == 4999 and not by_name["c4999"].has_children
    assert by_name["c0"].has_children and by_name["c0"].depth == 0
    # A parent cycle is shown, each member once, starting at the top level.
    assert {by_name["x"].depth, by_name["y"].depth} == {0, 1}
    assert by_name["self"].depth == 0


# --- 3. huge free text --------------------------------------------------------------------------


def test_huge_event_and_condition_messages_are_cut_on_the_pages(odd_cluster, client):
    n = next(_seq)
    ns, qname = f"msg-{n}", f"q-msg-{n}"
    _create(odd_cluster, QUEUES, _queue(qname, status={"state": "Open"}))
    huge = "<b>" + "m" * 500_000
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": ns, "uid": f"uid-big-{n}"},
        "spec": {"queue": qname, "minAvailable": 1, "tasks": [{"name": "t", "replicas": 1}]},
        "status": {"state": {"phase": "Pending", "message": huge}},
    }
    _create(odd_cluster, JOBS, job, ns)
    cond = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": huge}
    pg = _podgroup(
        ns,
        "big-pg",
        qname,
        status={"phase": "Inqueue", "conditions": [cond]},
        ownerReferences=[
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "big",
                "uid": f"uid-big-{n}",
                "controller": True,
            }
        ],
    )
    _create(odd_cluster, PODGROUPS, pg, ns)
    for i in range(3):
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"big.{i}", "namespace": ns},
            "involvedObject": {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "big",
                "namespace": ns,
                "uid": f"uid-big-{n}",
            },
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": f"{i}{huge}",
            "lastTimestamp": "2026-11-29T10:00:00Z",
        }
        _create(odd_cluster, EVENTS, event, ns)
    pages = _get_all(client, [f"/jobs/{ns}/big/", f"/podgroups/{ns}/big-pg/", "/", f"/jobs/?ns={ns}"])
    for url, page in pages.items():
        # (The overview's size also depends on the other tests' queues, e.g. the 1,100-deep chain.)
        assert "m" * (4096 + 1) not in page, url
    for url in (f"/jobs/{ns}/big/", f"/podgroups/{ns}/big-pg/"):
        assert len(pages[url]) < 250_000, (url, len(pages[url]))
    job_page = pages[f"/jobs/{ns}/big/"]
    assert "(truncated by volcano-ui: 500,004 characters in all)" in text(job_page)
    assert "&lt;b&gt;mmm" in job_page
    assert "(truncated by volcano-ui" in text(pages[f"/podgroups/{ns}/big-pg/"])
    # ...and folded after a few lines: the reader opens it, the rest of the page stays in view.
    for url in (f"/jobs/{ns}/big/", f"/podgroups/{ns}/big-pg/"):
        assert '<details class="clip"><summary>' in pages[url], url


def test_clip_folds_long_text_and_keeps_all_of_it():
    from dashboard.templatetags.volcano import clip

    assert clip("short <b>") == "short &lt;b&gt;"
    long = ("word " * 200) + "\u202eend"
    html = str(clip(long))
    assert html.startswith('<details class="clip"><summary>word word')
    assert "… (605 more characters)" in html  # 1,004 characters cut at the space at 399
    # Nothing is dropped, the hidden character is still revealed, the cut is at a space.
    assert text(html).replace("…", "").count("word") >= 200
    assert 'class="ctl"' in html and "U+202E" in html
    assert "wor</summary>" not in html


def test_warnings_with_one_reason_and_different_messages_stay_apart_on_the_detail_page(odd_cluster, client):
    """Volcano writes PodGroupPending/Unschedulable with a message per missing resource: the detail
    page must show "insufficient cpu" and "insufficient nvidia.com/gpu", not only the newer one."""
    ns = f"warn-{next(_seq)}"
    _create(odd_cluster, JOBS, _job(ns, "wj", {"state": {"phase": "Pending"}}), ns)
    for i, what in enumerate(("cpu", "nvidia.com/gpu")):
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"wj.{i}", "namespace": ns},
            "involvedObject": {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "wj",
                "namespace": ns,
                "uid": f"uid-{ns}-wj",
            },
            "type": "Warning",
            "reason": "PodGroupPending",
            "message": f"queue resource quota insufficient: insufficient {what}",
            "count": 2 + i,
            "lastTimestamp": f"2026-11-29T10:0{i}:00Z",
        }
        _create(odd_cluster, EVENTS, event, ns)
    page = client.get(f"/jobs/{ns}/wj/").content.decode()
    why = text(page.split('id="why-title"', 1)[1].split("</section>", 1)[0])
    assert "insufficient cpu" in why and "insufficient nvidia.com/gpu" in why, why
    assert "2 times" in why and "3 times" in why, why


# --- 4. env entries in the YAML view -------------------------------------------------------------


def test_yaml_view_lists_every_env_entry_and_envfrom_without_values(odd_cluster, client):
    n = next(_seq)
    ns = f"env-{n}"
    container = {
        "name": "main",
        "image": "busybox",
        "env": [
            {"name": "LITERAL_SECRET", "value": "s3cr3t-literal-value"},
            {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "creds-secret", "key": "token"}}},
        ],
        "envFrom": [{"configMapRef": {"name": "cm-settings"}}, {"secretRef": {"name": "sec-settings"}}],
    }
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "envjob", "namespace": ns, "uid": f"uid-env-{n}"},
        "spec": {
            "minAvailable": 1,
            "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [container]}}}],
        },
    }
    _create(odd_cluster, JOBS, job, ns)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "envjob-t-0", "namespace": ns, "labels": {"volcano.sh/job-name": "envjob"}},
        "spec": {"schedulerName": "volcano", "containers": [container]},
        "status": {"phase": "Pending"},
    }
    cluster, cache = odd_cluster
    cluster.store.create(kind("", "pods"), pod, ns, replay=True)
    cache.wait_for(lambda s: s.pods.get(ns, "envjob-t-0") is not None, timeout=10)
    pages = _get_all(client, [f"/jobs/{ns}/envjob/", f"/pods/{ns}/envjob-t-0/"])
    for url, page in pages.items():
        shown = text(page)
        assert "s3cr3t-literal-value" not in page, url
        for expected in (
            "LITERAL_SECRET",
            "(hidden by volcano-ui)",
            "creds-secret",
            "cm-settings",
            "sec-settings",
        ):
            assert expected in shown, (url, expected)


def test_yaml_view_has_no_aliases_for_shared_subtrees_and_says_it_is_the_cached_copy(odd_cluster, client):
    # Equal requests and limits (and two pods of one gang) are stored once in the cache
    # (trim.share); the YAML view must still print each in full, as kubectl does, not &id001/*id001.
    n = next(_seq)
    ns = f"yaml-{n}"
    res = {"cpu": "2", "memory": "1Gi"}
    container = {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": dict(res), "limits": dict(res)},
    }
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "same", "namespace": ns, "uid": f"uid-yaml-{n}"},
        "spec": {
            "minAvailable": 1,
            "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [container]}}}],
        },
    }
    _create(odd_cluster, JOBS, job, ns)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "same-t-0", "namespace": ns, "labels": {"volcano.sh/job-name": "same"}},
        "spec": {"schedulerName": "volcano", "containers": [container]},
        "status": {"phase": "Pending"},
    }
    cluster, cache = odd_cluster
    cluster.store.create(kind("", "pods"), pod, ns, replay=True)
    cache.wait_for(lambda s: s.pods.get(ns, "same-t-0") is not None, timeout=10)
    cached = cache.snapshot().pods.get(ns, "same-t-0")["spec"]["containers"][0]["resources"]
    assert cached["requests"] is cached["limits"]  # the premise: the cache shares them
    pages = _get_all(client, [f"/jobs/{ns}/same/", f"/pods/{ns}/same-t-0/"])
    for url, page in pages.items():
        yaml_view = re.search(r'<details class="yaml">.*?</details>', page, flags=re.S).group(0)
        assert "&amp;id0" not in yaml_view and "*id0" not in yaml_view, url
        assert text(yaml_view).count("memory: 1Gi") >= 2, url
        assert "kubectl get -o yaml shows the whole object" in text(yaml_view), url


# --- 5. odd values: zero times, negative counters, zero wholes, small quantities, deletions ------


def _job(ns: str, name: str, status: dict | None = None, **meta) -> dict:
    obj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", **meta},
        "spec": {"minAvailable": 1, "queue": "default", "tasks": [{"name": "t", "replicas": 1}]},
    }
    if status is not None:
        obj["status"] = status
    return obj


def _shown(page: str) -> str:
    """The page's text without its YAML view (which shows the object as written, on purpose)."""
    return text(re.sub(r'<details class="yaml">.*?</details>', " ", page, flags=re.S))


def test_go_zero_time_reads_as_unknown(odd_cluster, client):
    ns = f"zero-{next(_seq)}"
    zero = "0001-01-01T00:00:00Z"
    status = {
        "state": {"phase": "Running", "lastTransitionTime": zero},
        "conditions": [{"status": "Running", "lastTransitionTime": zero}],
    }
    _create(odd_cluster, JOBS, _job(ns, "zj", status, creationTimestamp=zero), ns)
    pages = _get_all(client, [f"/jobs/{ns}/zj/", f"/jobs/?ns={ns}", "/"])
    for url, page in pages.items():
        assert not re.search(r"\b\d{4,}d\b", _shown(page)), url  # no "739948d"
        assert "0001" not in _shown(page), url
    assert parse_time(zero) is None
    assert parse_time("1970-06-01T00:00:00Z") is None
    assert parse_time("1971-01-01T00:00:00Z") is not None


def test_negative_counters_never_claim_min_available_reached(odd_cluster, client):
    ns = f"neg-{next(_seq)}"
    status = {"state": {"phase": "Running"}, "running": -1, "succeeded": -5, "minAvailable": -2}
    _create(odd_cluster, JOBS, _job(ns, "nj", status), ns)
    page = _get_all(client, [f"/jobs/{ns}/nj/"])[f"/jobs/{ns}/nj/"]
    shown = _shown(page)
    assert "minAvailable reached" not in shown
    assert not re.search(r"(?<!\w)-\d+\s*/\s*-?\d", shown)  # no "Gang -1 / -2"
    gang = job_gang(_job(ns, "nj", status))  # unknown, never 0
    assert (gang.running, gang.ready, gang.min_available, gang.met) == (None, None, None, False)
    pg_gang = podgroup_gang(_podgroup(ns, "p", "q", {"minMember": -1}, {"running": -3}))
    assert (pg_gang.running, pg_gang.min_available, pg_gang.met) == (None, None, False)
    ok = job_gang(_job(ns, "ok", {"running": 2, "minAvailable": 1}))
    assert ok.met


def test_negative_counters_read_unknown_and_the_gang_line_claims_no_need(odd_cluster, client):
    ns = f"neg-{next(_seq)}"
    status = {
        "state": {"phase": "Exploding"},
        "running": 999999,
        "pending": -3,
        "retryCount": -5,
        "minAvailable": -2,
    }
    _create(odd_cluster, JOBS, _job(ns, "nonsense", status), ns)
    page = _get_all(client, [f"/jobs/{ns}/nonsense/"])[f"/jobs/{ns}/nonsense/"]
    shown = _shown(page)
    assert "needs 0" not in shown, shown
    assert "what the gang needs is unknown" in shown
    for label in ("Retries", "Pending"):  # unknown, not a number (the counter check quotes them)
        cell = page.split(f"{label}</dt><dd>")[1].split("</dd>")[0]
        assert text(cell).strip().startswith("—"), (label, cell)
    # An unknown phase needs attention, as the stuck Jobs do.
    overview = client.get("/").content.decode()
    group = overview.split('data-group="unknown"')[1].split("</ul>")[0]
    assert "nonsense" in group and "unknown phase Exploding" in text(group)
    kiosk = text(client.get("/kiosk/").content.decode())
    assert "in an unknown phase" in kiosk


def test_a_negative_task_count_reads_unknown_in_the_tasks_card(odd_cluster, client):
    ns = f"neg-{next(_seq)}"
    status = {
        "state": {"phase": "Running"},
        "running": 1,
        "taskStatusCount": {"t": {"phase": {"Running": -2, "Pending": 1}}},
    }
    _create(odd_cluster, JOBS, _job(ns, "tasks", status), ns)
    page = _get_all(client, [f"/jobs/{ns}/tasks/"])[f"/jobs/{ns}/tasks/"]
    chips = dict(re.findall(r'<span class="chip">(\w+) <span class="chip-count">([^<]*)</span>', page))
    assert chips == {"Pending": "1", "Running": "—"}, chips


def _gang_cell(page: str, row: str) -> str:
    """The first gang bar after ``row`` (a list row's data-job / data-podgroup, or an id)."""
    cells = page.split(row)[1].split("</tr>")[0]
    return re.search(r'<div class="gang[ "].*?</span></div>', cells, flags=re.S).group(0)


def test_a_negative_running_count_reads_unknown_against_a_known_min_available(odd_cluster, client):
    ns = f"negrun-{next(_seq)}"
    job = _job(ns, "nr", {"state": {"phase": "Running"}, "running": -5, "minAvailable": 2})
    job["spec"].update(minAvailable=2, tasks=[{"name": "t", "replicas": 2}])
    _create(odd_cluster, JOBS, job, ns)
    pages = _get_all(client, [f"/jobs/?ns={ns}", f"/jobs/{ns}/nr/"])
    for url, page in pages.items():
        bar = _gang_cell(page, f'data-job="{ns}/nr"' if "?" in url else 'id="job-gang"')
        assert "<strong>—</strong>/2" in bar, (url, bar)
        assert 'title="— running, minAvailable 2, 2 replicas"' in bar, (url, bar)
        assert not re.search(r"<strong>-?\d+</strong>/2", bar), url  # not 0/2, not -5/2
    detail = _shown(pages[f"/jobs/{ns}/nr/"])
    assert "A pod counter is negative: the running count is unknown." in detail
    assert "what the gang needs is unknown" not in detail  # minAvailable 2 is known
    assert "minAvailable reached" not in detail
    gang = job_gang(job)
    assert (gang.running, gang.ready, gang.min_available, gang.met, gang.short) == (
        None,
        None,
        2,
        False,
        False,
    )


@pytest.mark.parametrize("min_member", [-4, "x", 1.5])
def test_an_invalid_min_member_reads_unknown_and_claims_no_gangless_podgroup(odd_cluster, client, min_member):
    ns = f"negmm-{next(_seq)}"
    pg = _podgroup(
        ns, "pg", "default", {"minMember": min_member}, {"phase": "Inqueue", "running": -1, "failed": -3}
    )
    _create(odd_cluster, PODGROUPS, pg, ns)
    url = f"/podgroups/{ns}/pg/"
    pages = _get_all(client, [f"/podgroups/?ns={ns}", url])
    row = pages[f"/podgroups/?ns={ns}"].split(f'data-podgroup="{ns}/pg"')[1].split("</tr>")[0]
    bar = _gang_cell(pages[f"/podgroups/?ns={ns}"], f'data-podgroup="{ns}/pg"')
    assert "<strong>—</strong>/—" in bar and 'title="— running, minAvailable —' in bar, bar
    cells = [text(c).strip() for c in re.findall(r'<td class="num[^"]*">(.*?)</td>', row, flags=re.S)]
    assert cells == ["—", "—", "0", "—"], cells  # minMember, running, succeeded, failed
    detail = pages[url]
    shown = _shown(detail)
    assert "<strong>—</strong>/—" in detail.split('id="gang-title"')[1].split("</section>")[0]
    assert "minMember is negative or not a whole number: the gang's size is unknown." in shown
    assert "minMember 0" not in shown and "0/0" not in shown
    for label in ("minMember", "Running", "Failed"):
        cell = detail.split(f"{label}</dt><dd")[1].split("</dd>")[0]
        assert text(cell.split(">", 1)[1]).strip() == "—", (label, cell)
    assert "there is no gang" not in shown
    assert "its minMember is not a valid gang size" in shown, shown
    gang = podgroup_gang(pg)
    assert (gang.running, gang.min_available, gang.gangless, gang.met, gang.short) == (
        None,
        None,
        False,
        False,
        False,
    )


def test_zero_or_missing_whole_has_no_percentage(odd_cluster, client):
    name = f"zerodes-{next(_seq)}"
    _create(
        odd_cluster,
        QUEUES,
        _queue(name, {"deserved": {"cpu": "0"}}, {"state": "Open", "allocated": {"cpu": "2"}}),
    )
    pages = _get_all(client, [f"/queues/{name}/", "/queues/"])
    bar = next(
        b for b in queue_resource_bars(_queue(name, {"deserved": {"cpu": "0"}}, {"allocated": {"cpu": "2"}}))
    )
    assert bar.pct is None and bar.pct_text == ""
    detail = text(pages[f"/queues/{name}/"])
    assert "100%" not in detail


@pytest.mark.parametrize(
    ("resource", "raw", "shown"),
    [
        ("memory", "1500m", "1.5"),
        ("memory", "0.5", "0.5"),
        ("nvidia.com/gpu", "0.5", "0.5"),
        ("cpu", "0.5", "500m"),
        ("cpu", "1500m", "1.5"),
        ("cpu", "1n", "0.000001m"),
        ("memory", "1536Mi", "1.5Gi"),
        ("memory", "1G", "953.7Mi"),
        ("cpu", "2", "2"),
        ("pods", "110", "110"),
    ],
)
def test_small_and_fractional_quantities_do_not_lie(resource, raw, shown):
    assert format_quantity(resource, quantity(raw), raw) == shown


def test_objects_being_deleted_are_marked(odd_cluster, client):
    n = next(_seq)
    ns, qname = f"del-{n}", f"q-del-{n}"
    deleting = {"deletionTimestamp": "2026-11-29T10:00:00Z", "finalizers": ["example.com/hold"]}
    _create(odd_cluster, QUEUES, _queue(qname, status={"state": "Open"}, **deleting))
    _create(odd_cluster, JOBS, _job(ns, "dj", {"state": {"phase": "Running"}}, **deleting), ns)
    _create(odd_cluster, PODGROUPS, _podgroup(ns, "dpg", qname, status={"phase": "Running"}, **deleting), ns)
    _create(odd_cluster, JOBS, _job(ns, "alive", {"state": {"phase": "Running"}}), ns)
    pages = _get_all(
        client,
        [f"/jobs/{ns}/dj/", f"/podgroups/{ns}/dpg/", f"/queues/{qname}/", f"/jobs/?ns={ns}", "/queues/"],
    )
    for url, page in pages.items():
        assert "Deleting" in text(page), url
    assert "Deleting" not in text(client.get(f"/jobs/{ns}/alive/").content.decode())


def test_queue_without_status_allocated_reads_unknown_not_zero(odd_cluster, client):
    """No status.allocated (no scheduler yet, an older Volcano): usage is unknown, so no "0 0%"."""
    name = f"noalloc-{next(_seq)}"
    _create(odd_cluster, QUEUES, _queue(name, {"capability": {"cpu": "8"}, "deserved": {"cpu": "4"}}))
    (bar,) = queue_resource_bars(_queue(name, {"capability": {"cpu": "8"}, "deserved": {"cpu": "4"}}))
    assert bar.allocated == "—" and bar.pct is None and bar.fill == 0 and not bar.over
    (zero,) = queue_resource_bars(
        _queue(name, {"capability": {"cpu": "8"}, "deserved": {"cpu": "4"}}, status={"allocated": {}})
    )
    assert zero.allocated == "0" and zero.pct == 0  # reported, and nothing allocated
    page = client.get(f"/queues/{name}/")
    assert page.status_code == 200
    assert "0%" not in text(page.content.decode()).split("Child queues")[0]


def test_a_phase_start_in_the_future_is_not_an_elapsed_time(odd_cluster, client):
    ns = f"future-{next(_seq)}"
    ahead = "2999-01-01T00:00:00Z"
    status = {"state": {"phase": "Pending", "lastTransitionTime": ahead}}
    _create(odd_cluster, JOBS, _job(ns, "fj", status, creationTimestamp=ahead), ns)
    shown = _shown(client.get(f"/jobs/{ns}/fj/").content.decode())
    assert "in this phase for unknown: starts 2999-01-01 00:00:00 UTC (clock skew?)" in shown, shown[:2000]
    assert "for in " not in shown
    overview = client.get("/").content.decode()
    (row,) = re.findall(rf'<li><div class="att-line">(?:(?!</li>).)*?/jobs/{ns}/fj/.*?</li>', overview, re.S)
    assert "waiting unknown: starts 2999-01-01" in text(row) and "0s" not in text(row), text(row)


def test_a_missing_queue_leads_the_pending_job_and_no_nodes_are_offered(odd_cluster, client):
    cluster, _cache = odd_cluster
    ns = f"ghostq-{next(_seq)}"
    if cluster.store.try_get(kind("", "nodes"), None, "ghost-node") is None:
        node = {
            "metadata": {"name": "ghost-node"},
            "status": {
                "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
        cluster.store.create(kind("", "nodes"), node)
    job = _job(ns, "lost", {"state": {"phase": "Pending"}, "pending": 1})
    job["spec"]["queue"] = "ghost-queue"
    _create(odd_cluster, JOBS, job, ns)
    cond = {
        "type": "Unschedulable",
        "status": "True",
        "reason": "NotEnoughResources",
        "message": "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable",
    }
    pg = _podgroup(ns, "lost", "ghost-queue", None, {"phase": "Pending", "conditions": [cond]})
    pg["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "lost",
            "uid": job["metadata"]["uid"],
            "controller": True,
        }
    ]
    _create(odd_cluster, PODGROUPS, pg, ns)
    page = client.get(f"/jobs/{ns}/lost/").content.decode()
    shown = _shown(page)
    assert "queue ghost-queue does not exist" in shown
    assert "unschedulable: NotEnoughResources" not in shown
    assert "Nodes that could take one pod" not in shown
    listing = _shown(client.get(f"/jobs/?ns={ns}").content.decode())
    assert (
        "queue ghost-queue does not exist" in listing and "unschedulable: NotEnoughResources" not in listing
    )


def test_allocation_over_a_capability_of_zero_is_said_in_words(odd_cluster, client):
    """A capability of 0 has no percentage: being over it is said, not only coloured."""
    name = f"zerocap-{next(_seq)}"
    _create(
        odd_cluster,
        QUEUES,
        _queue(name, {"capability": {"nvidia.com/gpu": "0"}}, status={"allocated": {"nvidia.com/gpu": "3"}}),
    )
    pages = _get_all(client, [f"/queues/{name}/", "/queues/"])
    detail = text(pages[f"/queues/{name}/"])
    assert "above capability" in detail
    listed = pages["/queues/"].split(f'<tr data-queue="{name}">', 1)[1].split("</tr>", 1)[0]
    assert "data-over-cap" in listed and "above capability" in text(listed)
