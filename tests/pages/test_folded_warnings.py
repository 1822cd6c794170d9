"""Warnings folded by meaning on a gang's pages: Events of one object and reason whose messages
differ only in numbers are one row (counts summed, first and last seen, the newest message, the
variants behind a <details>), and a pending Job shows its warnings once."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest

from tests.pages.helpers import kind

JOBS = ("batch.volcano.sh", "jobs")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
QUEUES = ("scheduling.volcano.sh", "queues")
EVENTS = ("", "events")
VIEWS = {"jobs": "jobs", "podgroups": "podgroups", "queues": "queues", "events": "events"}

CPU = "0/{n} nodes are available: {n} Insufficient cpu."
# (message, count, seconds ago): the same meaning three times, and one that says something else.
WARNINGS = [
    (CPU.format(n=3), 2, 600),
    (CPU.format(n=4), 1, 300),
    (CPU.format(n=5), 4, 60),
    ("0/5 nodes are available: 5 Insufficient memory.", 1, 120),
]


@pytest.fixture(scope="module")
def folded(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=23, name="folded") as pair:
        yield pair


def _ago(cluster, seconds: float) -> str:
    return (cluster.clock.now() - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _create(pair, plural, obj, namespace=None):
    cluster, cache = pair
    if namespace and cluster.store.try_get(kind("", "namespaces"), None, namespace) is None:
        cluster.store.create(kind("", "namespaces"), {"metadata": {"name": namespace}})
    cluster.store.create(kind(*plural), obj, namespace, replay=True)
    view, name = VIEWS[plural[1]], obj["metadata"]["name"]
    cache.wait_for(lambda s: getattr(s, view).get(namespace, name) is not None, timeout=10)


def _job(pair, ns: str, job_phase: str) -> None:
    """A Job ``j`` in ``ns`` (its PodGroup Pending when the Job is) with the WARNINGS on its PodGroup."""
    cluster, _cache = pair
    _create(
        pair, QUEUES, {"metadata": {"name": f"q-{ns}"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
    )
    uid = f"uid-{ns}"
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": ns, "uid": uid, "creationTimestamp": _ago(cluster, 3600)},
        "spec": {"queue": f"q-{ns}", "minAvailable": 2, "tasks": [{"name": "worker", "replicas": 2}]},
        "status": {"state": {"phase": job_phase}, **({"running": 2} if job_phase == "Running" else {})},
    }
    _create(pair, JOBS, job, ns)
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "j",
        "uid": uid,
        "controller": True,
    }
    pg_phase = "Running" if job_phase == "Running" else "Inqueue"
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "j-pg", "namespace": ns, "uid": f"pg-{uid}", "ownerReferences": [owner]},
        "spec": {"minMember": 2, "queue": f"q-{ns}"},
        "status": {"phase": pg_phase, **({"running": 2} if job_phase == "Running" else {})},
    }
    _create(pair, PODGROUPS, pg, ns)
    for i, (message, count, seconds) in enumerate(WARNINGS):
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"j-pg.{i}", "namespace": ns},
            "involvedObject": {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "name": "j-pg",
                "namespace": ns,
                "uid": f"pg-{uid}",
            },
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": message,
            "count": count,
            # Seen since the first (the oldest variant) until ``seconds`` ago.
            "firstTimestamp": _ago(cluster, seconds + 30),
            "lastTimestamp": _ago(cluster, seconds),
        }
        _create(pair, EVENTS, event, ns)


class _Visible(HTMLParser):
    """The text a reader sees: the content of a closed <details> is hidden, its <summary> is not."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open <details>: is it open
        self.in_summary = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.stack.append("open" in dict(attrs))
        elif tag == "summary":
            self.in_summary += 1

    def handle_endtag(self, tag):
        if tag == "details" and self.stack:
            self.stack.pop()
        elif tag == "summary":
            self.in_summary -= 1

    def handle_data(self, data):
        hidden = [not o for o in self.stack]
        # Inside a closed details only its own summary shows (the innermost details' summary).
        if any(hidden[:-1]) or (hidden and hidden[-1] and not self.in_summary):
            return
        self.parts.append(data)


def visible(page: str) -> str:
    parser = _Visible()
    parser.feed(page)
    return re.sub(r"\s+", " ", " ".join(parser.parts))


def _events_card(page: str) -> str:
    return page.split('id="frag-events"', 1)[1].split("</section>", 1)[0]


def test_messages_that_differ_only_in_numbers_fold_into_one_row(folded, client):
    _job(folded, "fold-a", "Running")
    page = client.get("/jobs/fold-a/j/").content.decode()
    card = _events_card(page)
    rows = re.findall(r"<tr class=\"is-warning\">(.*?)</tr>", card, re.S)
    assert len(rows) == 2, rows  # the cpu ones folded, the memory one apart
    cpu = next(r for r in rows if "Insufficient cpu" in r)
    # The newest message, the summed count, the variants expandable (newest first).
    assert CPU.format(n=5) in cpu.split("<details", 1)[0]
    assert re.search(r'<td class="num">7</td>', cpu)
    assert "3 variants" in cpu and '<details class="variants"' in cpu
    variants = re.findall(r"<li data-variant><span class=\"msg\">([^<]*)</span>", cpu)
    assert variants == [CPU.format(n=5), CPU.format(n=4), CPU.format(n=3)]
    # First seen: the oldest variant's (10 min 30 s ago); last seen: the newest's (1 min ago).
    assert re.search(r"10m\d*s? ago|10m ago", cpu) and re.search(r"(1m|60s) ago", cpu)
    memory = next(r for r in rows if "Insufficient memory" in r)
    assert "variant" not in memory and re.search(r'<td class="num">1</td>', memory)
    # A running Job's events table is open: no folded table.
    assert "data-events-collapsed" not in card


def test_a_pending_job_shows_its_warnings_once(folded, client):
    _job(folded, "fold-b", "Pending")
    page = client.get("/jobs/fold-b/j/").content.decode()
    assert "Why is this Job pending?" in page
    seen = visible(page)
    # The why-pending panel lists each warning once; the events table is folded away.
    assert seen.count(CPU.format(n=5)) == 1, seen
    assert seen.count("Insufficient memory") == 1
    for n in (3, 4):
        assert CPU.format(n=n) not in seen
    why = page.split('id="why-title"', 1)[1].split("</section>", 1)[0]
    assert CPU.format(n=5) in why and "3 variants" in why and "7 times" in visible(why)
    card = _events_card(page)
    assert "data-events-collapsed" in card and re.search(
        r'<details class="events-fold"(?![^>]*\bopen\b)', card
    )
    assert "Show all 2 events" in visible(card)
    # The full list is still there, behind the summary.
    assert card.count('<tr class="is-warning">') == 2


def test_the_events_fragment_keeps_the_fold(folded, client):
    from tests.pages.helpers import check_fragment

    _job(folded, "fold-c", "Pending")
    page = client.get("/jobs/fold-c/j/").content.decode()
    body = check_fragment(client, page, "events")
    assert "data-events-collapsed" in body and "3 variants" in body
