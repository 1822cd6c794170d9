"""Memoised overview/queue sections hold translated text (why-pending findings, phase placeholders):
a viewer must get their own language whichever language computed the section first."""

from __future__ import annotations

import re

import pytest

from dashboard.views import memo, queue_summary
from tests.pages.helpers import text

pytestmark = pytest.mark.usefixtures("demo_cache")

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def empty_memos(monkeypatch):
    monkeypatch.setattr(memo, "SECTIONS", memo.SectionMemo())
    monkeypatch.setattr(queue_summary, "QUEUE_FIELDS", {})


def _get(client, path: str, lang: str, htmx: bool) -> str:
    client.cookies["django_language"] = lang
    headers = {"HX-Request": "true"} if htmx else {}
    resp = client.get(path, headers=headers)
    assert resp.status_code == 200
    return resp.content.decode()


def _attention(page: str) -> str:
    m = re.search(r'id="frag-attention".*?(?=id="frag-(?:queues|events)"|\Z)', page, re.S)
    assert m, "no attention section"
    return text(m.group(0))


@pytest.mark.parametrize("first", ["zh-hans", "en"])
def test_needs_attention_is_in_each_viewers_language_whichever_came_first(client, first):
    second = "en" if first == "zh-hans" else "zh-hans"
    alone = {}
    for lang in (first, second):
        memo.SECTIONS.clear()
        alone[lang] = _attention(_get(client, "/", lang, htmx=False))
    assert CJK.search(alone["zh-hans"]) and not CJK.search(alone["en"])
    memo.SECTIONS.clear()
    _get(client, "/?f=attention", first, htmx=True)
    assert _attention(_get(client, "/", second, htmx=False)) == alone[second]
    _get(client, "/?f=attention", second, htmx=True)
    assert _attention(_get(client, "/", first, htmx=False)) == alone[first]


@pytest.mark.parametrize("first", ["zh-hans", "en"])
def test_queue_state_placeholder_follows_the_language(client, first, demo_cluster):
    from tests.pages.helpers import kind

    name = f"memo-nostatus-{first}"
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1},
    }
    from dashboard.kube import get_cluster_cache

    demo_cluster.store.create(kind("scheduling.volcano.sh", "queues"), obj, None, replay=True)
    get_cluster_cache().wait_for(lambda s: s.queues.get(None, name) is not None, timeout=10)
    second = "en" if first == "zh-hans" else "zh-hans"
    pages = {lang: _get(client, "/queues/", lang, htmx=False) for lang in (first, second)}
    row_re = rf"<tr[^>]*>(?:(?!</tr>).)*{name}(?:(?!</tr>).)*</tr>"
    row = {lang: re.search(row_re, pg, re.S) for lang, pg in pages.items()}
    assert "No status" in text(row["en"].group(0))
    assert "No status" not in text(row["zh-hans"].group(0))
