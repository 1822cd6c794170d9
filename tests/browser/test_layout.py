"""Layout in a real browser: no page scrolls sideways on a 390px phone, the top bar keeps one line
from 800 to 1440px, copy buttons copy, the Queues list shows the demo's queues (11 and more) on one
1440×900 screen, the Jobs list offers the columns it hides. With VOLCANO_UI_UPDATE_SCREENSHOTS=1 it also
writes docs/screenshots/<page>-<variant>.png: every page's first 1440×900 screen in the light and
dark themes and in Chinese (the kiosk's at 1920×1080)."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DOCS_SCREENSHOTS, DOCS_VIEWPORT, screenshot

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def _pages(cluster) -> dict[str, str]:
    """Every kind of page of the demo: name -> path."""
    from tests.pages.helpers import pods

    pod = next(p for p in pods(cluster, "team-nlp") if p["metadata"]["name"].startswith("llama-sft"))
    md = pod["metadata"]
    group = md["annotations"]["scheduling.k8s.io/group-name"]
    return {
        "overview": "/",
        "jobs": "/jobs/",
        "job-detail": "/jobs/team-nlp/bert-pretrain-xl/",
        "podgroups": "/podgroups/",
        "podgroup-detail": f"/podgroups/team-nlp/{group}/",
        "queues": "/queues/",
        "queue-detail": "/queues/research/",
        "pod-detail": f"/pods/team-nlp/{md['name']}/",
        "cronjobs": "/cronjobs/",
        "cronjob-detail": "/cronjobs/ml-platform/feature-refresh/",
        "jobflows": "/jobflows/",
        "jobflow-detail": "/jobflows/ml-platform/nightly-pipeline/",
        "jobtemplates": "/jobtemplates/",
        "jobtemplate-detail": "/jobtemplates/ml-platform/train/",
        "nodes": "/nodes/",
        "node-detail": "/nodes/h100-node-01/",
        "hypernodes": "/hypernodes/",
        "hypernode-detail": "/hypernodes/spine-gpu/",
        "usage": "/usage/",
        "kiosk": "/kiosk/",
    }


def test_no_page_scrolls_sideways_at_390px(live_dashboard, browser):
    base, cluster, _cache = live_dashboard
    context = browser.new_context(viewport=PHONE, color_scheme="light")
    page = context.new_page()
    try:
        for name, path in _pages(cluster).items():
            response = page.goto(base + path)
            assert response is not None and response.status == 200, (name, path)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (name, width)
            screenshot(page, f"phone-{name}", full_page=False)
        # The page links sit behind the menu, which opens without a script.
        page.goto(base + "/jobs/")
        assert page.locator(".mainnav").is_hidden()
        page.click(".navmenu > summary")
        expect(page.locator(".navmenu-links a[href='/queues/']")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        context.close()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_top_bar_keeps_one_line_at_desktop_widths(live_dashboard, browser, language):
    base, _cluster, _cache = live_dashboard
    context = browser.new_context(viewport=DOCS_VIEWPORT)
    host = base.split("//", 1)[1].split(":")[0]
    context.add_cookies([{"name": "django_language", "value": language, "domain": host, "path": "/"}])
    page = context.new_page()
    try:
        page.goto(base + "/nodes/")
        for width in (1440, 1280, 1024, 800):
            page.set_viewport_size({"width": width, "height": 900})
            bar = page.locator(".topbar")
            fits = "b => b.scrollHeight <= b.clientHeight + 1 && b.scrollWidth <= b.clientWidth"
            assert bar.evaluate(fits), width
            assert bar.evaluate("b => b.getBoundingClientRect().height") < 64, width  # 56px and its border
            links = page.locator(".mainnav > a, .mainnav > .navmore > summary")
            boxes = [links.nth(i).bounding_box() for i in range(links.count())]
            tops = {round(box["y"]) for box in boxes if box}
            assert len(tops) == 1, (width, tops)  # one row of links
            for selector in (".mainnav", ".tools"):
                box = page.locator(selector).bounding_box()
                assert box is not None and box["x"] + box["width"] <= width, (width, selector)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width
        # The kinds past the first four open from "More" without a script; the current one is marked.
        page.set_viewport_size(DOCS_VIEWPORT)
        more = page.locator(".navmore > summary")
        expect(more).to_have_class("is-current")
        more.click()
        expect(page.locator(".navmore-links a[href='/hypernodes/']")).to_be_visible()
        expect(page.locator(".navmore-links a[aria-current='page']")).to_have_attribute("href", "/nodes/")
        screenshot(page, f"topbar-more-{language}", full_page=False)
    finally:
        context.close()


def test_copy_buttons_copy_the_name_and_the_kubectl_command(live_dashboard, browser):
    base, _cluster, _cache = live_dashboard
    context = browser.new_context(viewport=DOCS_VIEWPORT, permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        page.goto(base + "/jobs/team-nlp/bert-pretrain-xl/")
        command = page.locator(".kubectl .copy-btn")
        expect(command).to_be_visible()  # shown by copy.js
        command.click()
        expect(command).to_have_attribute("data-copied", "1")
        assert page.evaluate("navigator.clipboard.readText()") == (
            "kubectl get vcjob -n team-nlp bert-pretrain-xl -o yaml"
        )
        page.locator(".name-line .copy-btn").click()
        expect(page.locator(".name-line .copy-btn")).to_have_attribute("data-copied", "1")
        assert page.evaluate("navigator.clipboard.readText()") == "bert-pretrain-xl"
        # The PodGroup's long name: one line, the full name on hover and in the clipboard.
        link = page.locator(".object-sub a[href^='/podgroups/']")
        full = link.get_attribute("title")
        assert full and full.startswith("bert-pretrain-xl-") and link.inner_text().replace("\n", "") == full
        box = link.bounding_box()
        assert box is not None and box["height"] < 30  # one line
        link.locator("xpath=following-sibling::button[1]").click()
        assert page.evaluate("navigator.clipboard.readText()") == full
    finally:
        context.close()


def test_copy_buttons_stay_hidden_without_javascript(live_dashboard, browser):
    base, _cluster, _cache = live_dashboard
    context = browser.new_context(viewport=DOCS_VIEWPORT, java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(base + "/jobs/team-nlp/bert-pretrain-xl/")
        assert page.locator(".copy-btn").first.is_hidden()
        assert (
            page.locator("[data-kubectl]").inner_text()
            == "kubectl get vcjob -n team-nlp bert-pretrain-xl -o yaml"
        )
    finally:
        context.close()


def test_the_queue_list_fits_the_demos_queues_on_one_screen(live_dashboard, page):
    base, cluster, _cache = live_dashboard
    from tests.pages.helpers import queues

    count = len(queues(cluster))
    assert count >= 11  # the demo's queues, hpc-training of its platform side among them
    page.goto(base + "/queues/")
    rows = page.locator("tr[data-queue]")
    expect(rows).to_have_count(count)
    last = rows.last.bounding_box()
    assert last is not None and last["y"] + last["height"] <= DOCS_VIEWPORT["height"]
    # No column scrolls out of the table's box at this width.
    assert page.locator(".table-wrap").evaluate("w => w.scrollWidth <= w.clientWidth")
    screenshot(page, "queues-1440x900", full_page=False)


def test_the_jobs_list_offers_the_columns_it_hides(live_dashboard, page):
    base, _cluster, _cache = live_dashboard
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(base + "/jobs/")
    note = page.locator("[data-cols-note]")
    expect(note).to_be_visible()
    assert "Succeeded, Tasks, Replicas" in note.inner_text()
    header = page.locator(".jobs-table thead th.col-opt").first
    assert header.is_hidden()
    note.locator("label").click()
    expect(header).to_be_visible()
    note.locator("label").click()
    expect(header).to_be_hidden()
    page.set_viewport_size(DOCS_VIEWPORT)
    page.set_viewport_size({"width": 1600, "height": 900})
    expect(note).to_be_hidden()  # nothing is hidden at this width


KIOSK_VIEWPORT = {"width": 1920, "height": 1080}
VARIANTS = {"light": ("light", "en"), "dark": ("dark", "en"), "zh-hans": ("light", "zh-hans")}


@pytest.mark.skipif(os.environ.get("VOLCANO_UI_UPDATE_SCREENSHOTS") != "1", reason="writes docs/screenshots/")
def test_every_page_screenshot(live_dashboard, browser):
    base, cluster, _cache = live_dashboard
    pages = _pages(cluster)
    for variant, (scheme, language) in VARIANTS.items():
        context = browser.new_context(viewport=DOCS_VIEWPORT, color_scheme=scheme)
        host = base.split("//", 1)[1].split(":")[0]
        context.add_cookies([{"name": "django_language", "value": language, "domain": host, "path": "/"}])
        page = context.new_page()
        try:
            for name, path in pages.items():
                # The kiosk on the wall screen it is made for; every other page on the docs' screen.
                page.set_viewport_size(KIOSK_VIEWPORT if name == "kiosk" else DOCS_VIEWPORT)
                page.goto(base + path)
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(DOCS_SCREENSHOTS / f"{name}-{variant}.png"), full_page=False)
        finally:
            context.close()


def test_the_pod_page_keeps_its_status_badge_at_the_top_right(live_dashboard, page):
    base, cluster, _cache = live_dashboard
    page.goto(base + _pages(cluster)["pod-detail"])
    for width in (1440, 1024, 800):
        page.set_viewport_size({"width": width, "height": 900})
        badge = page.locator(".object-state .badge").bounding_box()
        name = page.locator(".name-line").bounding_box()
        assert badge is not None and name is not None
        # Beside the name, on its line, at the right edge: not pushed under the links.
        assert badge["y"] < name["y"] + name["height"], width
        assert badge["x"] > name["x"] + name["width"], width
