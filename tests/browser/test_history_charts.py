"""Headless Chromium: a Queue's usage chart, its sparkline on /queues/ and the /usage/ bars in the
light and the dark theme: drawn, their values in a table, in the theme's colours, and those colours
readable against the page (WCAG's 3:1 for graphics)."""

from __future__ import annotations

import pytest

from dashboard.history.recorder import RecorderOptions
from dashboard.history.service import HistoryService, override_service
from dashboard.volcano.phases import job_phase
from tests.browser.conftest import screenshot, serve_dashboard
from tests.history.conftest import drop_alias, sqlite_alias
from tests.history.helpers import add_nodes, gpu_job, settle

pytestmark = pytest.mark.browser

# The contrast of ``selector``'s colour ``prop`` against the first opaque background behind it.
_CONTRAST = """([selector, prop]) => {
  const el = document.querySelector(selector);
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  let node = el, bg = null;
  while (node && node.nodeType === 1) {
    const c = rgb(getComputedStyle(node).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.99)) { bg = c.slice(0, 3); break; }
    node = node.parentElement;
  }
  bg = bg || [255, 255, 255];
  const fg = rgb(getComputedStyle(el)[prop]).slice(0, 3);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return {colour: getComputedStyle(el)[prop], ratio: (hi + 0.05) / (lo + 0.05)};
}"""


@pytest.fixture
def history_dashboard(sim_cluster, make_live_cache, tmp_path, django_db_blocker, monkeypatch):
    """Job "train" (2 pods x 1 GPU) recorded for an hour into SQLite, and the dashboard serving it."""
    # Playwright's sync API keeps an event loop on this thread; the recorder's steps here are
    # plain blocking calls that Django would otherwise refuse beside it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    add_nodes(sim_cluster)
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "h.sqlite3")
        cache = make_live_cache(sim_cluster)
        service = HistoryService(
            cache, alias, RecorderOptions(flush_seconds=0, sample_seconds=60), clock=sim_cluster.clock.now
        )
        rec = service.recorder
        cache.add_listener(rec.listener)
        rec.step()
        gpu_job(sim_cluster, "train", replicas=2, seconds=None)

        def running(snap):
            job = snap.jobs.get("default", "train")
            return job is not None and job_phase(job) == "Running"

        settle(cache, sim_cluster, running, rec)
        for _ in range(60):
            sim_cluster.advance(60)
            rec.step()
        rec.step(force_flush=True)
        base, stop = serve_dashboard(cache, sim_cluster.clock)
        try:
            with override_service(service):
                yield base
        finally:
            stop()
            drop_alias(alias)


def _look(browser, base: str, scheme: str) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(15000)
    seen: dict = {}
    try:
        page.goto(base + "/queues/default/?window=24h")
        chart = page.locator('figure[data-chart="nvidia.com/gpu"]')
        assert chart.locator("svg.chart-svg").is_visible()
        assert chart.locator("polyline.chart-line-a").count() >= 1
        # The values as a table (inside a <details>: present for screen readers, opened on demand).
        assert chart.locator("details.chart-values table tbody tr").count() >= 4  # an hour in 15 min spans
        chart.locator("details.chart-values summary").click()
        assert chart.locator("details.chart-values table").is_visible()
        seen["line"] = page.evaluate(
            _CONTRAST, ['figure[data-chart="nvidia.com/gpu"] polyline.chart-line-a', "stroke"]
        )
        screenshot(page, f"queue-history-{scheme}")

        page.goto(base + "/queues/")
        spark = page.locator('tr[data-queue="default"] svg[data-sparkline]')
        assert spark.is_visible()
        assert "now 2, peak 2" in (spark.get_attribute("aria-label") or "")
        seen["spark"] = page.evaluate(
            _CONTRAST, ['tr[data-queue="default"] svg[data-sparkline] polyline', "stroke"]
        )

        page.goto(base + "/usage/?window=24h&by=queue")
        assert page.locator("svg[data-bars]").first.is_visible()
        assert page.locator("table[data-usage] tbody tr").count() >= 1
        seen["bar"] = page.evaluate(_CONTRAST, ["svg[data-bars] rect.chart-bar", "fill"])
        screenshot(page, f"usage-{scheme}")
    finally:
        context.close()
    return seen


def test_history_charts_read_in_both_themes(history_dashboard, browser):
    light = _look(browser, history_dashboard, "light")
    dark = _look(browser, history_dashboard, "dark")
    for part in ("line", "spark", "bar"):
        assert light[part]["colour"] != dark[part]["colour"], part
        for theme in (light, dark):
            assert theme[part]["ratio"] >= 3.0, (part, theme[part])
