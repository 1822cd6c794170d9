"""The pods table of a Job's and a PodGroup's page: a ``?pod_status=`` or ``?pod_task=`` that no pod
has still filters (literally, as the list pages' unknown phases do) and says so, naming the pods'
statuses or tasks; a status of the pods in another letter case means that status."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import check_fragment, text

JOB = "/jobs/research/bad-config/"  # two pods, task main, both Error


@pytest.fixture
def podgroup_url(client, demo_cache):
    """The page of pytorch-trial-11's PodGroup (three pods, tasks master and worker)."""
    page = client.get("/jobs/research/pytorch-trial-11/").content.decode()
    return re.search(r'href="(/podgroups/research/[^"/]+/)"', page).group(1)


def _pods_card(page: str) -> str:
    return re.search(r'<section class="card" aria-labelledby="pods-title".*?</section>', page, re.S).group(0)


def _note(page: str) -> str:
    found = re.search(r"<p[^>]*data-pod-filter-unmatched[^>]*>(.*?)</p>", page, re.S)
    return text(found.group(1)).strip() if found else ""


@pytest.mark.usefixtures("demo_cache")
def test_a_status_no_pod_has_filters_literally_and_says_so(client, podgroup_url):
    for base in (JOB, podgroup_url):
        resp = client.get(base, {"pod_status": "Bogus"})
        card = _pods_card(resp.content.decode())
        # The status chips (before the task chips), most pods first, as the notice names them.
        chips = re.search(r"data-pod-filter>(.*?)(?:<span class=\"muted\">Task|</div>)", card, re.S).group(1)
        statuses = ", ".join(re.findall(r'<a class="chip" href="[^"]*pod_status=(\w+)', chips))
        assert resp.status_code == 200 and statuses, base
        assert _note(card) == (
            f"No pod has status “Bogus”: filtering for it literally. The pods' statuses: {statuses}."
        ), base
        assert "No pods match the filter." in card and '<tr id="pod-' not in card, base
    card = _pods_card(client.get(podgroup_url, {"pod_task": "nope"}).content.decode())
    assert (
        _note(card) == "No pod has task “nope”: filtering for it literally. The pods' tasks: master, worker."
    )


@pytest.mark.usefixtures("demo_cache")
def test_a_task_no_pod_has_filters_literally_and_says_so(client):
    card = _pods_card(client.get(JOB, {"pod_task": "nope"}).content.decode())
    assert _note(card) == "No pod has task “nope”: filtering for it literally. The pods' tasks: main."
    assert "No pods match the filter." in card


@pytest.mark.usefixtures("demo_cache")
def test_both_filters_unmatched_give_one_notice(client):
    card = _pods_card(client.get(JOB, {"pod_status": "Running", "pod_task": "nope"}).content.decode())
    assert card.count("data-pod-filter-unmatched") == 1
    assert _note(card) == (
        "No pod has status “Running”: filtering for it literally. The pods' statuses: Error. "
        "No pod has task “nope”: filtering for it literally. The pods' tasks: main."
    )


@pytest.mark.usefixtures("demo_cache")
@pytest.mark.parametrize("asked", ["error", "ERROR", "Error"])
def test_a_status_of_the_pods_in_any_letter_case_is_that_status(client, asked):
    card = _pods_card(client.get(JOB, {"pod_status": asked}).content.decode())
    assert "data-pod-filter-unmatched" not in card
    assert len(re.findall(r'<tr id="pod-', card)) == 2
    assert re.search(r'<a class="chip" href="[^"]*pod_status=Error[^"]*" aria-current="true">', card)


@pytest.mark.usefixtures("demo_cache")
def test_a_hostile_filter_value_is_escaped(client):
    page = client.get(
        JOB, {"pod_status": "<script>alert(1)</script>\u202e", "pod_task": "<b>x"}
    ).content.decode()
    assert "<script>alert(1)</script>" not in page and "<b>x" not in page and "\u202e" not in page
    card = _pods_card(page)
    assert "“&lt;script&gt;alert(1)&lt;/script&gt;" in card and "U+202E" in card
    assert "No pod has task “&lt;b&gt;x”" in card


@pytest.mark.usefixtures("demo_cache")
def test_the_pods_fragment_carries_the_notice(client):
    page = client.get(JOB, {"pod_status": "Bogus"}).content.decode()
    body = check_fragment(client, page, "pods")
    assert "pod_status=Bogus" in re.search(r'id="frag-pods" hx-get="([^"]+)"', page).group(1)
    assert _note(body).startswith("No pod has status “Bogus”: filtering for it literally.")


@pytest.mark.usefixtures("demo_cache")
def test_no_notice_without_pods_or_for_a_status_they_have(client):
    assert "data-pod-filter-unmatched" not in client.get(JOB, {"pod_status": "Error"}).content.decode()
    # A Job without pods says it has none; a filter of its pods has nothing to name.
    empty = client.get("/jobs/research/flaky-simulation/", {"pod_status": "Bogus"}).content.decode()
    assert "data-pod-filter-unmatched" not in empty
