"""Browser fixtures: headless Debian Chromium (never a downloaded browser) driven by Playwright,
against the dashboard served from a thread of this process, reading a live cluster cache on a
simulated cluster started on port 0."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from dashboard.presenters.clock import set_time_source

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
DOCS_SCREENSHOTS = Path(__file__).resolve().parent.parent.parent / "docs" / "screenshots"


def pytest_collection_modifyitems(config, items):
    if Path(CHROMIUM).exists():
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is absent (install Debian's chromium package)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):  # the dashboard logs requests itself
        pass


@pytest.fixture(scope="package")
def browser():
    """One Chromium for the browser tests. Package scope, not session: Playwright's sync API runs an
    event loop on the test thread while it is open, and Django refuses database calls from a thread
    with a running event loop (SynchronousOnlyOperation), which would fail every later test that
    touches the history store."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def serve_dashboard(cache, clock, port: int = 0):
    """Serve the WSGI app (static files through the finders) on ``port`` (0: ephemeral); returns
    (base_url, stop)."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.wsgi import get_wsgi_application

    from dashboard.kube import set_cluster_cache

    previous_cache = set_cluster_cache(cache)
    previous_clock = set_time_source(clock.now)
    server = make_server(
        "127.0.0.1",
        port,
        StaticFilesHandler(get_wsgi_application()),
        server_class=_ThreadingWSGIServer,
        handler_class=_QuietHandler,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()
        set_time_source(previous_clock)
        set_cluster_cache(previous_cache)

    return f"http://127.0.0.1:{server.server_port}", stop


@pytest.fixture
def live_dashboard(make_live_cache):
    """A fresh demo cluster (function scope: tests advance its clock), its cache, and the dashboard."""
    scenarios = pytest.importorskip("dashboard.sim.scenarios", reason="the demo scenario is not available")
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=0, scenario="demo", controllers=True)
    try:
        cluster.advance(float(getattr(scenarios, "DEMO_SETTLE_SECONDS", 120.0)))
        cache = make_live_cache(cluster)
        base, stop = serve_dashboard(cache, cluster.clock)
        try:
            yield base, cluster, cache
        finally:
            stop()
    finally:
        cluster.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="light")
    pg = context.new_page()
    pg.set_default_timeout(15000)
    try:
        yield pg
    finally:
        context.close()


# The README's pictures: the first screen of a page in this viewport, not the whole page.
DOCS_VIEWPORT = {"width": 1440, "height": 900}


def screenshot(
    pg, name: str, *, readme: bool = False, full_page: bool = True, docs_viewport: dict | None = None
) -> Path:
    """Save tests/artifacts/<name>.png; with ``readme`` and VOLCANO_UI_UPDATE_SCREENSHOTS=1 also
    write docs/screenshots/<name>.png (the README's pictures): the first ``docs_viewport``
    (default DOCS_VIEWPORT) of the page only (``full_page=False``)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=full_page)
    if readme and os.environ.get("VOLCANO_UI_UPDATE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        viewport, docs = pg.viewport_size, docs_viewport or DOCS_VIEWPORT
        if viewport != docs:
            pg.set_viewport_size(docs)
            # Let a page that lays itself out on resize (the kiosk's fit) draw two frames.
            pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        pg.screenshot(path=str(DOCS_SCREENSHOTS / f"{name}.png"), full_page=False)
        if viewport is not None and viewport != docs:
            pg.set_viewport_size(viewport)
    return path
