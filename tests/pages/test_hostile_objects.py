"""Property-based: any object the CRD schemas admit renders, escaped, with no 500.

Objects are built within the schemas (names are DNS subdomains up to the 253-character limit; the
free-text fields — labels, annotations, queue references, task names, images, messages, reasons,
phases — carry hostile strings: HTML, script, quotes, unicode, control characters), loaded into a
simulated cluster with its controllers off, read by a live cache, then every page and fragment of
the dashboard is requested.
"""

from __future__ import annotations

import itertools
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.hidden import find_hidden
from dashboard.volcano import phases
from tests.pages.helpers import fragment_url, kind, with_version

MARKERS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</textarea><svg onload=alert(1)>",
    "{{ 7*7 }}{% now 'Y' %}",
    "' onmouseover='alert(1)",
    "&lt;b&gt;",
    "\u202eevil",
    "名字🔥",
    "\x00\x1f",
]
FORBIDDEN = ["<script>alert", "<img src=x", "<svg onload", "onmouseover='alert"]

hostile = st.one_of(
    st.sampled_from(MARKERS),
    st.text(max_size=40),
    st.builds(lambda a, b: a + b, st.sampled_from(MARKERS), st.text(max_size=10)),
)
label_key = st.from_regex(r"\A[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?(/[a-z0-9]{1,10})?\Z")
_alnum = string.ascii_lowercase + string.digits
dns_label = st.builds(
    lambda a, m, z: a + m + z,
    st.sampled_from(_alnum),
    st.text(alphabet=_alnum + "-", max_size=20),
    st.sampled_from(_alnum),
)
dns_name = st.one_of(dns_label, st.just("a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61))
quantity = st.sampled_from(["500M", "16k", "1500m", "0", "4Gi", "1", "2.5", "1e3", "100Mi", "7"])
# ResourceList keys and values are free text to the CRD schemas: a value that is no quantity is
# shown verbatim.
resources = st.dictionaries(
    st.one_of(st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods", "example.com/fpga"]), hostile),
    st.one_of(quantity, quantity, quantity, hostile),
    max_size=4,
)
timestamp = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "2026-11-29T09:00:00Z",
            "2026-11-29T10:00:00.123456Z",
            "1970-01-01T00:00:00Z",
            "2030-01-01T00:00:00Z",
        ]
    ),
)
phase = st.one_of(st.sampled_from(phases.JOB_PHASES + phases.PODGROUP_PHASES), hostile)
counter = st.one_of(st.none(), st.integers(min_value=-3, max_value=10**6))

_seq = itertools.count()


def _drop_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


