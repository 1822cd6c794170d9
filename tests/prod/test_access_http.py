"""Per-namespace access over real HTTP against the simulated cluster (demo scenario).

Two namespace-scoped users, alice (team-vision) and bob (team-nlp), in ``proxy`` and ``token`` mode:
each crawls every page, fragment and YAML view reachable from the dashboard (every route in
dashboard/urls.py, for every object they may see, plus every link and hx-get on those pages), and
no response may name another namespace's Jobs, PodGroups, Pods or the namespaces themselves; the
other namespaces' object URLs answer 404. Counts are checked by rendering the same pages from a
cache that holds only the user's namespaces: they must come out identical.
"""

from __future__ import annotations

import html
import http.client
import re
import stat
from collections import deque
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.prod.conftest import (
    ALICE,
    BOB,
    links,
    proxy_session,
    proxy_settings,
    token_session,
    token_settings,
)

# Crawls every page and fragment over real HTTP for two users in two modes: about a minute.
pytestmark = pytest.mark.slow

# Which kind's objects fill the arguments of each route that takes some.
DETAIL_ROUTES = {
    "job_detail": "jobs",
    "podgroup_detail": "podgroups",
    "pod_detail": "pods",
    "queue_detail": "queues",
    "pod_logs": "pods",
    "job_logs": "jobs",
    "job_yaml": "jobs",
    "podgroup_yaml": "podgroups",
    "pod_yaml": "pods",
    "queue_yaml": "queues",
    "cronjob_detail": "cronjobs",
    "jobflow_detail": "jobflows",
    "jobtemplate_detail": "jobtemplates",
    "node_detail": "nodes",
    "hypernode_detail": "hypernodes",
}
# Cluster-scoped kinds: every user's crawl reaches every object page (what it shows is filtered).
CLUSTER_KINDS = {"queues", "nodes", "hypernodes"}
# Routes that take arguments but are not object pages (handled by their own tests).
OTHER_ARG_ROUTES = {"job_action", "queue_action"}
# POST-only routes (a GET answers 405).
SKIP = ("/sign-out/", "/i18n/setlang/", "/prefs/theme/")


def _routes(resolver=None, prefix="") -> list[tuple[str, str, list[str]]]:
    """(url name, route text, argument names) for every named route of the URLconf."""
    out = []
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            out += _routes(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern) and entry.name:
            route = prefix + str(entry.pattern)
            out.append((entry.name, route, re.findall(r"<(?:\w+:)?(\w+)>", route)))
    return out


def _object_urls(snap, namespaces: set[str] | None) -> dict[str, tuple[str, str | None, str]]:
    """{url: (kind, namespace, name)} for every object page; only ``namespaces`` when given."""
    urls = {}
    for url_name, route, args in _routes():
        if not args:
            continue
        if url_name in OTHER_ARG_ROUTES:
            continue
        assert url_name in DETAIL_ROUTES, f"new route {url_name} ({route}): teach this test its objects"
        kind = DETAIL_ROUTES[url_name]
        for obj in getattr(snap, kind).all():
            meta = obj["metadata"]
            ns = meta.get("namespace")
            if kind not in CLUSTER_KINDS and namespaces is not None and ns not in namespaces:
                continue
            kwargs = {"name": meta["name"]} | ({"namespace": ns} if "namespace" in args else {})
            urls[reverse(url_name, kwargs=kwargs)] = (kind, ns, meta["name"])
    return urls


def _plain_urls() -> list[str]:
    return [reverse(name) for name, _, args in _routes() if not args and not reverse(name).startswith(SKIP)]


@pytest.fixture(scope="module")
def teams(demo_cluster):
    for name, token, namespace in (ALICE, BOB):
        demo_cluster.add_user(name, token, [namespace])
    return demo_cluster


