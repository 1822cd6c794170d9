"""The queue tree at any depth and with a broken hierarchy: deep chains keep a readable nesting
(indent classes up to TREE_INDENT_MAX, then the depth as a number), and queues whose
spec.parent names no Queue, names the queue itself, or closes a cycle are shown with a hint after
the real tree (REFERENCE.md §3: Volcano's webhook rejects these, the API may still hold them).
Also the kiosk's ``?rotate=`` parsing. Queues are written verbatim into a simulated cluster with
its controllers off and read back through a live cache.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dashboard.presenters.queues import TREE_INDENT_MAX, queue_tree
from dashboard.volcano import objects
from tests.pages.helpers import kind, text

QUEUE = ("scheduling.volcano.sh", "queues")
CSS = Path(__file__).resolve().parents[2] / "static" / "dashboard" / "app.css"


def _queue(name: str, parent: str | None = None) -> dict:
    spec: dict = {"weight": 1}
    if parent is not None:
        spec["parent"] = parent
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"state": "Open"},
    }


@pytest.fixture(scope="module")
def tree_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=5, name="tree") as pair:
        yield pair


def _add(tree_cluster, *queues: dict) -> None:
    cluster, cache = tree_cluster
    for q in queues:
        cluster.store.create(kind(*QUEUE), q, replay=True)
    names = [q["metadata"]["name"] for q in queues]
    cache.wait_for(lambda s: all(s.queues.get(None, n) is not None for n in names), timeout=10)


def _rows(page: str) -> list[tuple[str, str]]:
    """(queue name, the row's HTML) of the Queues table, in page order."""
    return re.findall(r'<tr data-queue="([^"]+)">(.*?)</tr>', page, re.S)


def _css_indent_rules() -> dict[int, float]:
    css = CSS.read_text()
    return {int(d): float(rem) for d, rem in re.findall(r"\.depth-(\d+) \{ padding-left: ([\d.]+)rem", css)}


# --- 1. depth at any depth -----------------------------------------------------------------------


def test_tree_rows_cap_the_indent_and_number_deep_rows():
    chain = [_queue(f"d{i}", f"d{i - 1}" if i else "root") for i in range(60)]
    rows = queue_tree([_queue("root"), *chain])
    by_name = {objects.name(r.queue): r for r in rows}
    assert by_name["d0"].depth == 1 and by_name["d59"].depth == 60
    assert by_name["d59"].indent == TREE_INDENT_MAX and by_name["d59"].deep
    assert by_name["d3"].indent == 4 and not by_name["d3"].deep
    # Every indent a row can get has a CSS rule, each step deeper than the one before.
    rules = _css_indent_rules()
    indents = [rules.get(d, 0.0) for d in range(TREE_INDENT_MAX + 1)]
    assert all(a < b for a, b in zip(indents, indents[1:], strict=False)), indents


def test_deep_chain_page_shows_nesting_by_class_then_by_number(tree_cluster, client):
    _add(tree_cluster, *[_queue(f"deep-{i}", f"deep-{i - 1}" if i else "root") for i in range(60)])
    _add(tree_cluster, _queue("deep-side", "deep-4"))  # a depth-6 sibling branch of deep-5's child
    page = client.get("/queues/").content.decode()
    rows = dict(_rows(page))
    rules = _css_indent_rules()
    for i in range(60):
        row = rows[f"deep-{i}"]
        depth = i + 1
        cls = int(re.search(r'class="tree depth-(\d+)"', row).group(1))
        assert cls == min(depth, TREE_INDENT_MAX)
        assert cls == 0 or cls in rules, f"no CSS rule for depth-{cls}"
        mark = re.search(
            r'class="depth-mark" title="([^"]*)"><span aria-hidden="true">↳</span> (\d+)</span>', row
        )
        if depth >= TREE_INDENT_MAX:
            assert mark and int(mark.group(2)) == depth, row
            assert f"parent deep-{i - 1}" in mark.group(1)
        else:
            assert mark is None
    # A depth-5 child is indented past its depth-4 parent, not level with it.
    assert rules[5] > rules[4]
    assert 'class="tree depth-6"' in rows["deep-side"]
    # No inline styles (the CSP forbids them).
    assert "style=" not in page.split("<tbody>")[1]


# --- 2. missing parents, self-parents, cycles ----------------------------------------------------


@pytest.fixture(scope="module")
def broken(tree_cluster):
    _add(
        tree_cluster,
        _queue("cyc-a", "cyc-b"),
        _queue("cyc-b", "cyc-a"),
        _queue("self-q", "self-q"),
        _queue("orphan-q", "no-such-parent"),
        _queue("orphan-kid", "orphan-q"),
        _queue("aaa-team", "root"),
    )
    return tree_cluster


def test_queue_tree_order_puts_broken_queues_after_the_real_tree():
    qs = [
        _queue("root"),
        _queue("default"),  # no spec.parent: under root, as the queue controller would patch it
        _queue("aaa", "root"),
        _queue("cyc-b", "cyc-a"),
        _queue("cyc-a", "cyc-b"),
        _queue("self-q", "self-q"),
        _queue("orphan-q", "nope"),
        _queue("orphan-kid", "orphan-q"),
    ]
    rows = queue_tree(qs)
    order = [(objects.name(r.queue), r.depth, r.problem) for r in rows]
    assert order == [
        ("root", 0, ""),
        ("aaa", 1, ""),
        ("default", 1, ""),
        ("cyc-a", 0, "cycle"),
        ("cyc-b", 1, "cycle"),
        ("orphan-q", 0, "missing_parent"),
        ("orphan-kid", 1, ""),
        ("self-q", 0, "self_parent"),
    ]
    by_name = {objects.name(r.queue): r for r in rows}
    assert by_name["cyc-a"].cycle == ("cyc-a", "cyc-b", "cyc-a")
    assert by_name["cyc-b"].cycle == ("cyc-b", "cyc-a", "cyc-b")
    assert by_name["orphan-q"].parent == "nope"
    # Deterministic whatever the input order.
    again = queue_tree(list(reversed(qs)))
    assert [objects.name(r.queue) for r in again] == [o[0] for o in order]


def test_queue_list_shows_broken_hierarchy_hints_after_root(broken, client):
    page = client.get("/queues/").content.decode()
    rows = _rows(page)
    order = [n for n, _ in rows]
    assert order[0] == "root"
    assert order.index("orphan-q") > order.index("default") > order.index("root")
    assert order.index("orphan-q") > order.index("aaa-team")
    assert order.index("orphan-kid") == order.index("orphan-q") + 1
    html = dict(rows)
    assert "parent “no-such-parent” not found" in text(html["orphan-q"])
    assert "parent cycle: cyc-a → cyc-b → cyc-a" in text(html["cyc-a"])
    assert "parent cycle: cyc-b → cyc-a → cyc-b" in text(html["cyc-b"])
    assert "its own parent" in text(html["self-q"])
    for quiet in ("root", "default", "aaa-team", "orphan-kid"):
        assert "tree-hint" not in html[quiet], quiet


def test_overview_and_kiosk_queue_tables_show_the_hints(broken, client):
    overview = text(client.get("/").content.decode())
    assert "parent “no-such-parent” not found" in overview
    assert "parent cycle: cyc-a → cyc-b → cyc-a" in overview and "its own parent" in overview
    kiosk = client.get("/kiosk/").content.decode()
    # The kiosk shows 12 rows; broken queues beyond them are still named.
    shown = re.findall(r'<span class="kq-name">([^<]+)</span>', kiosk)
    for name in ("orphan-q", "cyc-a", "self-q"):
        assert name in shown or re.search(rf"outside the tree[^<]*{name}", kiosk), name


def _crumbs(page: str) -> str:
    return page.split('class="crumbs" aria-label="Breadcrumb">')[1].split("</nav>")[0]


def test_queue_detail_pages_say_why_the_parent_is_odd(broken, client):
    page = client.get("/queues/orphan-q/").content.decode()
    assert "parent “no-such-parent” not found" in text(page)
    assert 'href="/queues/no-such-parent/"' not in page  # no link to a 404
    assert 'href="/queues/orphan-kid/"' in page
    page = client.get("/queues/cyc-a/").content.decode()
    assert "parent cycle: cyc-a → cyc-b → cyc-a" in text(page)
    page = client.get("/queues/self-q/").content.decode()
    assert "its own parent" in text(page)
    crumbs = _crumbs(page)
    assert text(crumbs).split() == ["Queues", "/", "parent", "cycle:", "self-q", "→", "self-q"], text(crumbs)
    assert crumbs.count('aria-current="page"') == 1
    crumbs = _crumbs(client.get("/queues/cyc-a/").content.decode())
    assert "parent cycle: cyc-a → cyc-b → cyc-a" in text(crumbs) and 'href="/queues/cyc-b/"' in crumbs
    assert "Child queues" not in text(page)  # not listed as its own child
    # A child's page is not an orphan's: its parent is in the cache, just not on the page.
    assert "tree-hint" not in client.get("/queues/orphan-kid/").content.decode()
    assert "tree-hint" not in client.get("/queues/aaa-team/").content.decode()


def test_cached_row_html_follows_a_hint_that_changes_without_a_move(tree_cluster, client):
    """m-a's row keeps its depth, children and Queue object when its missing parent appears and
    closes a cycle: only the hint changes, and the row cache must notice."""
    _add(tree_cluster, _queue("m-a", "m-z"), _queue("m-a-kid", "m-a"))
    row = dict(_rows(client.get("/queues/").content.decode()))["m-a"]
    assert "parent “m-z” not found" in text(row)
    _add(tree_cluster, _queue("m-z", "m-a"))
    row = dict(_rows(client.get("/queues/").content.decode()))["m-a"]
    assert "parent cycle: m-a → m-z → m-a" in text(row), row
    assert "not found" not in text(row)


# --- 3. kiosk ?rotate= ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "rotate", "note"),
    [
        ("-1", 0, "ignored"),
        ("abc", 0, "ignored"),
        ("1.5", 0, "ignored"),
        ("0", 0, "rotation off"),
        ("99999999999999999999", 3600, "more than 3600"),
        ("15", 15, ""),
        ("", 0, ""),
    ],
)
def test_kiosk_rotate_is_clamped_or_ignored_visibly(tree_cluster, client, raw, rotate, note):
    page = client.get("/kiosk/", {"rotate": raw}).content.decode()
    poll = int(re.search(r'data-kiosk-poll="(\d+)"', page).group(1))
    if rotate:
        assert 1 <= poll <= rotate
    found = re.search(r'<p class="hint small kiosk-rotate-note" role="status">([^<]*)</p>', page)
    if note:
        assert found and note in found.group(1), page
    else:
        assert found is None
    assert ("kiosk-focus-name" in page) == bool(rotate)


def test_kiosk_rotate_note_escapes_the_value(tree_cluster, client):
    page = client.get("/kiosk/", {"rotate": "<script>x</script>"}).content.decode()
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page
