"""The kiosk: dark, without controls, refreshing itself, one queue in focus at a time. (How the board
fits a screen: test_kiosk_fit.py.)"""

from __future__ import annotations

import pytest

from tests.pages.helpers import check_fragment, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_kiosk_is_dark_has_no_controls_and_refreshes_itself(client, demo_cluster):
    page = client.get("/kiosk/").content.decode()
    assert 'data-theme="dark"' in page
    assert "<form" not in page and 'class="mainnav"' not in page
    assert "kiosk.js" in page and 'data-poll="board"' in page
    assert "Needs attention" in text(page)
    check_fragment(client, page, "board")


def test_kiosk_rotation_focuses_one_queue_at_a_time(client, demo_cluster):
    page = client.get("/kiosk/?rotate=15").content.decode()
    assert "kiosk-focus-name" in page
    assert client.get("/kiosk/?rotate=abc").status_code == 200