def _forbidden_tokens(snap, own_namespace: str) -> set[str]:
    """Names that must never appear in ``own_namespace``'s user's pages: other namespaces and
    their Jobs, PodGroups and Pods. Names that are also part of something the user may see (a
    Queue name, their own objects) are left out, as they would match legitimately."""
    allowed_text = {own_namespace}
    foreign = set()
    for kind in ("jobs", "podgroups", "pods"):
        for obj in getattr(snap, kind).all():
            meta = obj["metadata"]
            (allowed_text if meta["namespace"] == own_namespace else foreign).add(meta["name"])
            if meta["namespace"] != own_namespace:
                foreign.add(meta["namespace"])
    allowed_text |= {q["metadata"]["name"] for q in snap.queues.all()}
    allowed_text |= {(n.get("spec") or {}).get("nodeName", "") for n in snap.pods.all()}
    return {tok for tok in foreign if not any(tok in text for text in allowed_text)}


def _crawl(
    session: requests.Session, base: str, seeds: list[str], limit: int = 2500
) -> dict[str, tuple[int, str]]:
    """GET every seed and every page/fragment linked from the answers; {path: (status, body)}.

    Fragment URLs (``?f=``) are fetched as htmx does, with ``HX-Request: true``.
    """
    bodies: dict[str, tuple[int, str]] = {}
    queue = deque(dict.fromkeys(seeds))
    seen = {_crawl_key(path) for path in queue}
    while queue and len(bodies) < limit:
        path = queue.popleft()
        headers = {"HX-Request": "true"} if re.search(r"[?&]f=", path) else {}
        response = session.get(base + path, headers=headers, allow_redirects=False)
        # 400: a probe asked a page for a fragment it does not have (``?f=results`` on every path).
        ok = (200, 204, 302, 404, 400) if re.search(r"[?&]f=", path) else (200, 204, 302, 404)
        # A kind the user's view cannot read at this moment (a re-list under load) answers its
        # "cannot be read" page: 503 with Retry-After, never a 404 or an empty page.
        unreadable = response.status_code == 503 and "Retry-After" in response.headers
        assert response.status_code in ok or unreadable, (path, response.status_code, response.text[:300])
        bodies[path] = (response.status_code, response.text)
        if response.status_code == 200 and "html" in response.headers.get("Content-Type", ""):
            for link in links(base, base + path, response.text):
                if _crawl_key(link) not in seen and not link.startswith(SKIP):
                    seen.add(_crawl_key(link))
                    queue.append(link)
    assert not queue, f"crawl limit reached with {len(queue)} URLs left"
    return bodies


# Query parameters that only reorder or version a page: one representative URL per other value set.
_ORDER_ONLY = {"sort", "v"}


def _crawl_key(path: str) -> tuple:
    """One representative URL per path and filter set. The phase chips add phases one at a time, so
    a list links to every combination of its phases: only how many phases are chosen (none, one,
    several) and which single one counts, or the crawl would be exponential."""
    parts = urlsplit(path)
    pairs = [(k, v) for k, v in parse_qsl(parts.query) if k not in _ORDER_ONLY]
    phases = [v for k, v in pairs if k == "phase"]
    query = frozenset((k, v) for k, v in pairs if k != "phase")
    return parts.path, query, phases[0] if len(phases) == 1 else min(len(phases), 2)


def _filter_probes(others: set[str], foreign_names: set[str]) -> list[str]:
    """List pages asked, by query string, for another namespace or another namespace's object."""
    probes = []
    for name, _, args in _routes():
        path = reverse(name) if not args else None
        if path is None or path.startswith(SKIP) or path.startswith(("/sign-in/", "/static/")):
            continue
        for ns in sorted(others):
            probes += [f"{path}?ns={ns}", f"{path}?namespace={ns}", f"{path}?ns={ns}&f=results"]
        for obj in sorted(foreign_names)[:5]:
            probes.append(f"{path}?q={obj}")
    return probes


def _sessions(mode: str, base: str, cluster) -> dict[str, requests.Session]:
    if mode == "proxy":
        return {name: proxy_session(name) for name, _, _ in (ALICE, BOB)}
    return {name: token_session(base, token) for name, token, _ in (ALICE, BOB)}


