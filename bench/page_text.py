"""Every page's visible text on the seeded demo, one file per page, for comparing two versions of
the code: run it on each and diff the directories.

    python -m bench.page_text OUT_DIR [--seconds 120] [--max-pages 400]
    diff -r before/ after/

The demo scenario (seed 0) runs ``--seconds`` simulated seconds, a cluster cache syncs on it, and the
pages' clock follows the simulated clock, so two runs of the same code write the same text. Pages
are found by following links from the overview, the list pages and the kiosk (paths only, plus the
first page of each list's sort links); each file holds the page's text with scripts and styles left
out, one text run a line.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

SEEDS = ("/", "/jobs/", "/podgroups/", "/queues/", "/kiosk/")
FOLLOWED = re.compile(r"^/(jobs|podgroups|queues|pods)/")


class _Text(HTMLParser):
    """Collects the visible text runs and the same-site links of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.runs: list[str] = []
        self.links: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "template"):
            self._skip += 1
        if tag == "a":
            href = dict(attrs).get("href") or ""
            if href.startswith("/"):
                self.links.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            text = " ".join(data.split())
            if text:
                self.runs.append(text)


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", path.strip("/")) or "overview"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seconds", type=float, default=120.0, help="simulated seconds the demo runs first")
    ap.add_argument("--max-pages", type=int, default=400)
    args = ap.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from dashboard.presenters.clock import set_time_source
    from dashboard.sim.cluster import SimulatedCluster

    cluster = SimulatedCluster(seed=0, scenario="demo", controllers=True)
    cluster.start("127.0.0.1", 0)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        cluster.advance(args.seconds)
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = cluster.write_kubeconfig(Path(tmp) / "kubeconfig", user="admin")
            cache = build_cluster_cache(kubeconfig=str(kubeconfig), context="", mode="kubeconfig")
            cache.start()
            previous = set_time_source(cluster.clock.now)
            try:
                cache.wait_synced(timeout=60)
                with override_cluster_cache(cache):
                    _crawl(Client(), args.out, args.max_pages)
            finally:
                set_time_source(previous)
                cache.stop()
    finally:
        cluster.stop()


def _crawl(client, out: Path, max_pages: int) -> None:
    seen: set[str] = set()
    queue = deque(SEEDS)
    written = 0
    while queue and written < max_pages:
        path = queue.popleft()
        if path in seen:
            continue
        seen.add(path)
        response = client.get(path)
        parser = _Text()
        parser.feed(response.content.decode("utf-8", "replace"))
        body = "\n".join([f"HTTP {response.status_code}", *parser.runs]) + "\n"
        (out / f"{_slug(path)}.txt").write_text(body, encoding="utf-8")
        written += 1
        for href in parser.links:
            parts = urlsplit(href)
            if FOLLOWED.match(parts.path) and parts.path not in seen:
                queue.append(parts.path)
    print(f"{written} pages written to {out}")


if __name__ == "__main__":
    main()