@st.composite
def bundles(draw):
    n = next(_seq)
    ns = f"hostile-{n}"
    job_name = draw(dns_name)
    queue_name = draw(st.one_of(dns_name, st.just("default")))
    labels = draw(st.dictionaries(label_key, hostile, max_size=3))
    annotations = draw(st.dictionaries(label_key, hostile, max_size=3))
    task_name = draw(hostile)
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": job_name,
            "namespace": ns,
            "labels": labels,
            "annotations": annotations,
            "creationTimestamp": draw(timestamp),
            "uid": f"uid-{n}",
        },
        "spec": {
            "queue": draw(st.one_of(st.just(queue_name), hostile)),
            "schedulerName": draw(hostile),
            "priorityClassName": draw(hostile),
            "minAvailable": draw(counter),
            "tasks": [
                {
                    "name": task_name,
                    "replicas": draw(st.integers(0, 5)),
                    "template": {"spec": {"containers": [{"name": "c", "image": draw(hostile)}]}},
                    "policies": [{"event": draw(hostile), "action": draw(hostile)}],
                }
            ],
            "plugins": {draw(hostile): [draw(hostile)]},
        },
    }
    if draw(st.booleans()):
        job["status"] = {
            "state": _drop_none(
                {
                    "phase": draw(phase),
                    "reason": draw(hostile),
                    "message": draw(hostile),
                    "lastTransitionTime": draw(timestamp),
                }
            ),
            **_drop_none(
                {
                    "running": draw(counter),
                    "pending": draw(counter),
                    "failed": draw(counter),
                    "minAvailable": draw(counter),
                    "retryCount": draw(counter),
                }
            ),
            "taskStatusCount": {task_name: {"phase": {draw(hostile): draw(st.integers(0, 9))}}},
            "conditions": [_drop_none({"status": draw(phase), "lastTransitionTime": draw(timestamp)})],
        }
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": f"{job_name[:200]}-pg",
            "namespace": ns,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": draw(st.one_of(st.sampled_from(["Job", "Deployment", "StatefulSet"]), hostile)),
                    "name": job_name,
                    "uid": f"uid-{n}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "minMember": draw(st.integers(0, 10)),
            "queue": queue_name,
            "priorityClassName": draw(hostile),
            "minResources": draw(resources),
            "minTaskMember": {draw(hostile): draw(st.integers(0, 5))},
        },
        "status": _drop_none(
            {
                "phase": draw(phase),
                "running": draw(counter),
                "conditions": [
                    _drop_none(
                        {
                            "type": draw(st.one_of(st.sampled_from(["Unschedulable", "Scheduled"]), hostile)),
                            "status": draw(st.one_of(st.just("True"), hostile)),
                            "reason": draw(hostile),
                            "message": draw(hostile),
                            "lastTransitionTime": draw(timestamp),
                        }
                    )
                ],
            }
        ),
    }
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": queue_name if queue_name != "default" else f"q-{n}", "annotations": annotations},
        "spec": {
            "weight": draw(st.integers(1, 65535)),
            "parent": draw(st.one_of(st.just("root"), hostile)),
            "dequeueStrategy": draw(hostile),
            "capability": draw(resources),
            "deserved": draw(resources),
            "guarantee": {"resource": draw(resources)},
        },
        "status": _drop_none(
            {
                "state": draw(st.one_of(st.sampled_from(["Open", "Closed", "Closing"]), hostile)),
                "allocated": draw(resources),
            }
        ),
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job_name[:200]}-0",
            "namespace": ns,
            # Without the task label the task comes from the (free-text) annotation.
            "labels": {
                "volcano.sh/job-name": job_name,
                **draw(st.sampled_from([{}, {"volcano.sh/task-spec": "t"}])),
            },
            "annotations": {
                "scheduling.k8s.io/group-name": pg["metadata"]["name"],
                "volcano.sh/task-spec": task_name,
            },
        },
        "spec": {"containers": [{"name": "c", "image": draw(hostile)}], "nodeName": draw(hostile)},
        "status": {
            "phase": draw(hostile),
            "reason": draw(hostile),
            "podIP": draw(hostile),
            "conditions": [
                {"type": "PodScheduled", "status": "False", "message": draw(hostile)},
                {"type": draw(hostile), "status": draw(hostile), "reason": draw(hostile)},
            ],
            "containerStatuses": [
                {
                    "name": draw(hostile),
                    "ready": draw(st.booleans()),
                    "restartCount": draw(st.integers(0, 99)),
                    "state": {"waiting": {"reason": draw(hostile), "message": draw(hostile)}},
                    "lastState": {
                        "terminated": {"reason": draw(hostile), "exitCode": draw(st.integers(-1, 255))}
                    },
                }
            ],
        },
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"ev-{n}", "namespace": ns},
        "involvedObject": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": job_name,
            "namespace": ns,
            "uid": f"uid-{n}",
        },
        "type": draw(st.sampled_from(["Warning", "Normal", "Other"])),
        "reason": draw(hostile),
        "message": draw(hostile),
        **draw(
            st.sampled_from(
                [
                    {
                        "eventTime": "2026-11-29T10:00:00.000001Z",
                        "series": {"count": 3, "lastObservedTime": "2026-11-29T10:01:00.5Z"},
                    },
                    {
                        "firstTimestamp": "2026-11-29T09:59:00Z",
                        "lastTimestamp": "2026-11-29T10:00:00Z",
                        "count": 9,
                    },
                    {},
                ]
            )
        ),
    }
    return ns, job, pg, queue, pod, event


