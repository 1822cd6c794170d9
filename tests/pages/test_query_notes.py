"""A list page's ``?sort=`` and ``?page=``, and a pods table's ``?pod_page=``, that cannot be used as
asked: the page shows what it can (the default order, the nearest page) and says so, quoting the
value escaped; values used as asked add no note."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import text

pytestmark = pytest.mark.usefixtures("demo_cache")

JOB = "/jobs/research/bad-config/"  # two pods: one page


def _notes(page: str, marker: str = "data-query-note") -> list[str]:
    return [text(m).strip() for m in re.findall(rf"<p[^>]*{marker}[^>]*>(.*?)</p>", page, re.S)]


@pytest.mark.parametrize("url", ["/jobs/", "/podgroups/", "/nodes/", "/cronjobs/"])
def test_an_unknown_sort_says_the_list_is_in_its_default_order(client, url):
    page = client.get(url, {"sort": "-bogus"}).content.decode()
    (note,) = _notes(page)
    assert note.startswith("Unknown sort “-bogus”: sorted by ") and "Sorts: " in note
    assert not _notes(client.get(url).content.decode())
    assert not _notes(client.get(url, {"sort": "-name"}).content.decode())


def test_a_hostile_sort_is_quoted_escaped(client):
    page = client.get("/jobs/", {"sort": "<b>x</b>"}).content.decode()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert _notes(page)[0].startswith("Unknown sort “<b>x</b>”")


@pytest.mark.parametrize(
    ("asked", "shown"), [("99999999999999999999", None), ("-5", 1), ("abc", 1), ("0", 1), ("1.5", 1)]
)
def test_a_page_that_does_not_exist_says_which_page_is_shown(client, asked, shown):
    page = client.get("/jobs/", {"page": asked}).content.decode()
    (note,) = _notes(page)
    pages = int(re.search(r"showing page \d+ of (\d+)", note).group(1))
    assert note == f"There is no page “{asked}”: showing page {shown or pages} of {pages}."
    assert not _notes(client.get("/jobs/", {"page": "1"}).content.decode())


def test_a_pods_table_page_that_does_not_exist_says_so(client):
    for asked in ("2", "-5", "abc", "99999999999999999999"):
        page = client.get(JOB, {"pod_page": asked}).content.decode()
        assert _notes(page, "data-pod-page-note") == [f"There is no page “{asked}”: showing page 1 of 1."], (
            asked
        )
    assert not _notes(client.get(JOB, {"pod_page": "1"}).content.decode(), "data-pod-page-note")
    assert not _notes(client.get(JOB).content.decode(), "data-pod-page-note")


def test_hidden_characters_in_a_quoted_value_are_written_out(client):
    page = client.get("/jobs/", {"sort": "\u202ename"}).content.decode()
    (note,) = _notes(page)
    assert "\u202e" not in page and note.startswith("Unknown sort “U+202Ename”")
    page = client.get("/jobs/", {"page": "\x001"}).content.decode()
    assert "\x00" not in page and _notes(page)[0].startswith("There is no page “U+00001”")


@pytest.mark.parametrize("asked", ["１", "+1", " 1", "1 ", "0_1", "١"])
def test_a_page_number_is_ascii_digits_only(client, asked):
    # int() reads each of these as 1 (the page shown): only ASCII digits count as asked.
    (note,) = _notes(client.get("/jobs/", {"page": asked}).content.decode())
    assert note.startswith("There is no page “") and ": showing page 1 of " in note
