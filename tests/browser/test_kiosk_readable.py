"""The kiosk read from across the room, in headless Chromium: the smallest visible text measured
from computed styles (28px at 1920×1080, 20px at 1280×720, numbers larger), in the overview and
in rotate mode; the overall status line; new and chronic warnings. Screenshots go to
tests/artifacts/ (and, with VOLCANO_UI_UPDATE_SCREENSHOTS=1, docs/screenshots/kiosk.png)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_kiosk_fit import large_dashboard  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser

# Every element that draws text of its own (a non-blank text node child) and shows: a box on the
# screen, not visibility:hidden, not clipped to nothing (.visually-hidden), not transparent. Its
# computed font size, with the text, sorted smallest first.
_TEXT_SIZES = """() => {
  const out = [];
  const W = innerWidth, H = innerHeight;
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest('[hidden], script, style, noscript')) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || +cs.opacity === 0 || cs.clip === 'rect(0px, 0px, 0px, 0px)') continue;
    out.push({size: parseFloat(cs.fontSize), text: el.textContent.trim().slice(0, 60),
              cls: el.className && el.className.baseVal === undefined ? el.className : el.tagName});
  }
  return out.sort((a, b) => a.size - b.size);
}"""

READABLE = [(1920, 1080, 28), (1280, 720, 20)]


def _open(browser, url: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(url)
    page.locator(".kiosk-board").wait_for()
    # kiosk.js counts its fits on <html>: wait for the first (no sleeping).
    page.wait_for_function("() => +document.documentElement.dataset.kioskFit >= 1")
    return context, page


# The visible list rows that reach below their column (cut by it), by their text.
_CUT_ROWS = """() => [...document.querySelectorAll('.kiosk-col li, .kiosk-col tr, .kiosk-col .kiosk-more')]
  .filter(e => e.getClientRects().length && !e.closest('[hidden]')).filter(e => {
    const r = e.getBoundingClientRect();
    const c = e.closest('.kiosk-col').getBoundingClientRect();
    return r.bottom > c.bottom + 0.5;
  }).map(e => e.textContent.trim().slice(0, 40))"""


def _check_readable(page, width: int, height: int, floor: float) -> list[dict]:
    sizes = page.evaluate(_TEXT_SIZES)
    assert sizes, "no text on the board"
    small = [s for s in sizes if s["size"] < floor - 0.01]
    assert not small, f"text smaller than {floor}px at {width}x{height}: {small[:5]}"
    assert page.evaluate("document.documentElement.scrollHeight") <= height  # one screen
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    return sizes


@pytest.mark.parametrize(("width", "height", "floor"), READABLE, ids=[f"{w}x{h}" for w, h, _f in READABLE])
@pytest.mark.parametrize("rotate", [False, True], ids=["board", "rotate"])
def test_kiosk_text_is_readable_from_across_the_room(live_dashboard, browser, width, height, floor, rotate):
    base, _cluster, _cache = live_dashboard
    url = base + "/kiosk/" + ("?rotate=30" if rotate else "")
    context, page = _open(browser, url, width, height)
    try:
        sizes = _check_readable(page, width, height, floor)
        smallest = sizes[0]["size"]
        # The numbers of the phase counts and the status line are larger than the smallest text.
        for sel in (".kc-n", ".ks-headline"):
            size = page.evaluate(f"parseFloat(getComputedStyle(document.querySelector('{sel}')).fontSize)")
            assert size > smallest * 1.2, (sel, size, smallest)
        # Fewer, bigger rows: every visible list row is whole (not cut by its panel or column).
        assert page.evaluate(_CUT_ROWS) == []
        if rotate:
            assert page.locator(".kiosk-focus-name").is_visible()
        name = f"kiosk-readable-{'rotate-' if rotate else ''}{width}x{height}"
        screenshot(page, name, full_page=False)
        if width == 1920 and not rotate:
            # The README's picture of the kiosk, on the screen it is made for.
            screenshot(
                page, "kiosk", readme=True, full_page=False, docs_viewport={"width": 1920, "height": 1080}
            )
    finally:
        context.close()


# The notices above the board that reach past their line without an ellipsis (cut), by their text.
_CUT_NOTICES = """() => [...document.querySelectorAll('.notice .container, .notice .container > span')]
  .filter(e => e.getClientRects().length).filter(e => {
    const r = e.getBoundingClientRect();
    const clipped = e.scrollWidth > e.clientWidth + 1;
    const ellipsis = getComputedStyle(e).textOverflow === 'ellipsis';
    return r.right > window.innerWidth + 0.5 || (clipped && !ellipsis);
  }).map(e => e.textContent.trim().slice(0, 60))"""


def test_kiosk_notice_is_never_cut_at_the_screen_edge(live_dashboard, browser):
    """A stale-data notice with a long error, on the screen the kiosk is made for: its message is
    whole, never run off the right edge (the error detail is left to the other pages)."""
    base, _cluster, cache = live_dashboard
    cache.store("events").set_state("stale", error="watch dropped: connection reset by peer " * 4)
    context, page = _open(browser, base + "/kiosk/", 1920, 1080)
    try:
        page.locator(".notice").first.wait_for()
        assert page.evaluate(_CUT_NOTICES) == []
        message = page.locator(".notice .container > span").first
        assert "may be out of date" in (message.get_attribute("title") or "")
    finally:
        context.close()


@pytest.mark.parametrize("which", ["demo", "demo-notice", "large"])
def test_kiosk_without_script_shows_whole_rows_on_the_smallest_screen(request, browser, which):
    """Without script the server's cut (views.kiosk KIOSK_*) fits 1280×720 whole, also with the
    one-line notice above the board."""
    fixture = "large_dashboard" if which == "large" else "live_dashboard"
    base, _cluster, cache = request.getfixturevalue(fixture)
    if which == "demo-notice":
        cache.store("events").set_state("stale", error="watch dropped: connection reset by peer")
    context = browser.new_context(viewport={"width": 1280, "height": 720}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.set_default_timeout(15000)
        page.goto(base + "/kiosk/")
        page.locator(".kiosk-board").wait_for()
        if which == "demo-notice":
            assert page.locator(".notice").first.is_visible()
        _check_readable(page, 1280, 720, 20)
        assert page.evaluate(_CUT_ROWS) == []
        assert page.locator(".kiosk-events > li:not([hidden])").count() >= 1
        screenshot(page, f"kiosk-noscript-{which}-1280x720", full_page=False)
    finally:
        context.close()


def test_kiosk_status_names_the_worst_on_the_demo(live_dashboard, browser):
    base, _cluster, cache = live_dashboard
    context, page = _open(browser, base + "/kiosk/", 1920, 1080)
    try:
        status = page.locator(".kiosk-status")
        assert status.get_attribute("data-status") == "bad"
        total = int(status.get_attribute("data-total"))
        # The number is the sum of the "Needs attention" groups' totals shown below it.
        heads = page.evaluate(
            "() => [...document.querySelectorAll('.att-group h3')]"
            ".map(h => parseInt(h.textContent.trim(), 10))"
        )
        assert total == sum(heads) > 0
        assert page.locator(".ks-headline").inner_text() == f"{total} need attention"
        # The demo's worst: a crash-looping pod (dashboard.volcano.attention.CONCERNS).
        worst = page.locator(".ks-worst").inner_text()
        first_crash = page.locator('.att-group:has(h3:has-text("crash-looping")) .kq-name').first.inner_text()
        assert worst.startswith("worst: crash-looping pod ") and first_crash in worst, worst
        # Coloured: the status takes its tone's colour, not the text colour.
        colour = page.evaluate("getComputedStyle(document.querySelector('.kiosk-status')).color")
        text_colour = page.evaluate("getComputedStyle(document.querySelector('.kiosk-clock')).color")
        assert colour != text_colour
    finally:
        context.close()


@pytest.fixture
def quiet_dashboard(make_live_cache):
    """A cluster with nothing wrong on it (controllers off: nothing moves unless a test says so),
    its cache and the dashboard."""
    from tests.browser.conftest import serve_dashboard
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=3, controllers=False)
    try:
        cache = make_live_cache(cluster)
        base, stop = serve_dashboard(cache, cluster.clock)
        try:
            yield base, cluster, cache
        finally:
            stop()
    finally:
        cluster.stop()


def test_kiosk_is_all_clear_on_a_healthy_cluster(quiet_dashboard, browser):
    base, _cluster, _cache = quiet_dashboard
    for width, height, floor in READABLE:
        context, page = _open(browser, base + "/kiosk/", width, height)
        try:
            status = page.locator(".kiosk-status")
            assert status.get_attribute("data-status") == "ok"
            assert page.locator(".ks-headline").inner_text() == "All clear"
            assert page.locator(".ks-worst").count() == 0
            _check_readable(page, width, height, floor)
        finally:
            context.close()


def _warning(cluster, ns: str, name: str, reason: str, first_ago: float, last_ago: float, count: int) -> dict:
    now = cluster.clock.now()

    def stamp(seconds: float) -> str:
        return (now - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")

    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason.lower()}", "namespace": ns},
        "involvedObject": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": name,
            "namespace": ns,
        },
        "type": "Warning",
        "reason": reason,
        "message": f"{reason} on {name}",
        "firstTimestamp": stamp(first_ago),
        "lastTimestamp": stamp(last_ago),
        "count": count,
    }


def test_chronic_warnings_fold_into_one_line_and_new_ones_are_marked(quiet_dashboard, browser):
    from tests.pages.helpers import kind

    base, cluster, cache = quiet_dashboard
    store = cluster.store
    ns = "ops"
    store.create(kind("", "namespaces"), {"metadata": {"name": ns}})
    # On Jobs the cache does not hold (Warnings name them unlinked): repeating for 5 hours, 312
    # times, still happening; and one first seen 2 minutes ago.
    chronic = _warning(cluster, ns, "old-job", "BackOff", 5 * 3600, 0, 312)
    fresh = _warning(cluster, ns, "fresh-job", "FailedMount", 120, 60, 2)
    for ev in (chronic, fresh):
        store.create(kind("", "events"), ev, ns, replay=True)
    cache.wait_for(lambda s: len(list(s.warning_events())) >= 2, timeout=15)
    context, page = _open(browser, base + "/kiosk/", 1920, 1080)
    try:
        rows = page.locator(".kiosk-events > li")
        assert rows.count() == 2
        # The new one first and marked, the chronic one last, on one line with its span and count.
        first, last = rows.nth(0), rows.nth(1)
        assert first.get_attribute("data-recurrence") == "new"
        assert "fresh-job" in first.inner_text() and first.locator(".ke-new").inner_text().lower() == "new"
        assert last.get_attribute("data-recurrence") == "chronic"
        assert "old-job" in last.inner_text() and last.locator(".ke-new").count() == 0
        assert last.locator(".ke-chronic").inner_text() == "for 5h, 312 times"
        assert last.locator(".ke-msg").count() == 0
        line = page.evaluate(
            "(li) => li.getBoundingClientRect().height / parseFloat(getComputedStyle(li).lineHeight)",
            last.element_handle(),
        )
        assert line < 1.6, "a chronic warning takes one line"
        _check_readable(page, 1920, 1080, 28)
        screenshot(page, "kiosk-warnings-new-and-chronic", full_page=False)
    finally:
        context.close()
    # 11 minutes later the fresh one is no longer new (the simulated clock moves; nothing sleeps).
    cluster.advance(11 * 60)
    context, page = _open(browser, base + "/kiosk/", 1920, 1080)
    try:
        rows = page.locator(".kiosk-events > li")
        assert [rows.nth(i).get_attribute("data-recurrence") for i in range(rows.count())] == [
            "ongoing",
            "chronic",
        ]
        assert page.locator(".ke-new").count() == 0
    finally:
        context.close()