@pytest.fixture(scope="module")
def hostile_cluster(tmp_path_factory):
    pytest.importorskip(
        "dashboard.sim.cluster", reason="the simulated cluster (dashboard.sim) is not available"
    )
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=1, name="hostile") as pair:
        yield pair


def _load(cluster, cache, ns, job, pg, queue, pod, event) -> None:
    store = cluster.store
    store.create(kind("", "namespaces"), {"metadata": {"name": ns}})
    if store.try_get(kind("scheduling.volcano.sh", "queues"), None, queue["metadata"]["name"]) is None:
        store.create(kind("scheduling.volcano.sh", "queues"), queue, replay=True)
    store.create(kind("batch.volcano.sh", "jobs"), job, ns, replay=True)
    store.create(kind("scheduling.volcano.sh", "podgroups"), pg, ns, replay=True)
    store.create(kind("", "pods"), pod, ns, replay=True)
    store.create(kind("", "events"), event, ns, replay=True)
    cache.wait_for(
        lambda s: (
            s.events.get(ns, event["metadata"]["name"]) is not None
            and s.pods.get(ns, pod["metadata"]["name"]) is not None
        ),
        timeout=10,
    )


def _assert_safe(resp) -> None:
    assert resp.status_code in (200, 204, 404), resp.status_code
    body = resp.content.decode()
    for bad in FORBIDDEN:
        assert bad not in body, bad
    # No hidden control character (dashboard/hidden.py: C0/C1 controls other than tab, newline and
    # carriage return, bidi marks, embeddings, overrides and isolates) reaches an HTML page: every
    # field a cluster can fill shows them as markers. No page embeds cluster text in a <script> or
    # JSON block, so the whole body is checked.
    if resp.status_code in (200, 404) and resp.get("Content-Type", "").startswith("text/html"):
        found = find_hidden(body)
        if found:
            at = body.index(found[0])
            near = body[max(0, at - 200) : at + 80]
            raise AssertionError(f"hidden {found[0]!r} reaches {resp.request['PATH_INFO']} near {near!r}")


def _urls(ns, job, pg, queue, pod):
    from django.urls import reverse

    jn, pn, qn = job["metadata"]["name"], pg["metadata"]["name"], queue["metadata"]["name"]
    return [
        "/",
        "/jobs/",
        f"/jobs/?ns={ns}",
        "/jobs/?q=%3Cscript%3E&selector=a%3D%3Cb%3E",
        "/queues/",
        "/podgroups/",
        "/kiosk/",
        "/kiosk/?rotate=5",
        reverse("job_detail", args=[ns, jn]),
        reverse("podgroup_detail", args=[ns, pn]),
        reverse("queue_detail", args=[qn]),
        reverse("pod_detail", args=[ns, pod["metadata"]["name"]]),
        reverse("queue_detail", args=[job["spec"]["queue"]])
        if job["spec"]["queue"] and "/" not in job["spec"]["queue"]
        else "/queues/x/",
    ]


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(bundle=bundles())
def test_every_page_and_fragment_renders_escaped(hostile_cluster, client, bundle):
    cluster, cache = hostile_cluster
    ns, job, pg, queue, pod, event = bundle
    _load(cluster, cache, ns, job, pg, queue, pod, event)
    for url in _urls(ns, job, pg, queue, pod):
        resp = client.get(url)
        _assert_safe(resp)
        if resp.status_code != 200:
            continue
        page = resp.content.decode()
        for frag in re.findall(r'id="frag-([a-z]+)" hx-get=', page):
            _assert_safe(
                client.get(with_version(fragment_url(page, frag), "x"), headers={"HX-Request": "true"})
            )
    detail = client.get(f"/jobs/{ns}/{job['metadata']['name']}/")
    assert detail.status_code == 200
    # The hostile values are on the page, escaped (not dropped).
    for value in job["metadata"]["labels"].values():
        if value == "<script>alert(1)</script>":
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail.content.decode()


