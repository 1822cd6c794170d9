"""A ``?window=`` the page does not offer (/usage/ and a Queue's "Over time"): the page shows its
default window, names what was asked (escaped) and the choices; the chooser marks the default."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from tests.pages.helpers import text
from tests.pages.history_store import history_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def client_with_history(memory_cache, tmp_path, django_db_blocker):
    for k in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(k).mark_synced()
    memory_cache.store("queues").upsert(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "research", "resourceVersion": "1"},
            "spec": {"weight": 1},
            "status": {"state": "Open"},
        }
    )
    with django_db_blocker.unblock(), history_store(memory_cache, tmp_path / "h.sqlite3", NOW):
        yield Client()


def _notice(html: str) -> str:
    m = re.search(r"data-window-notice>(.*?)</p>", html, re.S)
    return text(m.group(1)).strip() if m else ""


@pytest.mark.parametrize("asked", ["1h", "3d", "abc", "24H"])
def test_usage_names_an_unknown_window(client_with_history, asked):
    resp = client_with_history.get("/usage/", {"window": asked})
    assert resp.status_code == 200
    html = resp.content.decode()
    assert _notice(html) == f"Unknown window “{asked}”: showing 7 days. Choose 24h, 7d or 14d."
    assert re.search(r'<option value="7d" selected>\s*7d \(default\)</option>', html)
    assert "From 2026-11-23 12:00 to 2026-11-30 12:00" in text(html)


def test_usage_escapes_the_window_it_names(client_with_history):
    html = client_with_history.get("/usage/", {"window": "<b>x</b>"}).content.decode()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


@pytest.mark.parametrize("url", ["/usage/", "/usage/?window=", "/usage/?window=14d"])
def test_usage_says_nothing_for_a_window_it_offers(client_with_history, url):
    assert _notice(client_with_history.get(url).content.decode()) == ""


def test_the_queue_page_names_an_unknown_window(client_with_history):
    html = client_with_history.get("/queues/research/", {"window": "3d"}).content.decode()
    assert _notice(html) == "Unknown window “3d”: showing 24 hours. Choose 1h, 24h or 7d."
    current = re.search(r'<a href="\?window=([^"#]+)#qhist-title" aria-current="true">\s*([^<]*)</a>', html)
    assert current and current.groups() == ("24h", "24h (default)")
    assert _notice(client_with_history.get("/queues/research/?window=7d").content.decode()) == ""
