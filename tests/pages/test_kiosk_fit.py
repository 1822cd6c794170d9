"""The kiosk's lists on the server: without script at most views.kiosk.KIOSK_* rows per list show, the
problem queues never among those left out, and a "+ N more" wherever rows were left out; more rows
are sent (hidden) in the same order of importance, with the "+ N more" text of every cut, for
static/dashboard/kiosk.js to fill the screen at hand (tests/browser/test_kiosk_fit.py)."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from dashboard.presenters import phases as badges
from dashboard.views import kiosk
from tests.pages.helpers import queues, text


def _row(
    name: str, depth: int, parent: str, *, state: str = "Open", over: bool = False, problem: str = ""
) -> dict:
    return {
        "name": name,
        "depth": depth,
        "tree_parent": parent,
        "problem": problem,
        "state": badges.queue_state({"status": {"state": state}}),
        "bars": [SimpleNamespace(over=over)],
    }


def _tree() -> list[dict]:
    """14 queues in tree order; the problems sit deep in the tree, after the cut of a plain list."""
    return [
        _row("root", 0, ""),
        _row("a", 1, "root"),
        _row("a-1", 2, "a"),
        _row("a-2", 2, "a"),
        _row("a-3", 2, "a"),
        _row("b", 1, "root"),
        _row("b-1", 2, "b"),
        _row("b-2", 2, "b"),
        _row("c", 1, "root"),
        _row("c-1", 2, "c"),
        _row("c-1-x", 3, "c-1", over=True),  # allocated above deserved
        _row("c-2", 2, "c", state="Closing"),
        _row("d", 1, "root", state="Closed"),
        _row("orphan", 0, "gone", problem="missing_parent"),
    ]


def _names(rows: list[dict], *, hidden: bool | None = False) -> list[str]:
    return [r["name"] for r in rows if hidden is None or r["kiosk_hidden"] == hidden]


def test_all_queues_when_they_fit():
    rows = _tree()[:5]
    shown, more, problems_more = kiosk.kiosk_queues(rows, limit=10)
    assert _names(shown) == [r["name"] for r in rows] and more == 0 and problems_more == 0
    assert [r["kiosk_rank"] for r in shown] == [0, 1, 2, 3, 4]  # the shallowest first, tree order
    assert all(r["kiosk_path"] == [] for r in shown)  # every parent ranks before its children


def test_problem_queues_are_never_the_ones_cut_and_read_in_place():
    rows = _tree()
    shown, more, problems_more = kiosk.kiosk_queues(rows, limit=9, render=12)
    # Without script, 8 rows and the "+ N more" line: every problem queue, then the top of the
    # tree by depth, in tree order; 6 left out.
    assert _names(shown) == ["root", "a", "b", "c", "c-1-x", "c-2", "d", "orphan"]
    assert (more, problems_more) == (6, 0)
    # Sent: the cut to 12 (11 rows), the 3 after the first 8 in the order of importance hidden.
    assert _names(shown, hidden=True) == ["a-1", "a-2", "a-3"]
    by_name = {r["name"]: r for r in shown}
    ranks = sorted(shown, key=lambda r: r["kiosk_rank"])
    assert [r["name"] for r in ranks][:4] == ["c-1-x", "c-2", "d", "orphan"]  # problems first
    # c-1 is not sent: c-1-x shows its ancestors. c ranks after c-2, so c-2 carries its path,
    # hidden while c shows; a-1's parent ranks before it: no path. A problem row outside the
    # tree never gets one.
    assert (
        by_name["c-1-x"]["kiosk_path"] == ["root", "c", "c-1"] and not by_name["c-1-x"]["kiosk_path_hidden"]
    )
    assert by_name["c-2"]["kiosk_path"] == ["root", "c"] and by_name["c-2"]["kiosk_path_hidden"]
    assert by_name["a-1"]["kiosk_path"] == [] and by_name["orphan"]["kiosk_path"] == []
    assert "kiosk_path" not in rows[10]  # the overview's memoized rows are not changed


def test_more_problem_queues_than_rows_says_so():
    rows = _tree()
    shown, more, problems_more = kiosk.kiosk_queues(rows, limit=3, render=3)
    assert _names(shown, hidden=None) == ["c-1-x", "c-2"]
    assert (more, problems_more) == (12, 2)


def test_queue_cuts_count_what_each_cut_leaves_out():
    cuts = kiosk.kiosk_queue_cuts(sent=4, total=14, problems=2)
    assert [n for n, _text in cuts] == [13, 12, 11, 10]
    assert cuts[0][1] == "+ 13 more queues, 1 of them with a problem"
    assert cuts[1][1] == "+ 12 more queues"
    assert kiosk.kiosk_queue_cuts(sent=3, total=3, problems=0)[-1] == [0, ""]


def _attention(
    pending: int,
    stuck: int,
    below: int,
    crash: int,
    restarting: int,
    failed: int,
    closed: int,
    components: int = 0,
    unknown: int = 0,
) -> dict:
    return {
        "unknown": [{"n": i} for i in range(min(unknown, 8))],
        "unknown_total": unknown,
        "components": [{"n": i} for i in range(components)],
        "components_total": components,
        "closed_total": closed,
        "pending": [{"n": i} for i in range(min(pending, 8))],
        "pending_total": pending,
        "stuck": [{"n": i} for i in range(min(stuck, 8))],
        "stuck_total": stuck,
        "below": [{"n": i} for i in range(min(below, 8))],
        "below_total": below,
        "crash": [{"n": i} for i in range(min(crash, 8))],
        "crash_total": crash,
        "restarting": [{"n": i} for i in range(min(restarting, 8))],
        "restarting_total": restarting,
        "failed": [{"n": i} for i in range(min(failed, 8))],
        "failed_total": failed,
        "closed": [{"n": i} for i in range(closed)],
    }


def _lines(a: dict) -> int:
    return sum(
        1 + a[f"{g}_base"] * {"pending": 3, "stuck": 2}.get(g, 1)
        for g in kiosk.KIOSK_ATTENTION_GROUPS
        if a[g]
    )


@pytest.mark.parametrize(
    "counts",
    [
        (40, 5, 9, 12, 3, 30, 6, 1, 2),
        (11, 0, 0, 0, 0, 0, 0, 0, 0),
        (0, 0, 0, 3, 0, 2, 1, 0, 1),
        (2, 1, 1, 1, 1, 1, 1, 3, 1),
        (0, 0, 0, 0, 0, 0, 0, 0, 0),
    ],
)
def test_attention_fits_its_lines_and_counts_the_rest(counts):
    a = _attention(*counts)
    k = kiosk.kiosk_attention(a)
    # Every group keeps its heading and first item, even beyond the lines (all nine groups).
    least = sum(1 + {"pending": 3, "stuck": 2}.get(g, 1) for g in kiosk.KIOSK_ATTENTION_GROUPS if a[g])
    assert _lines(k) <= max(kiosk.KIOSK_ATTENTION_LINES, least)
    order = ("pending", "stuck", "below", "crash", "restarting", "failed", "closed", "components", "unknown")
    totals = dict(zip(order, counts, strict=True))
    assert set(order) == set(kiosk.KIOSK_ATTENTION_GROUPS)
    for g, total in totals.items():
        assert bool(k[f"{g}_base"]) == bool(total)  # every group that has something shows
        assert k[f"{g}_base"] + k[f"{g}_more"] == total
        # Sent whole, with the "+ N more" line of each cut.
        assert k[g] == a[g]
        cuts = json.loads(k[f"{g}_cuts"])
        assert [n for n, _text in cuts] == [total - i for i in range(1, len(a[g]) + 1)]
        assert all(bool(text) == bool(n) for n, text in cuts)
    assert len(a["pending"]) == min(counts[0], 8)  # the shared dict is not changed


def test_attention_fills_its_lines_when_there_is_more():
    k = kiosk.kiosk_attention(_attention(40, 0, 0, 12, 0, 0, 0), lines=15)
    # 2 headings; the 13 lines left go to the two groups in turn: 3 pending Jobs (9), 4 pods (4).
    assert (k["pending_base"], k["crash_base"]) == (3, 4)
    assert (k["pending_more"], k["crash_more"]) == (37, 8)
    assert json.loads(k["pending_cuts"])[2] == [37, "+ 37 more"]


@pytest.mark.usefixtures("demo_cache")
def test_kiosk_page_renders_the_caps_and_the_more_lines(client, demo_cluster):
    page = client.get("/kiosk/").content.decode()
    # Without script: the rows not marked hidden.
    rows = [
        name
        for name, attrs in re.findall(r'<tr data-queue="([^"]+)"([^>]*)>', page)
        if " hidden" not in attrs
    ]
    assert 0 < len(rows) <= kiosk.KIOSK_QUEUE_ROWS
    # The demo's over-quota queues are on the board.
    assert "research" in rows and "research-nlp" in rows
    total = len(queues(demo_cluster))
    words = text(page)
    if total > kiosk.KIOSK_QUEUE_ROWS:
        more = total - len(rows)
        assert f"+ {more} more queue" in words
    # Needs attention: names as text, no links or controls; "+ N more" wherever rows were left out.
    attention = page[page.index('data-panel="attention"') : page.index('data-panel="queues"')]
    assert "<a " not in attention and "All pending Jobs" not in attention
    for m in re.finditer(r'data-more="(\d+)"[^>]*>', attention):
        assert (int(m.group(1)) > 0) == (" hidden" not in m.group(0))
    assert len(re.findall(r"<li>", page[page.index('class="kiosk-events"') :])) <= kiosk.KIOSK_WARNING_ROWS