@pytest.mark.parametrize(
    "path",
    [
        "/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E/x/",
        "/queues/%22%3E%3Cimg%20src%3Dx%3E/",
        "/podgroups/ns/%3Csvg%20onload%3Dalert(1)%3E/",
        "/pods/a/b/",
        "/nope/",
    ],
)
def test_hostile_addresses_are_escaped_404s(hostile_cluster, client, path):
    resp = client.get(path)
    assert resp.status_code == 404
    _assert_safe(resp)


def test_reveal_marks_hidden_controls_and_escapes():
    from dashboard.templatetags.volcano import reveal

    assert reveal(None) == ""
    assert reveal("plain <b>") == "plain &lt;b&gt;"
    out = reveal("ok \u202eevil\u202c\x00<i>")
    for hidden in ("\u202e", "\u202c", "\x00"):
        assert hidden not in out
    assert 'title="RIGHT-TO-LEFT OVERRIDE">U+202E</span>' in out
    assert 'title="NULL">U+0000</span>' in out  # C0 controls by their control names
    assert "&lt;i&gt;" in out
    # Right-to-left text itself is not a control: it stays as written.
    assert reveal("שלום") == "שלום"
    # Tab, newline and carriage return are ordinary whitespace: kept, and not reported.
    assert reveal("a\tb\nc\r") == "a\tb\nc\r"
    assert find_hidden("a\tb\nc\r\u05e9") == []
    assert find_hidden("Runn\u200bing\u2060\ufeff\U000e0041") == ["\u200b", "\u2060", "\ufeff", "\U000e0041"]
    assert find_hidden("\x00x\u202e\x85\u2069\x1b") == ["\x00", "\u202e", "\x85", "\u2069", "\x1b"]
    # Our own markup (a SafeString) is kept; a lazy translation is read as its text.
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext_lazy

    assert (
        reveal(mark_safe("<b>\u202ex</b>"))
        == '<b><span class="ctl" title="RIGHT-TO-LEFT OVERRIDE">U+202E</span>x</b>'
    )
    assert reveal(gettext_lazy("a<b")) == "a&lt;b"


def test_every_format_character_is_hidden():
    """Every character Unicode puts in category Cf (format) is marked, whatever this Python's Unicode
    version adds, and none of ordinary text is."""
    import sys
    import unicodedata

    format_chars = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert [f"U+{ord(c):04X}" for c in format_chars if not find_hidden(c)] == []
    assert find_hidden("Running 运行中 é ü ש 🙂") == []


