"""The templates: no line over 200 characters; every page of the demo (and every fragment it
refreshes) is well-formed HTML with each element closed; the Jobs and PodGroups lists draw their
filter form from one include.

Well-formed is checked twice: html5lib in strict mode (the WHATWG parsing algorithm, which raises on
any parse error: stray or misnested end tags, duplicate attributes, an element left open at
``</body>``), and an explicit-closing check html5lib does not make (an HTML parser silently closes an
unclosed ``<p>``, ``<li>`` or ``<td>``; the templates close every element they open). Ids are unique
on a page (``aria-labelledby`` and the htmx fragment targets resolve by id).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import html5lib
import pytest
from django.conf import settings

MAX_LINE = 200

# Elements that have no end tag (WHATWG HTML, "void elements").
VOID = frozenset(
    ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]
)

# Lists and the kiosk, then pages reached through their links; the filter cases exercise every
# branch of the filter form and its notes (unlisted namespace and queue, unknown phase, bad selector).
SEEDS = (
    "/",
    "/jobs/",
    "/podgroups/",
    "/queues/",
    "/kiosk/",
    "/kiosk/?rotate=10",
    "/jobs/?ns=nowhere&queue=no-queue&phase=Weird&selector=a%3D%3D%3D&q=x",
    "/podgroups/?ns=nowhere&queue=no-queue&phase=Weird&selector=a%3D%3D%3D&q=x",
    "/jobs/?page=2",
    "/jobs/no-such-namespace/no-such-job/",
)
LINK = re.compile(r'href="(/(?:jobs|podgroups|queues|pods)/[^"?#]+/)"')
FRAGMENT = re.compile(r'id="frag-([a-z]+)" hx-get="([^"]+)"')
DETAILS_PER_KIND = 3


def _template_files() -> list[Path]:
    dirs = [Path(d) for d in settings.TEMPLATES[0]["DIRS"]]
    dirs.append(Path(__file__).resolve().parents[1] / "dashboard" / "templates")
    return sorted(p for d in dirs for p in d.rglob("*.html"))


def test_no_template_line_is_over_200_characters():
    files = _template_files()
    assert any(p.name == "base.html" for p in files), "the template directories were not found"
    long = [
        f"{path.name}:{number} ({len(line)} characters)"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > MAX_LINE
    ]
    assert not long, f"template lines over {MAX_LINE} characters: {long}"


class _Closing(HTMLParser):
    """Every non-void element closed by its own end tag, in order; self-closing syntax only inside
    ``<svg>`` (foreign content)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, tuple[int, int]]] = []
        self.errors: list[str] = []
        self.ids: Counter[str] = Counter()

    def _ids(self, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids[value] += 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._ids(attrs)
        if tag not in VOID:
            self.open.append((tag, self.getpos()))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._ids(attrs)
        if tag not in VOID and not any(t == "svg" for t, _ in self.open):
            self.errors.append(f"<{tag}/> at line {self.getpos()[0]}: not a void element")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.errors.append(f"</{tag}> at line {self.getpos()[0]}: a void element has no end tag")
        elif self.open and self.open[-1][0] == tag:
            self.open.pop()
        else:
            still = [t for t, _ in self.open[-3:]]
            self.errors.append(f"</{tag}> at line {self.getpos()[0]} while {still} are open")
            for i in range(len(self.open) - 1, -1, -1):
                if self.open[i][0] == tag:
                    del self.open[i:]
                    break

    def close(self) -> None:
        super().close()
        self.errors += [f"<{t}> from line {pos[0]} is never closed" for t, pos in self.open]
        self.errors += [f'id="{i}" appears {n} times' for i, n in self.ids.items() if n > 1]


def markup_errors(markup: str, fragment: bool = False) -> list[str]:
    """Why ``markup`` (a whole document, or a fragment when ``fragment``) is not well-formed; [] when
    it is."""
    checker = _Closing()
    checker.feed(markup)
    checker.close()
    errors = checker.errors
    parser = html5lib.HTMLParser(strict=True)
    try:
        (parser.parseFragment if fragment else parser.parse)(markup)
    except html5lib.html5parser.ParseError as exc:
        errors.append(f"html5lib: {exc}")
    return errors


def test_the_checker_finds_unclosed_and_unbalanced_elements():
    page = "<!doctype html><html lang='en'><head><title>t</title></head><body>{}</body></html>"
    assert markup_errors(page.format("<main><p>a</p></main>")) == []
    assert markup_errors(page.format("<footer><span>a</span>"))  # left open at </body>
    assert markup_errors(page.format("<ul><li>a<li>b</ul>"))  # implied </li>: html5lib accepts it
    assert markup_errors(page.format("<div><span>a</div></span>"))
    assert markup_errors(page.format("<p id='x'>a</p><p id='x'>b</p>"))
    assert markup_errors("<section><svg><path d='M0 0'/></svg></section>", fragment=True) == []


@pytest.fixture(scope="module")
def demo_cache(demo_cluster, tmp_path_factory):
    from tests.pages.conftest import installed_cache

    with installed_cache(demo_cluster, tmp_path_factory.mktemp("templates")) as cache:
        yield cache


@pytest.fixture(scope="module")
def demo_pages(demo_cache) -> dict[str, tuple[str, bool]]:
    """url -> (rendered markup, is a fragment) for the demo's pages and each fragment they refresh
    (a version the server never issued makes a fragment render instead of answering 204)."""
    from django.test import Client

    client = Client()
    htmx = {"HX-Request": "true"}
    rendered: dict[str, tuple[str, bool]] = {}
    queue = list(SEEDS)
    per_kind: Counter[str] = Counter()
    while queue:
        url = queue.pop(0)
        if url in rendered:
            continue
        resp = client.get(url)
        assert resp.status_code in (200, 404), (url, resp.status_code)
        page = resp.content.decode()
        rendered[url] = (page, False)
        for _name, hx_get in FRAGMENT.findall(page):
            frag_url = re.sub(r"([?&])v=[^&]*", r"\1v=stale", html.unescape(hx_get))
            frag = client.get(frag_url, headers=htmx)
            assert frag.status_code == 200, (frag_url, frag.status_code)
            rendered[frag_url] = (frag.content.decode(), True)
        for link in LINK.findall(page):
            kind = link.split("/")[1]
            if link not in rendered and link not in queue and per_kind[kind] < DETAILS_PER_KIND:
                per_kind[kind] += 1
                queue.append(link)
    assert set(per_kind) == {"jobs", "podgroups", "queues", "pods"}
    return rendered


def test_every_page_and_fragment_of_the_demo_is_well_formed(demo_pages):
    assert len(demo_pages) > 40
    bad = {
        url: errors[:5]
        for url, (markup, fragment) in demo_pages.items()
        if (errors := markup_errors(markup, fragment=fragment))
    }
    assert not bad, bad
    leaked = [url for url, (markup, _) in demo_pages.items() if re.search(r"\{[%#]|[%#]\}", markup)]
    assert not leaked, f"template syntax in the output of {leaked}"


def _form(page: str) -> str:
    """The filter form's markup without what is meant to differ between the lists: the list's own
    address, the options the cluster supplies and the list's phases (one checkbox each)."""
    m = re.search(r'<form class="filters card".*?</form>', page, re.S)
    assert m, "no filter form"
    form = re.sub(r'"/(jobs|podgroups)/"', '"LIST"', m.group(0))
    form = re.sub(r"<option value=\"[^\"]+\"[^>]*>[^<]*</option>", "", form)
    form = re.sub(r'<label class="phase-check">.*?</label>', "", form, flags=re.S)
    return re.sub(r">\s+<", "><", form)


@pytest.mark.usefixtures("demo_cache")
def test_the_filter_form_of_the_jobs_and_podgroups_lists_comes_from_one_include(client):
    root = Path(settings.TEMPLATES[0]["DIRS"][0]) / "dashboard"
    for page in ("jobs.html", "podgroups.html"):
        source = (root / page).read_text(encoding="utf-8")
        assert "<form" not in source and source.count('{% include "dashboard/_filters.html"') == 1, page
    jobs, podgroups = client.get("/jobs/"), client.get("/podgroups/")
    for resp in (jobs, podgroups):
        assert "dashboard/_filters.html" in [t.name for t in resp.templates]
    assert _form(jobs.content.decode()) == _form(podgroups.content.decode())


# The list pages whose results start with the blocked notice, the hidden-namespace note, the phase
# chips and the count: each draws them from _results_head.html.
RESULT_LISTS = ("cronjobs", "jobflows", "jobtemplates", "jobs", "nodes", "podgroups")


def test_every_list_page_draws_its_results_head_from_one_include():
    root = Path(settings.TEMPLATES[0]["DIRS"][0]) / "dashboard"
    for page in RESULT_LISTS:
        source = (root / f"{page}.html").read_text(encoding="utf-8")
        assert source.count('{% include "dashboard/_results_head.html"') == 1, page
        own = ('class="result-count', "data-unavailable", '"dashboard/_phase_filter.html"', "_scope.html")
        assert not [x for x in own if x in source], page
