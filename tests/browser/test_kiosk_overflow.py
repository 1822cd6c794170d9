"""The kiosk's panels hold their text: no text box of a panel reaches past the panel's border, a
stuck Job's holder is shown after "Held by", and a Job whose phase is a long made-up string does
not push its line out of the attention panel (demo cluster, headless Chromium)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot
from tests.pages.helpers import kind

pytestmark = pytest.mark.browser

ODD_PHASE = "Exploding<script>alert(1)</script>" + "-and-still-exploding" * 6

# Every element of each panel that draws text of its own (a text node child), its box and the
# panel's box.
_TEXT_BOXES = """() => [...document.querySelectorAll('[data-panel]')].map(p => {
  const drawn = getComputedStyle(p).display === 'contents' ? p.parentElement : p;
  const b = drawn.getBoundingClientRect();
  const texts = [...p.querySelectorAll('*')]
    .filter(e => e.getClientRects().length > 0)
    .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .map(e => {
      const range = document.createRange();
      range.selectNodeContents(e);
      const r = range.getBoundingClientRect();
      // What an element clips (overflow hidden) is not drawn past it.
      const clip = e.getBoundingClientRect();
      let right = r.right;
      for (let a = e; a && a !== drawn; a = a.parentElement) {
        const cut = getComputedStyle(a).overflowX !== 'visible';
        if (cut) right = Math.min(right, a.getBoundingClientRect().right);
      }
      return {text: e.textContent.trim().slice(0, 50), left: r.left, right: right, w: clip.width};
    });
  return {panel: p.dataset.panel, left: b.left, right: b.right, texts: texts};
})"""


def _odd_job(cluster) -> None:
    at = cluster.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "odd-phase", "namespace": "research", "creationTimestamp": at},
        "spec": {"queue": "default", "tasks": []},
        "status": {"state": {"phase": ODD_PHASE, "lastTransitionTime": at}},
    }
    cluster.store.create(kind("batch.volcano.sh", "jobs"), job, "research", replay=True)


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_kiosk_panel_text_stays_inside_its_panel(live_dashboard, browser, width, height):
    base, cluster, cache = live_dashboard
    # The demo's sweep-restart holds Restarting on a pod stuck Terminating: stuck past
    # VOLCANO_UI_STUCK_SECONDS (600).
    cluster.advance(660)
    _odd_job(cluster)
    cache.wait_for(lambda s: (s.jobs.get("research", "odd-phase") or {}).get("status"), timeout=10)
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(15000)
        page.goto(base + "/kiosk/")
        page.wait_for_function("() => +document.documentElement.dataset.kioskFit >= 1")
        odd = page.locator('[data-group="unknown"] .att-phase')
        assert odd.count() >= 1 and odd.first.is_visible()
        holder = page.locator('[data-group="stuck"] code.att-holder').first
        assert holder.is_visible(), "the holder after 'Held by' is not shown"
        box = holder.bounding_box()
        assert box and box["width"] > 20 and box["height"] > 5, box
        assert "sweep-restart" in holder.inner_text()
        for panel in page.evaluate(_TEXT_BOXES):
            for t in panel["texts"]:
                inside = t["left"] >= panel["left"] - 0.5 and t["right"] <= panel["right"] + 0.5
                assert inside, f"{panel['panel']}: {t['text']!r} runs past the panel ({t} in {panel})"
        screenshot(page, f"kiosk-overflow-{width}x{height}", full_page=False)
    finally:
        context.close()
