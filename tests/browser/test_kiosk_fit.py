"""The kiosk on real screen sizes in headless Chromium: one screen, no scrollbar, every panel a
real share of the height, no row cut by its panel (rows that do not fit are left out whole on the
server, with a "+ N more"), and the demo's over-quota queues on the board. Screenshots go to
tests/artifacts/kiosk-<width>x<height>.png."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser

# Every visible row-like element of each panel, with its box and its panel's box.
_BOXES = """() => [...document.querySelectorAll('[data-panel]')].map(p => {
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height};
  };
  const rows = [...p.querySelectorAll('li, tr, h3, .kiosk-more')]
    .filter(e => e.getClientRects().length > 0)
    .map(e => ({text: e.textContent.trim().slice(0, 40), box: box(e)}));
  return {panel: p.dataset.panel, box: box(p), rows: rows};
})"""

# (width, height, a "may be out of date" notice above the board): the smallest screen also with
# the notice, which takes a line of the height the lists were cut for.
SIZES = [(1280, 720, False), (1280, 720, True), (1280, 800, False), (1920, 1080, False)]


@pytest.mark.parametrize(
    ("width", "height", "notice"), SIZES, ids=[f"{w}x{h}{'-notice' if n else ''}" for w, h, n in SIZES]
)
def test_kiosk_fits_the_screen_with_every_panel_and_whole_rows(live_dashboard, browser, width, height, notice):
    base, cluster, cache = live_dashboard
    if notice:
        # As the informer marks a kind whose watch broke (the data stays on the board).
        # A long error: the notice stays one line (the lists were cut for one).
        cache.store("events").set_state("stale", error="watch dropped: " + "connection reset by peer; " * 12)
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(15000)
        page.goto(base + "/kiosk/")
        page.locator('tr[data-queue="root"]').wait_for()
        if notice:
            assert page.locator(".notice").first.is_visible()
            assert page.locator(".notice").first.bounding_box()["height"] < 40
        assert page.evaluate("document.documentElement.scrollHeight") <= height  # no scrollbar
        panels = {p["panel"]: p for p in page.evaluate(_BOXES)}
        assert set(panels) == {"jobs", "podgroups", "attention", "queues", "warnings"}
        for name, panel in panels.items():
            box = panel["box"]
            # The counts hold at least one row of tiles; the lists a real share of the screen.
            assert box["h"] >= (80 if name in ("jobs", "podgroups") else 120), (name, box)
            assert box["y"] >= 0 and box["y"] + box["h"] <= height + 0.5, (name, box)
            for row in panel["rows"]:
                r = row["box"]
                inside = r["y"] >= box["y"] - 0.5 and r["y"] + r["h"] <= box["y"] + box["h"] + 0.5
                assert inside, f"{name}: row {row['text']!r} cut by its panel ({r} in {box})"
        # The demo's over-quota queues are on the board (and, above, not cut by their panel).
        for over in ("research", "research-nlp"):
            assert page.locator(f'tr[data-queue="{over}"]').is_visible()
        assert page.locator("[data-panel] a").count() == 0  # a wall display: no links, no controls
        screenshot(page, f"kiosk-{width}x{height}{'-notice' if notice else ''}", full_page=False)
    finally:
        context.close()
