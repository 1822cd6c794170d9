"""Counter tile labels wrap between words or shrink, never inside a word: every word of a tile's
label ("Terminating", "ttlSecondsAfterFinished") draws on one line, at 1280 px in the dark theme."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# Each word of each label: the number of line boxes its text takes (1: whole on one line).
_WORDS = """(sel) => [...document.querySelectorAll(sel)]
  .filter(e => e.getClientRects().length > 0).flatMap(e => {
  const out = [];
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    for (const m of n.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      out.push({word: m[0], lines: lines.size});
    }
  }
  return out;
})"""


@pytest.mark.parametrize("width", [1280, 1100])
def test_counter_labels_never_break_inside_a_word(live_dashboard, browser, width):
    base, _cluster, _cache = live_dashboard
    context = browser.new_context(viewport={"width": width, "height": 800}, color_scheme="dark")
    try:
        page = context.new_page()
        page.set_default_timeout(15000)
        checked = 0
        for path in ("/", "/jobs/team-nlp/bert-pretrain-xl/", "/cronjobs/ml-platform/feature-refresh/"):
            page.goto(base + path)
            for word in page.evaluate(_WORDS, ".counts dt, .phase-card-label"):
                checked += 1
                assert word["lines"] == 1, f"{path}: {word['word']!r} breaks inside the word ({width}px)"
        assert checked > 20
        assert page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches")
    finally:
        context.close()
