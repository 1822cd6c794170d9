"""The small things of the detail pages: the page's kubectl command, copy buttons, the YAML as a
download (the text of the page's YAML card), the pod page's breadcrumb, the language menu and the
preference cookies' lifetime."""

from __future__ import annotations

import html
import re

import pytest

from dashboard.views.prefs import THEME_COOKIE, THEME_COOKIE_AGE
from tests.pages.helpers import pods, text

pytestmark = pytest.mark.usefixtures("demo_cache")

YEAR = 365 * 86400


def _pod(demo_cluster) -> tuple[str, str, str]:
    pod = pods(demo_cluster, "team-vision")[0]
    md = pod["metadata"]
    return md["namespace"], md["name"], md["annotations"]["scheduling.k8s.io/group-name"]


def _pages(demo_cluster) -> list[tuple[str, str]]:
    ns, pod, group = _pod(demo_cluster)
    return [
        ("/jobs/team-nlp/bert-pretrain-xl/", "kubectl get vcjob -n team-nlp bert-pretrain-xl -o yaml"),
        (f"/podgroups/{ns}/{group}/", f"kubectl get podgroup -n {ns} {group} -o yaml"),
        ("/queues/research-nlp/", "kubectl get queue research-nlp -o yaml"),
        (f"/pods/{ns}/{pod}/", f"kubectl get pod -n {ns} {pod} -o yaml"),
    ]


def _yaml_card(page: str) -> str:
    m = re.search(r'<pre class="code"><code>(.*?)</code></pre>', page, re.S)
    assert m
    return html.unescape(m.group(1))


def test_every_detail_page_shows_its_kubectl_command_with_a_copy_button(client, demo_cluster):
    for url, command in _pages(demo_cluster):
        page = client.get(url).content.decode()
        assert f"<code data-kubectl>{command}</code>" in page, url
        assert f'data-copy="{command}"' in page, url
        # The object's name has its own copy button; buttons stay hidden until copy.js runs.
        name = url.rstrip("/").rsplit("/", 1)[1]
        assert f'class="copy-btn" data-copy="{name}"' in page, url
        assert re.search(r'<button type="button" class="copy-btn"[^>]* hidden>', page)


def test_the_yaml_downloads_as_the_text_of_the_yaml_card(client, demo_cluster):
    for url, _command in _pages(demo_cluster):
        page = client.get(url).content.decode()
        download = url + "yaml/"
        assert f'href="{download}" download' in page, url
        resp = client.get(download)
        assert resp.status_code == 200, download
        assert resp["Content-Type"] == "application/yaml; charset=utf-8"
        assert resp["Content-Disposition"].startswith('attachment; filename="')
        assert resp["Content-Disposition"].endswith('.yaml"')
        assert resp.content.decode() == _yaml_card(page), download
        assert "managedFields" not in resp.content.decode()


def test_a_missing_object_has_no_yaml(client):
    assert client.get("/jobs/team-nlp/no-such-job/yaml/").status_code == 404
    assert client.get("/queues/no-such-queue/yaml/").status_code == 404
    assert client.post("/jobs/team-nlp/bert-pretrain-xl/yaml/").status_code in (403, 405)


def test_a_long_podgroup_name_is_shortened_in_the_middle_with_the_full_name(client):
    page = client.get("/jobs/team-nlp/bert-pretrain-xl/").content.decode()
    m = re.search(
        r'<a class="objlink" href="/podgroups/team-nlp/([^/"]+)/" title="([^"]+)"><span class="mid">', page
    )
    assert m and m.group(1) == m.group(2) and m.group(1).startswith("bert-pretrain-xl-")
    assert f'data-copy="{m.group(1)}"' in page


def test_the_pod_page_breadcrumb_names_the_namespace(client, demo_cluster):
    ns, pod, _group = _pod(demo_cluster)
    page = client.get(f"/pods/{ns}/{pod}/").content.decode()
    crumbs = re.search(r'<nav class="crumbs".*?</nav>', page, re.S)
    assert crumbs
    assert "data-crumb-ns" in crumbs.group(0) and ns in text(crumbs.group(0))


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_language_menu_names_each_language_in_itself(client, language):
    client.post("/i18n/setlang/", {"language": language, "next": "/"})
    page = client.get("/").content.decode()
    menu = re.search(r'<select id="lang-select".*?</select>', page, re.S)
    assert menu
    options = re.findall(r'<option value="([^"]+)" lang="[^"]+"[^>]*>([^<]+)</option>', menu.group(0))
    assert options == [("en", "English"), ("zh-hans", "简体中文")]


def test_the_language_and_theme_cookies_last_a_year(client):
    resp = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    assert int(resp.cookies["django_language"]["max-age"]) == YEAR
    resp = client.get("/prefs/theme/?theme=dark&next=/")
    assert THEME_COOKIE_AGE == YEAR
    assert int(resp.cookies[THEME_COOKIE]["max-age"]) == YEAR
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})


def test_the_queue_list_states_the_capability_and_the_unset_note_once(client):
    page = client.get("/queues/").content.decode()
    body = text(page)
    # archive: no deserved, so its percentage is of the capability, whose value follows it.
    row = text(re.search(r'<tr data-queue="archive">.*?</tr>', page, re.S).group(0))
    assert re.search(r"\d+% of capability \d", row), row
    assert body.count("no guarantee, deserved or capability set") == 1
    assert page.count("data-noref>") > 1  # the mark on each such bar
