"""Values out of their range (the schemas admit them, no controller writes them): an Event last seen
at epoch 0, an Event count of -3, a container restartCount of -1. Each page shows the value as
written, marked invalid, never a different plausible one (the creation time, 1, 0)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from dashboard.presenters.pods import pod_row
from dashboard.volcano.pods import pod_display_status, restart_count_invalid
from tests.pages.helpers import kind, text

EPOCH = "1970-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def invalid(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=31, name="invalid") as pair:
        yield pair


def _create(pair, group: str, plural: str, view: str, obj: dict, namespace: str) -> None:
    cluster, cache = pair
    if cluster.store.try_get(kind("", "namespaces"), None, namespace) is None:
        cluster.store.create(kind("", "namespaces"), {"metadata": {"name": namespace}})
    cluster.store.create(kind(group, plural), obj, namespace, replay=True)
    name = obj["metadata"]["name"]
    cache.wait_for(lambda s: getattr(s, view).get(namespace, name) is not None, timeout=10)


def _pod(pair, ns: str, restart_count: object) -> None:
    cluster, _cache = pair
    created = (cluster.clock.now() - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": ns, "uid": f"uid-{ns}", "creationTimestamp": created},
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "busybox"}],
            "nodeName": "node-0",
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "c", "ready": True, "restartCount": restart_count, "state": {"running": {}}}
            ],
        },
    }
    _create(pair, "", "pods", "pods", pod, ns)


def _event(pair, ns: str, name: str, **fields) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": ns},
        "type": "Warning",
        "reason": "Odd",
        "message": f"{name} message",
        **fields,
    }
    _create(pair, "", "events", "events", event, ns)


def _event_row(page: str, name: str) -> str:
    card = page.split('id="frag-events"', 1)[1].split("</section>", 1)[0]
    return next(r for r in re.findall(r"<tr\b.*?</tr>", card, re.S) if f"{name} message" in r)


def test_an_event_time_at_epoch_zero_is_shown_as_written_not_as_its_creation_time(invalid, client):
    cluster, _cache = invalid
    ns = "inv-time"
    _pod(invalid, ns, 0)
    _event(invalid, ns, "old", firstTimestamp=EPOCH, lastTimestamp=EPOCH, count=2)
    # The creation time (which the cache reads as now) is no stand-in for the time written.
    stored = cluster.store.try_get(kind("", "events"), ns, "old")
    assert stored["metadata"].get("creationTimestamp")
    for url in (f"/pods/{ns}/p/", "/"):
        row = _event_row(client.get(url).content.decode(), "old")
        shown = text(row)
        assert "ago" not in shown and "just now" not in shown, (url, shown)
        assert shown.count(f"{EPOCH} (not a valid time)") == 2, (url, shown)


def test_a_negative_event_count_is_shown_as_written(invalid, client):
    ns = "inv-count"
    _pod(invalid, ns, 0)
    ts = invalid[0].clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    _event(invalid, ns, "neg", firstTimestamp=ts, lastTimestamp=ts, count=-3)
    for url in (f"/pods/{ns}/p/", "/"):
        row = _event_row(client.get(url).content.decode(), "neg")
        cell = re.search(r'<td class="num">(.*?)</td>', row, re.S).group(1)
        assert text(cell).strip() == "-3 (not a count)", (url, cell)


def test_a_negative_restart_count_is_shown_as_written_not_as_zero(invalid, client):
    ns = "inv-restarts"
    _pod(invalid, ns, -1)
    page = client.get(f"/pods/{ns}/p/").content.decode()
    summary = page.split("Restarts</dt><dd>", 1)[1].split("</dd>", 1)[0]
    assert text(summary).strip() == "-1 (not a count)", summary
    containers = page.split('id="ctr-title"', 1)[1].split("</section>", 1)[0]
    assert "-1 (not a count)" in text(containers)
    # The pods table of the gang pages reads the same row.
    stored = invalid[0].store.try_get(kind("", "pods"), ns, "p")
    assert pod_row(stored).restarts_invalid == "-1"


@pytest.mark.parametrize(
    ("value", "shown"), [(-1, "-1"), (1.5, "1.5"), ("x", "x"), (True, "True"), (0, ""), ("3", ""), (None, "")]
)
def test_restart_count_invalid(value, shown):
    cs = {"name": "c", "restartCount": value}
    assert restart_count_invalid(cs) == shown
    pod = {"spec": {"containers": [{"name": "c"}]}, "status": {"containerStatuses": [cs]}}
    assert pod_display_status(pod).restarts_invalid == shown