@pytest.mark.parametrize("mode", ["proxy", "token"])
def test_each_user_sees_only_their_namespace_on_every_page_and_fragment(
    mode, teams, installed_cache, dashboard_server
):
    server = dashboard_server(**(proxy_settings() if mode == "proxy" else token_settings()))
    snap = installed_cache.snapshot()
    sessions = _sessions(mode, server.url, teams)
    for name, _, namespace in (ALICE, BOB):
        own = _object_urls(snap, {namespace})
        others = {u: v for u, v in _object_urls(snap, None).items() if u not in own}
        assert any(kind == "jobs" for kind, _, _ in own.values()), "the user has Jobs to see"
        forbidden = _forbidden_tokens(snap, namespace)
        assert forbidden, "the test needs other namespaces' objects to look for"
        other_namespaces = {ns for _, ns, _ in others.values() if ns and ns != namespace}
        probes = _filter_probes(other_namespaces, forbidden - other_namespaces)
        bodies = _crawl(sessions[name], server.url, _plain_urls() + sorted(own) + probes)
        for path, (_, body) in bodies.items():
            # A page may echo what the request asked for (a filter value, a 404's name): not a leak.
            leaked = sorted(tok for tok in forbidden if tok in body and tok not in path)
            assert not leaked, f"{name} ({mode}) saw {leaked[:5]} at {path}"
        # The user's own objects are visible (the crawl is not vacuous).
        assert all(bodies[url][0] == 200 for url in own), [u for u in own if bodies[u][0] != 200][:5]
        jobs_list = bodies[reverse("jobs")][1]
        assert all(obj in jobs_list for kind, _, obj in own.values() if kind == "jobs")
        # Other namespaces' object pages, and their fragments, do not exist for this user.
        fragments = sorted({m for _, b in bodies.values() for m in re.findall(r"[?&]f=([\w-]+)", b)})
        for url, (kind, _, _) in others.items():
            if kind == "queues":
                continue
            response = sessions[name].get(server.url + url, allow_redirects=False)
            assert response.status_code == 404, (name, url, response.status_code)
            for frag in fragments:
                response = sessions[name].get(
                    f"{server.url}{url}?f={frag}", headers={"HX-Request": "true"}, allow_redirects=False
                )
                assert response.status_code == 404, (name, url, frag, response.status_code)


def test_identity_headers_from_an_untrusted_address_are_ignored(teams, installed_cache, dashboard_server):
    server = dashboard_server(**proxy_settings())
    host, port = server.url.removeprefix("http://").split(":")

    def get(source: str) -> int:
        conn = http.client.HTTPConnection(host, int(port), timeout=10, source_address=(source, 0))
        conn.request("GET", "/jobs/", headers={"X-Forwarded-User": "alice", "Host": "127.0.0.1"})
        status = conn.getresponse().status
        conn.close()
        return status

    assert get("127.0.0.1") == 200  # the trusted proxy's address
    assert get("127.0.0.2") == 401  # anyone else on the network


def test_a_user_without_any_rbac_sees_no_namespace(teams, installed_cache, dashboard_server):
    server = dashboard_server(**proxy_settings())
    response = proxy_session("mallory").get(server.url + "/jobs/")
    assert response.status_code == 200
    forbidden = _forbidden_tokens(installed_cache.snapshot(), "no-such-namespace")
    assert not [tok for tok in forbidden if tok in response.text]


def test_a_cluster_wide_user_sees_every_namespace(teams, installed_cache, dashboard_server):
    teams.add_user("carol", "token-carol-0123456789", None)
    server = dashboard_server(**proxy_settings())
    body = proxy_session("carol").get(server.url + "/jobs/").text
    assert "team-vision" in body and "team-nlp" in body


