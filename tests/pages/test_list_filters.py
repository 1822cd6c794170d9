"""The Jobs and PodGroups filters do what they show: several phases through the form, chips that add
and remove a phase, the Active preset, the needs-a-look-first order and one form for both lists."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from dashboard.volcano import phases as vp
from dashboard.volcano import states as vs
from tests.pages.helpers import jobs, phase, podgroups

pytestmark = pytest.mark.usefixtures("demo_cache")


class _Form(HTMLParser):
    """The fields of the page's filter form: [(tag, type, name, value, checked/selected, placeholder)]."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside = False
        self.select: str | None = None
        self.fields: list[tuple[str, str, str, str, bool, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and "filters" in (a.get("class") or ""):
            self.inside = True
        if not self.inside:
            return
        if tag == "input":
            self.fields.append(
                (
                    "input",
                    a.get("type") or "text",
                    a.get("name") or "",
                    a.get("value") or "",
                    "checked" in a,
                    a.get("placeholder") or "",
                )
            )
        elif tag == "select":
            self.select = a.get("name") or ""
        elif tag == "option" and self.select is not None:
            self.fields.append(("option", "", self.select, a.get("value") or "", "selected" in a, ""))

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None
        elif tag == "form":
            self.inside = False


def form_fields(page: str) -> list[tuple[str, str, str, str, bool, str]]:
    parser = _Form()
    parser.feed(page)
    return parser.fields


def submitted(page: str, tick: set[str] = frozenset()) -> list[tuple[str, str]]:
    """What the browser sends when the form is applied with the ``tick`` phases checked as well."""
    pairs = []
    for tag, typ, name, value, on, _placeholder in form_fields(page):
        chosen = tag == "option" and on
        ticked = tag == "input" and typ == "checkbox" and (on or value in tick)
        typed = tag == "input" and typ in ("search", "text")
        if chosen or ticked or typed:
            pairs.append((name, value))
    return pairs


def checked_phases(page: str) -> list[str]:
    return [f[3] for f in form_fields(page) if f[1] == "checkbox" and f[2] == "phase" and f[4]]


def selected_sort(page: str) -> str:
    return next(f[3] for f in form_fields(page) if f[0] == "option" and f[2] == "sort" and f[4])


def job_rows(page: str) -> list[str]:
    return re.findall(r'<tr data-job="([^"]+)"', page)


def pg_rows(page: str) -> list[str]:
    return re.findall(r'<tr data-podgroup="([^"]+)"', page)


def chip_href(page: str, phase_name: str) -> str:
    m = re.search(
        rf'<li data-phase="{re.escape(phase_name)}" data-count="\d+">\s*<a [^>]*href="([^"]*)"', page
    )
    assert m, f"no chip for {phase_name}"
    return html.unescape(m.group(1))


def chip_active(page: str, phase_name: str) -> bool:
    m = re.search(rf'<li data-phase="{re.escape(phase_name)}" data-count="\d+">\s*<a class="([^"]*)"', page)
    return bool(m) and "is-active" in m.group(1)


def key(obj: dict) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def get(client, url: str) -> str:
    resp = client.get(url)
    assert resp.status_code == 200, url
    return resp.content.decode()


def test_two_phases_ticked_in_the_form_are_both_applied_and_kept(client, demo_cluster):
    page = get(client, "/jobs/")
    assert checked_phases(page) == []
    query = submitted(page, tick={"Pending", "Running"})
    assert [v for k, v in query if k == "phase"] == ["Pending", "Running"]
    result = get(client, "/jobs/?" + urlencode(query))
    expected = {key(j) for j in jobs(demo_cluster) if phase(j) in ("Pending", "Running")}
    assert set(job_rows(result)) == expected
    assert {phase(j) for j in jobs(demo_cluster) if key(j) in expected} == {"Pending", "Running"}
    # The form and the chips show both as chosen; applying again keeps them.
    assert checked_phases(result) == ["Pending", "Running"]
    assert chip_active(result, "Pending") and chip_active(result, "Running")
    again = get(client, "/jobs/?" + urlencode(submitted(result)))
    assert checked_phases(again) == ["Pending", "Running"] and set(job_rows(again)) == expected


def test_a_chip_adds_its_phase_and_a_chosen_chip_removes_it(client, demo_cluster):
    page = get(client, "/jobs/?phase=Pending&ns=team-nlp")
    add = chip_href(page, "Running")
    assert parse_qs(urlsplit(add).query) == {"phase": ["Pending", "Running"], "ns": ["team-nlp"]}
    both = get(client, "/jobs/" + add)
    assert set(job_rows(both)) == {
        key(j) for j in jobs(demo_cluster, "team-nlp") if phase(j) in ("Pending", "Running")
    }
    # A chosen chip is marked removable and takes its phase out, leaving the other filters.
    assert 'title="Remove from the filter"' in both
    remove = chip_href(both, "Pending")
    assert parse_qs(urlsplit(remove).query) == {"phase": ["Running"], "ns": ["team-nlp"]}
    only = get(client, "/jobs/" + remove)
    assert set(job_rows(only)) == {key(j) for j in jobs(demo_cluster, "team-nlp") if phase(j) == "Running"}
    assert checked_phases(only) == ["Running"]
    # Removing the last one lists every phase again.
    assert "phase" not in parse_qs(urlsplit(chip_href(only, "Running")).query)


@pytest.mark.parametrize(
    ("url", "rows", "objects", "phase_of", "active"),
    [
        ("/jobs/", job_rows, jobs, phase, vp.ACTIVE_JOB_PHASES),
        ("/podgroups/", pg_rows, podgroups, vp.podgroup_phase, vp.ACTIVE_PODGROUP_PHASES),
    ],
)
def test_the_active_preset_selects_every_non_final_phase(
    client, demo_cluster, url, rows, objects, phase_of, active
):
    assert set(active) == (
        set(vp.JOB_PHASES) - vp.FINAL_JOB_PHASES
        if url == "/jobs/"
        else {
            "Pending",
            "Inqueue",
            "Running",
            "Unknown",
        }
    )
    page = get(client, url)
    m = re.search(r'<li data-preset="active"><a class="([^"]*)" href="([^"]*)"', page)
    assert m and "is-active" not in m.group(1)
    preset = get(client, url + html.unescape(m.group(2)))
    assert parse_qs(urlsplit(html.unescape(m.group(2))).query)["phase"] == list(active)
    expected = {key(o) for o in objects(demo_cluster) if phase_of(o) in active}
    assert expected and set(rows(preset)) == expected
    assert checked_phases(preset) == list(active)
    assert re.search(r'<li data-preset="active"><a class="[^"]*is-active', preset)


def test_jobs_default_to_needs_a_look_first_and_say_so(client, demo_cluster):
    page = get(client, "/jobs/")
    by_key = {key(j): j for j in jobs(demo_cluster)}
    ranks = [vs.attention_rank(vs.job_attention(by_key[k])) for k in job_rows(page)]
    assert ranks == sorted(ranks) and len(ranks) == len(by_key)
    first = by_key[job_rows(page)[0]]
    assert phase(first) == "Pending"
    # Waiting, failing and stuck-prone Jobs all come before any finished one.
    classes = [vs.job_attention(by_key[k]) for k in job_rows(page)]
    last_live = max(i for i, c in enumerate(classes) if c in ("waiting", "failing", "in_transition"))
    assert all(c not in ("failed", "stopped", "finished") for c in classes[: last_live + 1])
    assert "failing" in classes and "finished" in classes
    # The order is shown (the Order control and a note) and changeable; the other orders stay.
    assert selected_sort(page) == "attention"
    assert "data-sort-note" in page and "Needs a look first:" in page
    by_age = get(client, "/jobs/?sort=age")
    assert selected_sort(by_age) == "age" and "data-sort-note" not in by_age
    created = [by_key[k]["metadata"]["creationTimestamp"] for k in job_rows(by_age)]
    assert created == sorted(created, reverse=True)
    values = [f[3] for f in form_fields(page) if f[0] == "option" and f[2] == "sort"]
    assert {"attention", "name", "-name", "age", "-age", "inphase", "failed", "-retries"} <= set(values)
    # A sort header keeps working and the control follows it.
    assert selected_sort(get(client, "/jobs/?sort=-name")) == "-name"


def test_podgroups_default_to_needs_a_look_first(client, demo_cluster):
    page = get(client, "/podgroups/")
    by_key = {key(g): g for g in podgroups(demo_cluster)}
    ranks = [vs.attention_rank(vs.podgroup_attention(by_key[k])) for k in pg_rows(page)]
    assert ranks == sorted(ranks) and selected_sort(page) == "attention"


def test_the_podgroups_form_has_the_controls_and_placeholders_of_the_jobs_form(client):
    def controls(page: str) -> list[tuple]:
        # Every control but the values the list supplies (its phases, namespaces, queues, sorts).
        return sorted(
            {(tag, typ, name, placeholder) for tag, typ, name, _v, _on, placeholder in form_fields(page)}
        )

    jobs_page, pgs_page = get(client, "/jobs/"), get(client, "/podgroups/")
    assert controls(jobs_page) == controls(pgs_page)
    names = {c[2] for c in controls(jobs_page)}
    assert {"q", "ns", "queue", "phase", "selector", "sort"} <= names
    phase_boxes = [f[3] for f in form_fields(pgs_page) if f[1] == "checkbox"]
    assert phase_boxes == list(vp.PODGROUP_PHASES)
    assert [f[3] for f in form_fields(jobs_page) if f[1] == "checkbox"] == list(vp.JOB_PHASES)
    for page in (jobs_page, pgs_page):
        assert '<li data-preset="active">' in page


def test_several_phases_survive_the_results_fragment(client, demo_cluster):
    from tests.pages.helpers import check_fragment

    page = get(client, "/jobs/?phase=Failed&phase=Aborted")
    body = check_fragment(client, page, "results")
    assert set(job_rows(body)) == {key(j) for j in jobs(demo_cluster) if phase(j) in ("Failed", "Aborted")}
    assert chip_active(body, "Failed") and chip_active(body, "Aborted")


def test_the_order_follows_a_changed_job_while_unchanged_ones_keep_their_sort_values():
    from django.test import RequestFactory

    from dashboard.views import listing
    from dashboard.views.jobs import JOB_LIST

    def job(name, job_phase):
        return {
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-11-29T09:00:00Z"},
            "spec": {"queue": "q"},
            "status": {"state": {"phase": job_phase, "lastTransitionTime": "2026-11-29T10:00:00Z"}},
        }

    objs = [job("a", "Completed"), job("b", "Running"), job("c", "Completed")]
    lq = listing.ListQuery(
        RequestFactory().get("/jobs/"),
        JOB_LIST.sorts,
        default_sort="attention",
        known_phases=JOB_LIST.known_phases,
    )
    assert lq.sort == "attention"
    first, _counts = listing.filtered(lambda: objs, ("jobs", "order-test"), 1, lq, JOB_LIST)
    assert [o["metadata"]["name"] for o in first] == ["b", "a", "c"]
    objs[2] = job("c", "Pending")  # a new dict, as the cache publishes a changed object
    second, _counts = listing.filtered(lambda: objs, ("jobs", "order-test"), 2, lq, JOB_LIST)
    assert [o["metadata"]["name"] for o in second] == ["c", "b", "a"]