def test_bidi_override_and_nul_show_as_markers_on_the_pages(hostile_cluster, client):
    cluster, cache = hostile_cluster
    ns, name = "reveal-ns", "reveal-job"
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "uid": "uid-reveal", "labels": {"team": "a\u2066b"}},
        "spec": {"queue": "default", "minAvailable": 1, "tasks": [{"name": "t", "replicas": 1}]},
        "status": {
            "state": {
                "phase": "\u202egninnuR",
                "reason": "Held\u202e",
                "message": "quota \u202eroxe\u202c ok",
            }
        },
    }
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"{name}-pg", "namespace": ns},
        "spec": {"minMember": 1, "queue": "default"},
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "Unschedulable",
                    "status": "True",
                    "reason": "NotEnoughResources",
                    "message": "0/3\u2067 nodes",
                }
            ],
        },
    }
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-t-0",
            "namespace": ns,
            "labels": {"volcano.sh/job-name": name},
            "annotations": {"scheduling.k8s.io/group-name": f"{name}-pg"},
        },
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending"},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "ev-reveal", "namespace": ns},
        "involvedObject": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": name,
            "namespace": ns,
        },
        "type": "Warning",
        "reason": "Odd",
        "message": "before\x00after",
        "firstTimestamp": "2026-11-29T09:59:00Z",
        "lastTimestamp": "2026-11-29T10:00:00Z",
        "count": 1,
    }
    _load(cluster, cache, ns, job, pg, queue, pod, event)
    cache.wait_for(
        lambda s: s.jobs.get(ns, name) is not None and s.podgroups.get(ns, f"{name}-pg") is not None,
        timeout=10,
    )
    response = client.get(f"/jobs/{ns}/{name}/")
    assert response.status_code == 200, response.status_code
    body = response.content.decode()
    for hidden in ("\u202e", "\u202c", "\u2066", "\x00"):
        assert hidden not in body, repr(hidden)
    for marker in ("U+202E", "U+202C", "U+2066", "U+0000"):
        assert f">{marker}</span>" in body, marker
    assert "roxe" in body and "before" in body and "after" in body  # the text around them is kept
    # A phase spelled backwards behind an override cannot pass for "Running" in its badge.
    assert 'title="RIGHT-TO-LEFT OVERRIDE">U+202E</span>gninnuR' in body
    pg_body = client.get(f"/podgroups/{ns}/{name}-pg/").content.decode()
    assert "\u2067" not in pg_body and ">U+2067</span>" in pg_body

    # The rarer free-text fields, each with its own C0 control so that each field's marker is told
    # apart: queue parent, dequeueStrategy and ResourceList names and values; a PodGroup's owner
    # kind, conditions, priorityClassName and minResources; a Job's schedulerName and
    # priorityClassName; a pod's task annotation, conditions, last state and IP; an event's
    # involvedObject; and the query values the list pages and the kiosk echo.
    _load_rare_fields(cluster, cache, ns)
    html_markers = {
        "/queues/reveal-q/": ["\x08", "\x0e", "\x0f", "\x10", "\x11"],
        "/queues/": ["\x08", "\x10", "\x11"],
        "/": ["\x11", "\x1d"],
        "/kiosk/": ["\x1d"],
        "/kiosk/?rotate=5%E2%80%AE": ["\u202e"],
        f"/podgroups/{ns}/reveal-pg2/": ["\x0f", "\x10", "\x11", "\x12", "\x13", "\x14", "\x15", "\x16"],
        "/podgroups/?queue=reveal-q": ["\x12"],
        f"/jobs/{ns}/reveal-job2/": ["\x01", "\x02", "\x03", "\x17"],
        f"/pods/{ns}/reveal-job2-t-0/": ["\x17", "\x18", "\x19", "\x1a", "\x1b"],
        # The filters as typed, echoed: the unknown phase and the selector's error as markers.
        "/jobs/?q=%04&selector=a%3D%05&phase=%06x&ns=%07&queue=%01q": ["\x05", "\x06"],
        "/podgroups/?q=%04&selector=a%3D%05&phase=%06x&queue=%01q": ["\x05", "\x06"],
    }
    for url, chars in html_markers.items():
        page = client.get(url)
        assert page.status_code == 200, (url, page.status_code)
        body = page.content.decode()
        assert not find_hidden(body), (url, find_hidden(body))
        for char in chars:
            assert f">U+{ord(char):04X}</span>" in body, (url, char)
    # In attributes and <option>s, where markup cannot go: the plain U+XXXX form.
    for url in ("/jobs/?q=%04&selector=a%3D%05&phase=%06x&ns=%07&queue=%01q", "/podgroups/?q=%04&queue=%01q"):
        body = client.get(url).content.decode()
        assert 'name="q" value="U+0004"' in body, url
        assert '<option value="U+0001q" selected>U+0001q</option>' in body, url
    assert '<option value="U+0007" selected>U+0007</option>' in client.get("/jobs/?ns=%07").content.decode()
    # The kiosk ranks a queue whose parent is missing first, and names the parent for kiosk.js.
    assert 'data-parent="paU+0008r"' in client.get("/kiosk/").content.decode()
    # That echoed queue filter selects the Job whose spec.queue it stands for.
    for url in ("/jobs/?queue=%01q", "/jobs/?queue=U%2B0001q"):
        assert f'data-job="{ns}/reveal-job2"' in client.get(url).content.decode(), url
    # A poll of a page whose object is gone: the name from the address in the notice.
    gone = client.get(f"/jobs/{ns}/gone%1F/?f=status&v=x", headers={"HX-Request": "true"})
    assert gone.status_code == 404 and ">U+001F</span>" in gone.content.decode()
    assert not find_hidden(gone.content.decode())


