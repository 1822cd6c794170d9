"""Headless Chromium on the Jobs list: two phases ticked and applied are both kept (in the address,
the table, the chips and the form after a reload); a pending Job's folded events table opens."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def _phases_of_rows(page) -> set[str]:
    return {t.strip() for t in page.locator("tr[data-job] td.status .badge span").all_inner_texts()}


def test_two_ticked_phases_are_applied_and_kept(live_dashboard, page):
    base, _cluster, _cache = live_dashboard
    page.goto(base + "/jobs/")
    every = page.locator("tr[data-job]").count()
    assert len(_phases_of_rows(page)) > 2
    form = page.locator("form.filters")
    form.get_by_label("Pending", exact=True).check()
    form.get_by_label("Failed", exact=True).check()
    form.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r".*phase=Pending.*phase=Failed.*"))
    assert parse_qs(urlsplit(page.url).query)["phase"] == ["Pending", "Failed"]
    expect(page.locator(".phase-filter a.is-active[aria-current]")).to_have_count(2)
    assert _phases_of_rows(page) == {"Pending", "Failed"}
    assert page.locator("tr[data-job]").count() < every
    screenshot(page, "jobs-two-phases")

    # The page the address gives (a reload, a shared link) shows both chosen.
    page.reload()
    assert form.get_by_label("Pending", exact=True).is_checked()
    assert form.get_by_label("Failed", exact=True).is_checked()
    assert not form.get_by_label("Running", exact=True).is_checked()
    assert _phases_of_rows(page) == {"Pending", "Failed"}

    # A chosen chip takes its phase out again.
    page.locator('.phase-filter li[data-phase="Failed"] a').click()
    page.wait_for_url(re.compile(r".*phase=Pending(?!.*phase=Failed).*$"))
    assert _phases_of_rows(page) == {"Pending"}


def test_a_pending_jobs_events_table_is_folded_and_opens(live_dashboard, page):
    base, _cluster, _cache = live_dashboard
    page.goto(base + "/jobs/team-nlp/bert-pretrain-xl/")
    fold = page.locator("details.events-fold")
    expect(fold).to_have_count(1)
    table = fold.locator("table.events")
    assert not table.is_visible()
    fold.locator("summary").click()
    expect(table).to_be_visible()
