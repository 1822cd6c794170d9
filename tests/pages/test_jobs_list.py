"""The Jobs list: columns, server-side filters in the query string, sort, paging, fragment refresh."""

from __future__ import annotations

import re

import pytest

from dashboard.views import listing
from tests.pages.helpers import check_fragment, jobs, phase, phase_count, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def rows(page: str) -> list[str]:
    return re.findall(r'<tr data-job="([^"]+)"', page)


def test_it_lists_every_job_with_its_status_queue_and_gang(client, demo_cluster):
    page = client.get("/jobs/").content.decode()
    expected = {f"{j['metadata']['namespace']}/{j['metadata']['name']}" for j in jobs(demo_cluster)}
    assert set(rows(page)) == expected
    assert f"{len(expected)} Jobs match" in text(page)
    # Links: Job detail and its Queue.
    assert 'href="/jobs/team-nlp/bert-pretrain-xl/"' in page
    assert 'href="/queues/research-nlp/"' in page
    # Gang bar running/minAvailable of a running job.
    yolo = next(j for j in jobs(demo_cluster, "team-vision") if j["metadata"]["name"] == "yolo-finetune")
    row = page.split('data-job="team-vision/yolo-finetune"')[1].split("</tr>")[0]
    status = yolo["status"]
    assert f"<strong>{status.get('running', 0)}</strong>/{status['minAvailable']}" in row
    assert "Running" in row


def test_health_hints_name_crashlooping_pods_and_unschedulable_gangs(client):
    page = client.get("/jobs/").content.decode()
    crash = page.split('data-job="team-vision/augment-crashloop"')[1].split("</tr>")[0]
    assert re.search(r"\d pods? CrashLoopBackOff", crash)
    pending = page.split('data-job="team-nlp/bert-pretrain-xl"')[1].split("</tr>")[0]
    assert "Pending" in pending


def test_filters_by_namespace_queue_phase_text_and_label_selector(client, demo_cluster):
    nlp = {f"team-nlp/{j['metadata']['name']}" for j in jobs(demo_cluster, "team-nlp")}
    assert set(rows(client.get("/jobs/?ns=team-nlp").content.decode())) == nlp

    in_queue = {
        f"{j['metadata']['namespace']}/{j['metadata']['name']}"
        for j in jobs(demo_cluster)
        if j["spec"].get("queue") == "research-nlp"
    }
    assert set(rows(client.get("/jobs/?queue=research-nlp").content.decode())) == in_queue

    pending = {
        f"{j['metadata']['namespace']}/{j['metadata']['name']}"
        for j in jobs(demo_cluster)
        if phase(j) == "Pending"
    }
    page = client.get("/jobs/?phase=Pending").content.decode()
    assert set(rows(page)) == pending
    # The phase chips still count every phase under the other filters.
    assert phase_count(page, "Running") == sum(1 for j in jobs(demo_cluster) if phase(j) == "Running")

    assert set(rows(client.get("/jobs/?q=BERT").content.decode())) == {"team-nlp/bert-pretrain-xl"}

    platform = {f"platform/{j['metadata']['name']}" for j in jobs(demo_cluster, "platform")}
    page = client.get("/jobs/?selector=volcano-ui.demo/team%3Dplatform").content.decode()
    assert set(rows(page)) == platform
    page = client.get("/jobs/?selector=volcano-ui.demo/team+in+(platform,research),!missing").content.decode()
    assert set(rows(page)) == platform | {
        f"research/{j['metadata']['name']}" for j in jobs(demo_cluster, "research")
    }


def test_a_bad_selector_says_so_and_matches_nothing(client):
    page = client.get("/jobs/?selector=team+in+(a").content.decode()
    assert "The label selector is not valid" in page
    assert rows(page) == []


def test_sort_is_stable_and_reversible(client):
    by_name = rows(client.get("/jobs/?sort=name").content.decode())
    names = [r.split("/", 1)[1] for r in by_name]
    assert names == sorted(names)
    assert rows(client.get("/jobs/?sort=-name").content.decode())[0] == by_name[-1]
    # The same request twice gives the same order (ties broken by namespace/name).
    assert rows(client.get("/jobs/?sort=phase").content.decode()) == rows(
        client.get("/jobs/?sort=phase").content.decode()
    )
    # An unknown sort key falls back to the default instead of failing.
    assert client.get("/jobs/?sort=bogus").status_code == 200


def test_pagination_keeps_the_filters(client, monkeypatch, demo_cluster):
    monkeypatch.setattr(listing, "PAGE_SIZE", 5)
    first = client.get("/jobs/?sort=name&ns=team-nlp").content.decode()
    second = client.get("/jobs/?sort=name&ns=team-nlp&page=2").content.decode()
    assert len(rows(first)) == 5
    assert not set(rows(first)) & set(rows(second))
    assert "ns=team-nlp" in re.search(r'href="([^"]*page=2[^"]*)"', first).group(1)
    assert client.get("/jobs/?page=999").status_code == 200
    assert client.get("/jobs/?page=abc").status_code == 200


def test_results_fragment_keeps_the_query_and_skips_when_unchanged(client):
    page = client.get("/jobs/?ns=team-nlp&sort=name").content.decode()
    body = check_fragment(client, page, "results")
    assert set(rows(body)) == set(rows(page))
    assert "ns=team-nlp" in body
