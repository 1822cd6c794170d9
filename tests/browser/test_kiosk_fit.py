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
  // The phase counts flow as one strip (their sections draw no box of their own).
  const drawn = getComputedStyle(p).display === 'contents' ? p.parentElement : p;
  return {panel: p.dataset.panel, box: box(drawn), rows: rows};
})"""

# (width, height, a "may be out of date" notice above the board): the smallest screen also with
# the notice, which takes a line of the height the lists were cut for.
SIZES = [(1280, 720, False), (1280, 720, True), (1280, 800, False), (1920, 1080, False), (3840, 2160, False)]


@pytest.mark.parametrize(
    ("width", "height", "notice"), SIZES, ids=[f"{w}x{h}{'-notice' if n else ''}" for w, h, n in SIZES]
)
def test_kiosk_fits_the_screen_with_every_panel_and_whole_rows(
    live_dashboard, browser, width, height, notice
):
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
        page.wait_for_function("() => +document.documentElement.dataset.kioskFit >= 1")
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


# --- a larger cluster: lists longer than any screen ----------------------------------------------

# Enough that every list is longer than a 2160p screen holds and the queue table longer than the
# server sends (dashboard.views.kiosk.KIOSK_QUEUE_RENDER): 60 queues, dozens of pending and failed Jobs.
LARGE = {"jobs": 400, "pods": 1200, "queues": 60, "events": 800}


@pytest.fixture(scope="module")
def large_dashboard(tmp_path_factory):
    """A seeded generated cluster (dashboard.sim.generator, controllers on but the clock never
    advanced), its cache and the dashboard; module scope: the tests only read it."""
    pytest.importorskip("dashboard.sim.generator", reason="the large-cluster generator is not available")
    from dashboard.kube import build_cluster_cache
    from dashboard.sim.generator import generate_large
    from tests.browser.conftest import serve_dashboard
    from tests.conftest import _new_cluster, fast_cache_options

    cluster = _new_cluster(seed=0)
    cache = None
    try:
        generate_large(cluster, **LARGE)
        kubeconfig = cluster.write_kubeconfig(tmp_path_factory.mktemp("kiosk-large") / "kubeconfig")
        cache = build_cluster_cache(
            kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options()
        )
        cache.start()
        cache.wait_synced(timeout=60)
        base, stop = serve_dashboard(cache, cluster.clock)
        try:
            yield base, cluster, cache
        finally:
            stop()
    finally:
        if cache is not None:
            cache.stop()
        cluster.stop()


# Per list panel: its box, its visible rows (box, and for the attention groups which group), the
# "+ N more" lines, and the totals the rows are counted against.
_FILL = """() => {
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height};
  };
  const shown = (e) => e.getClientRects().length > 0;
  const out = {};
  for (const name of ['attention', 'queues']) {
    const p = document.querySelector(`[data-panel="${name}"]`);
    const rows = name === 'queues'
      ? [...p.querySelectorAll('tr[data-rank]')].filter(shown)
          .map(r => ({box: box(r), rank: +r.dataset.rank}))
      : [...p.querySelectorAll('.att-list > li')].filter(shown).map(r => ({box: box(r)}));
    const content = [...p.querySelectorAll('h2, h3, tr, li, .kiosk-more')].filter(shown);
    out[name] = {
      box: box(p), scroll: p.scrollHeight, client: p.clientHeight,
      rows: rows,
      bottom: Math.max(...content.map(e => e.getBoundingClientRect().bottom)),
      more: [...p.querySelectorAll('.kiosk-more')].filter(shown).map(e => +e.dataset.more),
      groups: [...p.querySelectorAll('.att-group')].map(g => ({
        total: parseInt(g.querySelector('h3').textContent.trim(), 10),
        shown: [...g.querySelectorAll('.att-list > li')].filter(shown).length,
        more: +(g.querySelector('.kiosk-more') || {dataset: {more: 0}}).dataset.more,
        moreShown: !!g.querySelector('.kiosk-more') && shown(g.querySelector('.kiosk-more')),
      })),
    };
  }
  out.badges = [...document.querySelectorAll('.kiosk-board .badge')].filter(shown)
    .filter(b => [b, ...b.querySelectorAll('span')].some(e => e.scrollWidth > e.clientWidth + 0.5))
    .map(b => b.textContent.trim());
  out.scrollHeight = document.documentElement.scrollHeight;
  return out;
}"""

FILL_SIZES = [(1280, 720), (1920, 1080), (3840, 2160)]


def _open_kiosk(browser, base: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(base + "/kiosk/")
    # kiosk.js counts its fits on <html>: wait for the first (no sleeping).
    page.wait_for_function("() => +document.documentElement.dataset.kioskFit >= 1")
    return context, page


@pytest.mark.parametrize(("width", "height"), FILL_SIZES, ids=[f"{w}x{h}" for w, h in FILL_SIZES])
def test_kiosk_fills_each_panel_and_counts_what_it_leaves_out(large_dashboard, browser, width, height):
    base, cluster, cache = large_dashboard
    queue_total = len(cache.snapshot().queues)
    context, page = _open_kiosk(browser, base, width, height)
    try:
        fill = page.evaluate(_FILL)
        assert fill["scrollHeight"] <= height  # one screen, no scrollbar
        assert fill["badges"] == []  # every state badge whole ("Running", not "Runni…")
        for name in ("attention", "queues"):
            panel = fill[name]
            assert panel["scroll"] <= panel["client"] + 1, f"{name} overflows its panel"
            assert panel["rows"], name
            row_h = max(r["box"]["h"] for r in panel["rows"])
            empty = panel["box"]["y"] + panel["box"]["h"] - panel["bottom"]
            # The lists are longer than the screen: each panel says so, and leaves no more room
            # than about one row (plus the panel's padding) unused.
            assert any(panel["more"]), f"{name}: no '+ N more' although the list is longer"
            assert empty <= row_h + 0.03 * height, f"{name}: {empty:.0f}px empty with rows of {row_h:.0f}px"
        # Queues: the most important rows (ranks 0..k-1; the problem queues rank first), and the
        # "+ N more" counts the rows hidden here and those the server did not send.
        ranks = sorted(r["rank"] for r in fill["queues"]["rows"])
        assert ranks == list(range(len(ranks)))
        assert fill["queues"]["more"] == [queue_total - len(ranks)]
        # Needs attention: every group shows, and its "+ N more" is its total less what shows.
        assert fill["attention"]["groups"]
        for g in fill["attention"]["groups"]:
            assert g["shown"] >= 1
            assert g["more"] == g["total"] - g["shown"] and g["moreShown"] == (g["more"] > 0), g
        screenshot(page, f"kiosk-large-{width}x{height}", full_page=False)
    finally:
        context.close()


def test_kiosk_refits_after_a_resize(large_dashboard, browser):
    """A taller window shows more rows; the counts follow."""
    base, _cluster, _cache = large_dashboard
    context, page = _open_kiosk(browser, base, 1280, 720)
    try:
        before = page.evaluate(_FILL)
        fits = page.evaluate("+document.documentElement.dataset.kioskFit")
        page.set_viewport_size({"width": 1280, "height": 1024})  # 5:4: taller in rem than 16:9
        page.wait_for_function(f"() => +document.documentElement.dataset.kioskFit > {fits}")
        after = page.evaluate(_FILL)
        assert len(after["queues"]["rows"]) > len(before["queues"]["rows"])
        assert after["queues"]["more"][0] == before["queues"]["more"][0] - (
            len(after["queues"]["rows"]) - len(before["queues"]["rows"])
        )
        assert after["queues"]["scroll"] <= after["queues"]["client"] + 1
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)], ids=["1280x720", "1920x1080"])
def test_lost_connection_notice_covers_no_row(large_dashboard, browser, width, height):
    base, _cluster, _cache = large_dashboard
    context, page = _open_kiosk(browser, base, width, height)
    try:
        # Every poll (each fragment: board, notices) fails from now on, as when the dashboard is down.
        page.route(lambda url: "/kiosk/?" in url and "f=" in url, lambda route: route.abort())
        notice = page.locator("#kiosk-offline")
        notice.wait_for(state="visible")
        n = notice.bounding_box()
        assert n["x"] >= 0 and n["y"] >= 0 and n["x"] + n["width"] <= width and n["y"] + n["height"] <= height
        # Whole, on one line.
        assert page.evaluate(
            "(e) => e.scrollWidth <= e.clientWidth && e.clientHeight < 60", notice.element_handle()
        )
        boxes = page.evaluate(
            """() => [...document.querySelectorAll(
                   '[data-panel], [data-panel] li, [data-panel] tr, .kiosk-head h1, .kiosk-clock')]
                 .filter(e => e.getClientRects().length).map(e => {
                   const r = e.getBoundingClientRect();
                   return {t: e.textContent.trim().slice(0, 30), x: r.x, y: r.y, w: r.width, h: r.height};
                 })"""
        )
        for b in boxes:
            apart = (
                n["x"] + n["width"] <= b["x"] + 0.5
                or b["x"] + b["w"] <= n["x"] + 0.5
                or n["y"] + n["height"] <= b["y"] + 0.5
                or b["y"] + b["h"] <= n["y"] + 0.5
            )
            assert apart, f"the notice covers {b['t']!r}"
        assert page.evaluate("document.documentElement.scrollHeight") <= height
        screenshot(page, f"kiosk-offline-{width}x{height}", full_page=False)
    finally:
        context.close()


# --- list pages ------------------------------------------------------------------------------------

_HEADERS = """() => {
  const t = document.querySelector('main table');
  const wrap = t.closest('.table-wrap');
  const w = wrap.getBoundingClientRect();
  // The table's natural width (no cell wrapped): what it takes to show every column at ease.
  t.style.width = 'max-content';
  const natural = t.getBoundingClientRect().width;
  t.style.width = '';
  return {
    natural: natural,
    wrap: {left: w.left, right: w.right, scroll: wrap.scrollWidth, client: wrap.clientWidth},
    doc: document.documentElement.scrollWidth,
    ths: [...t.querySelectorAll('thead th')].filter(th => th.getClientRects().length).map(th => {
      const r = th.getBoundingClientRect();
      return {
        text: th.textContent.trim(), left: r.left, right: r.right,
        clipped: th.scrollWidth > th.clientWidth + 0.5,
      };
    }),
  };
}"""


@pytest.mark.parametrize("path", ["/jobs/", "/podgroups/", "/queues/"])
def test_list_tables_fit_a_1920_screen(large_dashboard, browser, path):
    base, _cluster, _cache = large_dashboard
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = context.new_page()
        page.set_default_timeout(15000)
        page.goto(base + path)
        page.locator("main table tbody tr").first.wait_for()
        m = page.evaluate(_HEADERS)
        assert m["doc"] <= 1920 and m["wrap"]["scroll"] <= m["wrap"]["client"]  # nothing to scroll
        # Room for every column unwrapped: a longer name or count still fits (the tester's
        # 10,000-Job cluster needed ~1454px where a 1430px box was all the table got).
        assert m["natural"] <= m["wrap"]["client"], m
        for th in m["ths"]:
            assert not th["clipped"], th
            assert m["wrap"]["left"] - 0.5 <= th["left"] and th["right"] <= m["wrap"]["right"] + 0.5, th
        screenshot(page, f"list{path.replace('/', '-')[:-1]}-1920x1080", full_page=False)
    finally:
        context.close()


def test_jobs_list_keeps_age_and_time_in_phase_on_a_1280_screen(large_dashboard, browser):
    base, _cluster, _cache = large_dashboard
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.set_default_timeout(15000)
        page.goto(base + "/jobs/")
        page.locator("main table tbody tr").first.wait_for()
        m = page.evaluate(_HEADERS)
        assert m["doc"] <= 1280  # the page itself never scrolls sideways
        by_text = {th["text"].split()[0]: th for th in m["ths"]}
        for name in ("Name", "Status", "Age", "In"):  # "In phase"
            th = by_text[name]
            assert th["right"] <= min(1280, m["wrap"]["right"]) + 0.5 and not th["clipped"], th
        screenshot(page, "list-jobs-1280x800", full_page=False)
    finally:
        context.close()


def test_kiosk_refits_after_a_live_swap(live_dashboard, browser):
    """The board is swapped in place when the cluster changes; the new board (sent with the
    no-script cut) is fitted again before it is shown: no overflow, counts consistent."""
    base, cluster, cache = live_dashboard
    context, page = _open_kiosk(browser, base, 1920, 1080)
    try:
        page.evaluate("document.querySelector('.kiosk-board').dataset.old = '1'")
        fits = page.evaluate("+document.documentElement.dataset.kioskFit")
        version = cache.snapshot().jobs.version
        cluster.advance(30)  # Jobs progress: the board changes
        cache.wait_for(lambda snap: snap.jobs.version != version, timeout=15)
        # A new board element (outerHTML swap), then a fit after it.
        page.wait_for_function("() => !document.querySelector('.kiosk-board').dataset.old", timeout=30000)
        assert page.evaluate("+document.documentElement.dataset.kioskFit") > fits
        fill = page.evaluate(_FILL)
        for name in ("attention", "queues"):
            assert fill[name]["scroll"] <= fill[name]["client"] + 1, name
        for g in fill["attention"]["groups"]:
            assert g["more"] == g["total"] - g["shown"], g
    finally:
        context.close()


# Whole rows only: every shown row and heading of the attention panel ends inside it, and each
# group's "+ N more" counts what is not shown.
_CUT = """() => {
  const shown = (e) => e.getClientRects().length > 0;
  const p = document.querySelector('[data-panel="attention"]');
  const bottom = p.getBoundingClientRect().bottom;
  const cut = [...p.querySelectorAll('h3, .att-list > li, .kiosk-more')].filter(shown)
    .filter(e => e.getBoundingClientRect().bottom > bottom + 1).map(e => e.textContent.trim());
  const groups = [...p.querySelectorAll('.att-group')].filter(shown).map(g => ({
    total: parseInt(g.querySelector('h3').textContent.trim(), 10),
    shown: [...g.querySelectorAll('.att-list > li')].filter(shown).length,
    more: g.querySelector('.kiosk-more') && shown(g.querySelector('.kiosk-more'))
      ? +g.querySelector('.kiosk-more').dataset.more : 0,
  }));
  return {cut, groups, all: p.querySelectorAll('.att-group').length};
}"""


@pytest.mark.parametrize(("width", "height"), [(1024, 576), (1280, 720)], ids=["1024x576", "1280x720"])
def test_more_attention_groups_than_fit_leave_rows_out_whole(live_dashboard, browser, width, height):
    base, cluster, cache = live_dashboard
    from tests.pages.helpers import kind

    queue_kind = kind("scheduling.volcano.sh", "queues")
    job_kind = kind("batch.volcano.sh", "jobs")
    for i in range(6):  # closed queues and Jobs in a phase no Volcano version has: two more groups
        cluster.store.create(
            queue_kind,
            {"metadata": {"name": f"shut-{i}"}, "spec": {"weight": 1}, "status": {"state": "Closed"}},
        )
        job = {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": f"odd-{i}", "namespace": "default"},
            "spec": {"queue": "default", "tasks": []},
            "status": {"state": {"phase": f"Exploding{i}"}},
        }
        cluster.store.create(job_kind, job, "default", replay=True)
    cache.wait_for(
        lambda s: s.jobs.get("default", "odd-5") is not None and s.queues.get(None, "shut-5"), timeout=10
    )
    context, page = _open_kiosk(browser, base, width, height)
    try:
        fit = page.evaluate(_CUT)
        assert fit["cut"] == [], fit["cut"]
        for g in fit["groups"]:
            # A group left with no row keeps its count in its heading ("13 pending Jobs").
            assert g["more"] == (g["total"] - g["shown"] if g["shown"] else 0), g
    finally:
        context.close()
