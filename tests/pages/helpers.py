"""Small helpers for asserting on rendered pages."""

from __future__ import annotations

import html
import json
import re
import urllib.request
from datetime import timedelta

from django.urls import reverse


def kind(group: str, plural: str):
    from dashboard.sim.kinds import kind_for

    return kind_for(group, plural)


def iso(t) -> str:
    """A datetime as the API server writes timestamps (RFC 3339, seconds, UTC)."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def create_seen(cluster, cache, plural: tuple[str, str], obj: dict) -> None:
    """Create ``obj`` (its namespace first, when missing) in the simulated cluster and wait until
    the cache holds it. ``plural``: (API group, Snapshot view name), e.g. ("batch.volcano.sh", "jobs")."""
    ns = obj["metadata"].get("namespace")
    if ns and cluster.store.try_get(kind("", "namespaces"), None, ns) is None:
        cluster.store.create(kind("", "namespaces"), {"metadata": {"name": ns}})
    cluster.store.create(kind(*plural), obj, ns, replay=True)
    name = obj["metadata"]["name"]
    cache.wait_for(lambda s: getattr(s, plural[1]).get(ns, name) is not None, timeout=10)


def seen_job(
    cluster,
    cache,
    queue: str,
    ns: str,
    name: str,
    age: float = 0,
    phase: str = "Running",
    members: int = 1,
    **status,
) -> None:
    """Create a Volcano Job of ``queue``, created ``age`` seconds ago (simulated clock) and in
    ``phase`` since then, with one task of ``members`` replicas (its minAvailable, all running;
    ``status`` overrides the counts), and wait until the cache holds it."""
    at = iso(cluster.clock.now() - timedelta(seconds=age))
    obj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": at},
        "spec": {"queue": queue, "minAvailable": members, "tasks": [{"name": "w", "replicas": members}]},
        "status": {
            "state": {"phase": phase, "lastTransitionTime": at},
            "running": members,
            "failed": 0,
            **status,
        },
    }
    create_seen(cluster, cache, ("batch.volcano.sh", "jobs"), obj)


def seen_podgroup(
    cluster, cache, queue: str, ns: str, name: str, age: float, phase: str, members: int = 1
) -> None:
    """Create a PodGroup of ``queue`` with minMember ``members``, created ``age`` seconds ago
    (simulated clock), in ``phase``, and wait until the cache holds it."""
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": iso(cluster.clock.now() - timedelta(seconds=age)),
        },
        "spec": {"minMember": members, "queue": queue},
        "status": {"phase": phase},
    }
    create_seen(cluster, cache, ("scheduling.volcano.sh", "podgroups"), obj)


def store_list(cluster, group: str, plural: str, namespace: str | None = None) -> list[dict]:
    items, _rv = cluster.store.list(kind(group, plural), namespace)
    return items


def jobs(cluster, namespace=None):
    return store_list(cluster, "batch.volcano.sh", "jobs", namespace)


def podgroups(cluster, namespace=None):
    return store_list(cluster, "scheduling.volcano.sh", "podgroups", namespace)


def queues(cluster):
    return store_list(cluster, "scheduling.volcano.sh", "queues")


def pods(cluster, namespace=None):
    return store_list(cluster, "", "pods", namespace)


def phase(job: dict) -> str:
    return ((job.get("status") or {}).get("state") or {}).get("phase", "")


def job_named(cluster, namespace: str, name: str) -> dict:
    return next(j for j in jobs(cluster, namespace) if j["metadata"]["name"] == name)


def phase_count(page: str, phase_name: str) -> int | None:
    """The count shown on a phase card/chip carrying data-phase/data-count."""
    m = re.search(rf'data-phase="{re.escape(phase_name)}" data-count="(\d+)"', page)
    return int(m.group(1)) if m else None


def text(page: str) -> str:
    """Visible-ish text: tags dropped, entities decoded, whitespace collapsed."""
    no_tags = re.sub(r"<[^>]+>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(no_tags))


def fragment_version(page: str, fragment: str) -> str:
    """The ?v= version written into a fragment's hx-get."""
    m = re.search(rf'id="frag-{re.escape(fragment)}" hx-get="[^"]*?[?&amp;]*v=([0-9a-f]+)', page)
    assert m, f"fragment {fragment} has no versioned hx-get"
    return m.group(1)


def fragment_url(page: str, fragment: str) -> str:
    m = re.search(rf'id="frag-{re.escape(fragment)}" hx-get="([^"]+)"', page)
    assert m, f"fragment {fragment} not found"
    return html.unescape(m.group(1))


def url(name: str, *args: str) -> str:
    return reverse(name, args=args)


def with_version(frag_url: str, version: str) -> str:
    """``frag_url`` with its ?v= replaced (e.g. by a version the server has never issued)."""
    return re.sub(r"([?&])v=[^&]*", lambda m: f"{m.group(1)}v={version}", frag_url)


def check_fragment(client, page: str, fragment: str) -> str:
    """Assert the fragment of ``page`` answers 204 for the version the page carries, renders alone
    (no <html>) for any other version, and that the rendered copy's version is again "unchanged".
    Returns the rendered fragment."""
    frag_url = fragment_url(page, fragment)
    htmx = {"HX-Request": "true"}
    unchanged = client.get(frag_url, headers=htmx)
    assert unchanged.status_code == 204, (fragment, unchanged.status_code)
    assert "HX-Request" in unchanged["Vary"]
    resp = client.get(with_version(frag_url, "stale"), headers=htmx)
    assert resp.status_code == 200, (fragment, resp.status_code)
    body = resp.content.decode()
    assert "<html" not in body and f'id="frag-{fragment}"' in body
    assert "HX-Request" in resp["Vary"]
    assert client.get(fragment_url(body, fragment), headers=htmx).status_code == 204
    return body


def sim_faults(cluster, **switches) -> None:
    """Set the simulated API server's fault switches (``POST /_sim/faults``, admin token)."""
    req = urllib.request.Request(
        cluster.url + "/_sim/faults", data=json.dumps(switches).encode(), method="POST"
    )
    req.add_header("Authorization", f"Bearer {cluster.admin_token}")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200


def page_ok(client, url: str) -> str:
    """The page at ``url``, asserting it answered 200."""
    resp = client.get(url)
    assert resp.status_code == 200, (url, resp.status_code)
    return resp.content.decode()


def between(page: str, start: str, end: str) -> str:
    """The text of ``page`` after the first ``start``, up to the next ``end``."""
    return page.split(start)[1].split(end)[0]