def test_node_usage_is_unknown_for_a_user_limited_to_namespaces(teams, installed_cache, dashboard_server):
    """What a node has requested and free counts every namespace's pods: a user who reads some
    namespaces only gets "—" and a note, not the requests of their own pods passed off as the node's."""
    teams.add_user("carol", "token-carol-0123456789", None)
    server = dashboard_server(**proxy_settings())
    snap = installed_cache.snapshot()
    node = next(
        n
        for n in sorted(p["spec"].get("nodeName") or "" for p in snap.pods.all())
        if n and snap.nodes.get(None, n) is not None
    )

    def row(user: str) -> tuple[str, str]:
        body = proxy_session(user).get(server.url + "/nodes/").text
        return body, body.split(f'data-node="{node}"')[1].split("</tr>")[0]

    def requested(cells_of: str) -> list[str]:
        # cpu and memory: "requested / allocatable"
        cells = re.findall(r'<td class="nowrap">(.*?)</td>', cells_of, re.S)
        return [re.sub(r"<[^>]+>", "", c).strip() for c in cells if " / " in c][:2]

    limited, limited_row = row(ALICE[0])
    assert "data-usage-scope" in limited
    assert requested(limited_row) and all(c.startswith("— / ") for c in requested(limited_row)), limited_row
    everything, everything_row = row("carol")
    assert "data-usage-scope" not in everything
    assert requested(everything_row) and not any(c.startswith("—") for c in requested(everything_row))
    detail = proxy_session(ALICE[0]).get(server.url + f"/nodes/{node}/").text
    assert "data-usage-scope" in detail


def test_an_invalid_token_is_refused_and_gives_no_session(teams, installed_cache, dashboard_server):
    server = dashboard_server(**token_settings())
    session = requests.Session()
    page = session.get(server.url + "/sign-in/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = session.post(
        server.url + "/sign-in/",
        data={"token": "not-a-real-token", "csrfmiddlewaretoken": csrf},
        allow_redirects=False,
    )
    assert response.status_code == 401
    assert "not accepted" in response.text
    assert session.get(server.url + "/jobs/", allow_redirects=False).status_code == 302
    fragment = session.get(
        server.url + "/jobs/?f=rows", headers={"HX-Request": "true"}, allow_redirects=False
    )
    assert fragment.status_code == 401