def _load_rare_fields(cluster, cache, ns: str) -> None:
    store = cluster.store
    queues = kind("scheduling.volcano.sh", "queues")
    if store.try_get(queues, None, "reveal-q") is None:
        store.create(
            queues,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": "reveal-q"},
                "spec": {
                    "weight": 1,
                    "parent": "pa\x08r",
                    "dequeueStrategy": "d\x0e",
                    "capability": {"cpu": "\x0f9", "ex\x10/res": "1"},
                },
                "status": {"state": "Open", "allocated": {"cpu": "\x11"}},
            },
            replay=True,
        )
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "reveal-job2", "namespace": ns, "uid": "uid-reveal2"},
        "spec": {
            "queue": "\x01q",
            "schedulerName": "s\x02",
            "priorityClassName": "p\x03",
            "minAvailable": 1,
            "tasks": [{"name": "t", "replicas": 1}],
        },
        "status": {"state": {"phase": "Running"}},
    }
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "reveal-pg2",
            "namespace": ns,
            "ownerReferences": [
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Wid\x12get",
                    "name": "w",
                    "uid": "u",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "minMember": 1,
            "queue": "reveal-q",
            "priorityClassName": "pc\x15",
            "minResources": {"cpu": "1", "ex\x10/res": "2", "memory": "m\x16"},
        },
        "status": {"phase": "Pending", "conditions": [{"type": "Odd\x13", "status": "Tr\x14ue"}]},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "reveal-job2-t-0",
            "namespace": ns,
            "labels": {"volcano.sh/job-name": "reveal-job2"},
            "annotations": {"scheduling.k8s.io/group-name": "reveal-pg2", "volcano.sh/task-spec": "t\x17"},
        },
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.\x1b",
            "conditions": [{"type": "Ready\x18", "status": "F\x19"}],
            "containerStatuses": [
                {
                    "name": "c",
                    "restartCount": 1,
                    "lastState": {"terminated": {"reason": "OOM\x1a", "exitCode": 1}},
                }
            ],
        },
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "ev-reveal2", "namespace": ns},
        # The cache keeps events of Volcano kinds and cached pods only: the kind is never free text.
        "involvedObject": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "g\x1d",
            "namespace": ns,
        },
        "type": "Warning",
        "reason": "Odd",
        "message": "m",
        # Newer than any event the hypothesis test loads: the overview and kiosk list the newest.
        "lastTimestamp": "2026-11-29T10:05:00Z",
        "count": 1,
    }
    for group, plural, obj in (
        ("batch.volcano.sh", "jobs", job),
        ("scheduling.volcano.sh", "podgroups", pg),
        ("", "pods", pod),
        ("", "events", event),
    ):
        if store.try_get(kind(group, plural), ns, obj["metadata"]["name"]) is None:
            store.create(kind(group, plural), obj, ns, replay=True)
    cache.wait_for(
        lambda s: (
            s.queues.get(None, "reveal-q") is not None
            and s.events.get(ns, "ev-reveal2") is not None
            and s.pods.get(ns, "reveal-job2-t-0") is not None
            and s.podgroups.get(ns, "reveal-pg2") is not None
            and s.jobs.get(ns, "reveal-job2") is not None
        ),
        timeout=10,
    )
