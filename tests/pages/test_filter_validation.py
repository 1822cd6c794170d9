"""List filters: label selectors follow the Kubernetes grammar; unknown phases get a hint; an
htmx request for a fragment a page does not have is a 400."""

from __future__ import annotations

import pytest

from dashboard.presenters.selectors import SelectorError, parse_selector, selector_matches
from tests.pages.helpers import text


@pytest.fixture
def cache(memory_cache):
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(kind).mark_synced()
    memory_cache.store("jobs").upsert(
        {
            "metadata": {
                "name": "j",
                "namespace": "ml",
                "uid": "u",
                "resourceVersion": "2",
                "labels": {"team": "ml"},
            },
            "spec": {"queue": "default"},
            "status": {"state": {"phase": "Running"}},
        }
    )
    return memory_cache


@pytest.mark.parametrize(
    "bad",
    [
        "!!",
        "a!=b,c notin ()",
        "x in ()",
        "-a=b",
        "a=b!",
        "a=-b",
        "Example.com/a=b",
        "/a",
        "a/",
        "a=" + "x" * 64,
        "k" * 64,
    ],
)
def test_invalid_selectors_are_rejected(bad):
    with pytest.raises(SelectorError):
        parse_selector(bad)


@pytest.mark.parametrize(
    "good,labels,match",
    [
        ("team=ml", {"team": "ml"}, True),
        ("example.com/team in (ml, ops),!legacy", {"example.com/team": "ops"}, True),
        ("a=,b", {"a": "", "b": "x"}, True),
        ("a!=b", {"a": "b"}, False),
        ("tier notin (x)", {}, True),
    ],
)
def test_valid_selectors_still_parse(good, labels, match):
    assert selector_matches(labels, parse_selector(good)) is match


@pytest.mark.parametrize("bad", ["!!", "a%21%3Db%2Cc+notin+()"])
def test_bad_selector_gets_the_notice_and_matches_nothing(client, cache, bad):
    page = client.get(f"/jobs/?selector={bad}").content.decode()
    assert "The label selector is not valid" in text(page)
    assert 'href="/jobs/ml/j/"' not in page


def test_unknown_phase_hint_but_literal_filter(client, cache):
    page = text(client.get("/jobs/?phase=Bogus").content.decode())
    assert "Unknown phase Bogus" in page and "Known phases: Pending" in page
    page = text(client.get("/podgroups/?phase=Bogus").content.decode())
    assert "Unknown phase Bogus" in page
    page = text(client.get("/jobs/?phase=Running").content.decode())
    assert "Unknown phase" not in page


@pytest.mark.parametrize("value", ["running", "RUNNING", "rUnNiNg"])
def test_known_phase_in_any_case_filters_by_the_canonical_phase(client, cache, value):
    cache.store("podgroups").upsert(
        {
            "metadata": {"name": "pg", "namespace": "ml", "uid": "pgu", "resourceVersion": "3"},
            "spec": {"queue": "default", "minMember": 1},
            "status": {"phase": "Running"},
        }
    )
    for url, row in (
        (f"/jobs/?phase={value}", 'href="/jobs/ml/j/"'),
        (f"/podgroups/?phase={value}", 'href="/podgroups/ml/pg/"'),
    ):
        page = client.get(url).content.decode()
        assert "Unknown phase" not in text(page), url
        assert row in page, url
    # A genuinely unknown phase is still filtered literally, with the hint.
    page = client.get("/jobs/?phase=runnin").content.decode()
    assert "Unknown phase runnin" in text(page) and 'href="/jobs/ml/j/"' not in page


@pytest.mark.parametrize("url", ["/", "/jobs/", "/queues/", "/podgroups/", "/jobs/ml/j/", "/kiosk/"])
def test_unknown_fragment_is_400(client, cache, url):
    resp = client.get(url + "?f=bogus", headers={"HX-Request": "true"})
    assert resp.status_code == 400, url
    assert b"bogus" in resp.content and b"<html" not in resp.content
    # Without htmx the parameter is ignored: the whole page.
    assert client.get(url + "?f=bogus").status_code == 200
