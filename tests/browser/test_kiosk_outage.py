"""The kiosk during an API outage (the simulator's fault switches: every request fails and the
watches drop), in headless Chromium on the screens it is made for: the notice that the data is
not current is whole, at the kiosk's text floor, not covered or clipped by the panels, and the
panels still show."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_kiosk_readable import READABLE, _check_readable, _open
from tests.pages.helpers import sim_faults

pytestmark = pytest.mark.browser

# Each notice's text boxes and whether they are whole: not cut by an ellipsis or an overflow,
# inside the viewport, and not under a panel of the board.
_NOTICES = """() => [...document.querySelectorAll('.notice')]
  .filter(n => n.getClientRects().length).map(n => {
  const r = n.getBoundingClientRect();
  const parts = [n, ...n.querySelectorAll('*')].filter(e => e.getClientRects().length);
  const cut = parts.filter(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1
    || getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth);
  const panels = [...document.querySelectorAll('.kiosk-panel, .kiosk-row, .kiosk-head')].filter(p => {
    const b = p.getBoundingClientRect();
    return b.width && b.left < r.right && r.left < b.right
      && b.top < r.bottom - 0.5 && r.top < b.bottom - 0.5;
  });
  const texts = parts.filter(e => [...e.childNodes].some(c => c.nodeType === 3 && c.textContent.trim()));
  const size = Math.min(...texts.map(e => parseFloat(getComputedStyle(e).fontSize)));
  return {text: n.textContent.trim().replace(/\\s+/g, ' '), top: r.top, bottom: r.bottom, left: r.left,
          right: r.right, height: r.height, size, cut: cut.map(e => e.className || e.tagName),
          under: panels.map(p => p.className)};
})"""


@pytest.fixture
def outage(live_dashboard):
    base, cluster, cache = live_dashboard
    sim_faults(cluster, error_rate=1.0, drop_watches=True)
    try:
        cache.wait_for(lambda s: all(v.state.name != "synced" for v in s.views().values()), timeout=30)
        yield base
    finally:
        sim_faults(cluster, error_rate=0.0)


@pytest.mark.parametrize(("width", "height", "floor"), READABLE, ids=[f"{w}x{h}" for w, h, _f in READABLE])
def test_the_outage_notice_is_whole_and_readable_above_the_panels(outage, browser, width, height, floor):
    context, page = _open(browser, outage + "/kiosk/", width, height)
    try:
        page.locator(".notice").first.wait_for()
        screenshot(page, f"kiosk-outage-{width}x{height}", full_page=False)
        notices = page.evaluate(_NOTICES)
        assert notices, "no notice during the outage"
        for n in notices:
            assert "out of date" in n["text"] or "unreachable" in n["text"], n
            assert "Last synced" in n["text"], n  # since when the data is not current
            assert n["size"] >= floor - 0.01, n
            assert n["cut"] == [], n
            assert n["under"] == [], n
            assert n["top"] >= 0 and n["bottom"] <= height and n["left"] >= 0 and n["right"] <= width, n
            assert n["height"] >= floor, n
        # The panels still show, whole, at the floor.
        _check_readable(page, width, height, floor)
        assert page.locator(".kiosk-panel.attention").is_visible()
    finally:
        context.close()