def test_the_session_cookie_holds_a_random_key_not_the_identity_or_token(
    teams, installed_cache, dashboard_server
):
    server = dashboard_server(**token_settings())
    session = token_session(server.url, ALICE[1])
    cookie = session.cookies.get("volcano_ui_session")
    assert cookie and re.fullmatch(r"[a-z0-9]{32}", cookie), cookie
    set_cookie = session.sign_in_response.headers["Set-Cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=Lax" in set_cookie
    assert "Secure" not in set_cookie  # plain http here; VOLCANO_UI_TLS=true adds it
    # The identity and the token live server-side, in a private directory.
    from django.conf import settings

    directory = Path(settings.SESSION_FILE_PATH)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert (directory / f"volcano_ui_session{cookie}").is_file()
    # A key the server did not issue is no session.
    session.cookies.clear()
    session.cookies.set("volcano_ui_session", "a" * 32)
    assert session.get(server.url + "/jobs/", allow_redirects=False).status_code == 302


def test_sign_out_forgets_the_user(teams, installed_cache, dashboard_server):
    server = dashboard_server(**token_settings())
    session = token_session(server.url, ALICE[1])
    assert session.get(server.url + "/jobs/", allow_redirects=False).status_code == 200
    page = session.get(server.url + "/jobs/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert csrf, "the page offers a sign-out form"
    response = session.post(
        server.url + "/sign-out/", data={"csrfmiddlewaretoken": csrf.group(1)}, allow_redirects=False
    )
    assert response.status_code == 302
    assert session.get(server.url + "/jobs/", allow_redirects=False).status_code == 302


def _normalized(body: str) -> str:
    """A page without what legitimately differs between two renders of the same data: CSRF
    tokens, request ids, fragment version keys (per-cache change counters), relative ages."""
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "csrf", body)
    body = re.sub(r"<time datetime=\"[^\"]+\" data-as-of>[^<]*</time>", "AS-OF", body)
    body = re.sub(r"([?&;]v=|data-version=\"|\"v\": \")[0-9a-f]+", r"\1V", body)
    body = re.sub(r"(<time[^>]*>)[^<]*(</time>)", r"\1T\2", body)
    body = re.sub(r'datetime="[^"]*\.\d+\+00:00"', "wall-clock", body)  # "data as of" (now)
    body = re.sub(r"(?<![\w-])(?:\d+[dhms])+(?![\w-])", "AGE", body)
    body = re.sub(r'data-now="\d+"', "data-now", body)  # the clock relative times tick from
    body = re.sub(r'title="Data as of [^"]*"', "as-of-title", body)  # the kiosk clock's hover text
    return body


def test_counts_and_totals_cover_only_the_users_namespaces(teams, installed_cache, dashboard_server):
    """Render every page for alice from a cache holding every namespace and from one holding only
    hers (plus the cluster-scoped Queues): anything computed from other namespaces, such as a
    count, a total or a per-queue figure, would make the two differ."""
    from dashboard.kube import ClusterCache, override_cluster_cache

    live = installed_cache.snapshot()
    namespace = ALICE[2]

    def frozen(keep) -> ClusterCache:
        # The live client is kept for the SubjectAccessReviews; nothing is started.
        cache = ClusterCache(installed_cache.client, installed_cache.options)
        for kind in live.views():
            store = cache.store(kind)
            for obj in getattr(live, kind).all():
                if keep(kind, obj):
                    store.upsert(obj)
            store.set_state("synced")
        return cache

    def own(kind, obj):
        # Cluster-scoped kinds, and the Volcano components' Deployments every user's health card reads.
        if kind in CLUSTER_KINDS or kind == "deployments":
            return True
        if kind == "events":
            return obj.get("metadata", {}).get("namespace") == namespace
        return obj["metadata"]["namespace"] == namespace

    full, reduced = frozen(lambda kind, obj: True), frozen(own)
    server = dashboard_server(**proxy_settings())
    session = proxy_session(ALICE[0])
    with override_cluster_cache(full):
        pages = _crawl(session, server.url, _plain_urls() + sorted(_object_urls(live, {namespace})))
    # Ask for every fragment without a version, so neither cache answers "unchanged" (204).
    pages = {re.sub(r"&v=[0-9a-f]+", "", path): answer for path, answer in pages.items()}
    with override_cluster_cache(full):
        for path in pages:
            if re.search(r"[?&]f=", path):
                response = session.get(
                    server.url + path, headers={"HX-Request": "true"}, allow_redirects=False
                )
                pages[path] = (response.status_code, response.text)
    assert len(pages) > 20
    differences = []
    with override_cluster_cache(reduced):
        for path, (status, body) in pages.items():
            headers = {"HX-Request": "true"} if re.search(r"[?&]f=", path) else {}
            again = session.get(server.url + path, headers=headers, allow_redirects=False)
            if again.status_code != status or _normalized(again.text) != _normalized(body):
                differences.append(path)
    assert not differences, f"pages that depend on other namespaces: {differences[:10]}"


def test_a_poll_after_a_change_of_permissions_renders_again(teams, installed_cache, dashboard_server):
    """A fragment's version is per viewer's scope: after RBAC gives Alice another namespace, her
    next poll of an unchanged list renders it (200 with the new namespace's Jobs), not 204."""
    from dashboard.access import review_cache

    server = dashboard_server(**proxy_settings())
    session = proxy_session(ALICE[0])
    page = session.get(server.url + reverse("jobs"))
    assert page.status_code == 200
    url = html.unescape(re.search(r'hx-get="([^"]*[?&]f=results[^"]*)"', page.text).group(1))
    hx = {"HX-Request": "true"}
    assert session.get(server.url + url, headers=hx).status_code == 204
    assert BOB[2] not in page.text
    teams.add_user(ALICE[0], ALICE[1], [ALICE[2], BOB[2]])
    try:
        review_cache.expire()
        again = session.get(server.url + url, headers=hx)
        assert again.status_code == 200
        assert BOB[2] in again.text
    finally:
        teams.add_user(ALICE[0], ALICE[1], [ALICE[2]])
        review_cache.expire()
