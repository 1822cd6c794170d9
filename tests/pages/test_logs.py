"""The logs pages: a Pod's (container picker, previous, tail, timestamps, search, download,
follow) and a Job's (its pods merged by time), their limits and the escaping of what logs hold."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import override_settings

from dashboard.sim.clock import rfc3339
from dashboard.sim.kinds import resolve
from tests.pages.conftest import own_cluster
from tests.pages.helpers import pods, text

POD = resolve("pods")
NS = "default"


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    with own_cluster(tmp_path_factory, seed=11, name="logs") as (cluster, cache):
        yield cluster, cache


def make_pod(cluster, cache, name, *, containers=("main",), command=None, labels=None, last=None, init=()):
    started = rfc3339(cluster.clock.now())
    spec = {
        "nodeName": "node-1",
        "schedulerName": "volcano",
        "containers": [
            {"name": c, "image": "busybox:1.36", **({"command": command} if command else {})}
            for c in containers
        ],
    }
    if init:
        spec["initContainers"] = [{"name": c, "image": "busybox:1.36"} for c in init]
    cluster.store.create(
        POD, {"metadata": {"name": name, "namespace": NS, "labels": labels or {}}, "spec": spec}
    )

    def status(obj):
        obj["status"] = {
            "phase": "Running",
            "startTime": started,
            "containerStatuses": [
                {
                    "name": c,
                    "image": "busybox:1.36",
                    "restartCount": 1 if last else 0,
                    "state": {"running": {"startedAt": started}},
                    "lastState": {"terminated": last} if last else {},
                }
                for c in containers
            ],
        }

    cluster.store.mutate(POD, NS, name, status)
    cache.wait_for(lambda snap: _has_status(snap, name), 10)


def _has_status(snap, name):
    pod = snap.pods.get(NS, name)
    return pod is not None and bool((pod.get("status") or {}).get("containerStatuses"))


def lines_of(html: str) -> list[str]:
    pre = re.search(r'<pre class="log[^"]*" id="log-lines"[^>]*>(.*?)</pre>', html, re.S)
    assert pre, "no log block"
    return [unescape(re.sub(r"<[^>]+>", "", ln)) for ln in pre.group(1).split("\n") if ln]


# ------------------------------------------------------------------ demo: failed and crashing pods
@pytest.mark.usefixtures("demo_cache")
def test_failed_pod_log_shows_the_traceback(client, demo_cluster):
    pod = next(
        p for p in pods(demo_cluster, "research") if p["metadata"]["name"].startswith("bad-config-main")
    )
    name = pod["metadata"]["name"]
    resp = client.get(f"/pods/research/{name}/logs/?tail=100")
    assert resp.status_code == 200
    shown = lines_of(resp.content.decode())
    assert any("Traceback (most recent call last):" in ln for ln in shown)
    assert shown[-1].endswith("exited with status 1")
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ", shown[0])
    plain = lines_of(client.get(f"/pods/research/{name}/logs/?ts=0").content.decode())
    assert plain[-1] == "run-batch.sh: run_batch.py exited with status 1"
    detail = client.get(f"/pods/research/{name}/").content.decode()
    assert f'href="/pods/research/{name}/logs/"' in detail


@pytest.mark.usefixtures("demo_cache")
def test_job_logs_merge_every_pod_by_time(client, demo_cluster):
    resp = client.get("/jobs/research/bad-config/logs/?tail=all")
    assert resp.status_code == 200
    page = resp.content.decode()
    shown = lines_of(page)
    sources = {re.search(r"\[([^\]]+)\]", ln).group(1) for ln in shown}
    assert sources == {"bad-config-main-0/main", "bad-config-main-1/main"}
    stamps = [ln.split(" ", 1)[0] for ln in shown]
    assert stamps == sorted(stamps)
    assert "Merged by time from 2 of 2 pods" in unescape(page)
    job_page = client.get("/jobs/research/bad-config/").content.decode()
    assert 'href="/jobs/research/bad-config/logs/"' in job_page
    assert 'href="/pods/research/bad-config-main-0/logs/"' in job_page  # each pod row
    with override_settings(VOLCANO_UI_LOGS_JOB_MAX_PODS=1):
        capped = client.get("/jobs/research/bad-config/logs/").content.decode()
    assert "data-log-capped" in capped and "Merged by time from 1 of 2 pods" in unescape(capped)


@pytest.mark.usefixtures("demo_cache")
def test_previous_container_of_a_crash_loop(client, demo_cluster):
    pod = next(
        p
        for p in pods(demo_cluster, "team-vision")
        if p["metadata"].get("labels", {}).get("volcano.sh/job-name") == "augment-crashloop"
        and any(cs.get("lastState", {}).get("terminated") for cs in p["status"].get("containerStatuses", []))
    )
    name = pod["metadata"]["name"]
    previous = lines_of(client.get(f"/pods/team-vision/{name}/logs/?previous=1").content.decode())
    assert any("Traceback" in ln for ln in previous)


@pytest.mark.usefixtures("demo_cache")
def test_an_unknown_task_of_a_job_is_named_not_replaced_by_every_task(client):
    base = "/jobs/research/bad-config/logs/"
    resp = client.get(base, {"task": "<b>nope"})
    body = resp.content.decode()
    assert resp.status_code == 404
    assert "This Job has no task “&lt;b&gt;nope”. Its tasks: main." in body and "<b>nope" not in body
    assert 'id="log-lines"' not in body and "data-log-unknown-name" in body
    for extra in ({"download": "1"}, {"after": "2026-01-01T00:00:00Z"}):
        answer = client.get(base, {"task": "<b>nope", **extra})
        assert answer.status_code == 404 and answer["Content-Type"].startswith("text/plain"), extra
        assert answer.content.decode() == "This Job has no task “<b>nope”. Its tasks: main."
    known = client.get(base, {"task": "main"})
    assert known.status_code == 200 and '<option value="main" selected>' in known.content.decode()


@pytest.mark.usefixtures("demo_cache")
def test_a_task_of_the_spec_without_pods_is_a_choice_with_no_lines(client):
    # allreduce-bench's spec has tasks mpimaster and mpiworker; only mpimaster has a pod.
    resp = client.get("/jobs/research/allreduce-bench/logs/", {"task": "mpiworker"})
    page = resp.content.decode()
    assert resp.status_code == 200 and lines_of(page) == []
    assert '<option value="mpiworker" selected>' in page and '<option value="mpimaster">' in page
    assert "Merged by time from 0 of 0 pods" in unescape(page)


# ------------------------------------------------------------------ own cluster
def test_multi_container_picker_and_download(client, own):
    cluster, cache = own
    make_pod(cluster, cache, "duo", containers=("trainer", "sidecar"))
    cluster.advance(20)
    page = client.get(f"/pods/{NS}/duo/logs/").content.decode()
    assert '<option value="trainer" selected>' in page and '<option value="sidecar">' in page
    sidecar = client.get(f"/pods/{NS}/duo/logs/?container=sidecar&ts=0")
    assert sidecar.status_code == 200 and lines_of(sidecar.content.decode())
    dl = client.get(f"/pods/{NS}/duo/logs/?container=sidecar&ts=0&download=1")
    assert dl["Content-Type"].startswith("text/plain")
    assert dl["Content-Disposition"] == 'attachment; filename="default_duo_sidecar.log"'
    assert dl.content.decode().splitlines() == lines_of(sidecar.content.decode())
    missing = client.get(f"/pods/{NS}/duo/logs/?previous=1").content.decode()
    assert "previous terminated container &quot;trainer&quot; in pod &quot;duo&quot; not found" in missing


def test_a_hostile_container_name_is_quoted_in_the_download_name(client, own):
    cluster, cache = own
    evil = 'a"; filename=evil.html; x="\r\nSet-Cookie: y'
    make_pod(cluster, cache, "quoted", containers=(evil,))
    cluster.advance(20)
    dl = client.get(f"/pods/{NS}/quoted/logs/", {"container": evil, "download": "1"})
    assert dl.status_code == 200
    header = dl["Content-Disposition"]
    quoted = 'default_quoted_a\\"; filename=evil.html; x=\\"__Set-Cookie: y.log'
    assert header == f'attachment; filename="{quoted}"'


def test_an_unknown_container_is_named_not_replaced_by_another(client, own):
    cluster, cache = own
    make_pod(cluster, cache, "trio", containers=("trainer", "sidecar"), init=("fetch",))
    cluster.advance(20)
    base = f"/pods/{NS}/trio/logs/?container=%3Cb%3Enope"
    page = client.get(base)
    body = page.content.decode()
    assert page.status_code == 404
    assert "This pod has no container “&lt;b&gt;nope”." in body and "<b>nope" not in body
    assert "Its containers: trainer, sidecar. Its init containers: fetch." in body
    assert 'id="log-lines"' not in body
    for extra in ("&download=1", "&after=2026-01-01T00:00:00Z"):
        answer = client.get(base + extra)
        assert answer.status_code == 404 and answer["Content-Type"].startswith("text/plain"), extra
        assert "no container “<b>nope”" in answer.content.decode()
    tail = client.get(base + "&fragment=tail")
    assert tail.status_code == 404 and "no container “&lt;b&gt;nope”" in tail.content.decode()
    chosen = client.get(f"/pods/{NS}/trio/logs/?container=fetch")
    assert chosen.status_code == 200 and '<option value="fetch" selected>' in chosen.content.decode()
    default = client.get(f"/pods/{NS}/trio/logs/?container=").content.decode()
    assert '<option value="trainer" selected>' in default


def test_follow_receives_new_lines_and_stops_with_the_container(client, own):
    cluster, cache = own
    make_pod(cluster, cache, "tailme")
    cluster.advance(5)
    page = client.get(f"/pods/{NS}/tailme/logs/").content.decode()
    after = re.search(r'data-after="([^"]*)"', page).group(1)
    assert after and 'data-follow="1"' in page and "logs.js" in page
    cluster.advance(15)
    poll = client.get(f"/pods/{NS}/tailme/logs/?after={after}")
    new = [unescape(re.sub(r"<[^>]+>", "", ln)) for ln in poll.content.decode().split("\n") if ln]
    assert len(new) >= 5 and all(ln.split(" ", 1)[0] > after for ln in new)
    assert poll["X-Log-After"] == new[-1].split(" ", 1)[0] and "X-Log-Ended" not in poll
    again = client.get(f"/pods/{NS}/tailme/logs/?after={poll['X-Log-After']}")
    assert again.content == b""  # nothing new without the clock moving
    started = cluster.store.get(POD, NS, "tailme")["status"]["startTime"]
    cluster.store.mutate(
        POD,
        NS,
        "tailme",
        lambda o: o["status"]["containerStatuses"][0].__setitem__(
            "state",
            {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": started,
                    "finishedAt": rfc3339(cluster.clock.now()),
                }
            },
        ),
    )
    cache.wait_for(
        lambda snap: "terminated" in snap.pods.get(NS, "tailme")["status"]["containerStatuses"][0]["state"],
        10,
    )
    last = client.get(f"/pods/{NS}/tailme/logs/?after={poll['X-Log-After']}")
    assert last["X-Log-Ended"] == "1" and b"run-batch.sh: done" in last.content


def test_hostile_log_content_is_escaped(client, own):
    cluster, cache = own
    evil = "<script>alert(1)</script> \x1b[31mred\x1b[0m \u202eevil \x07bell"
    make_pod(cluster, cache, "evil", command=[evil])
    cluster.advance(5)
    page = client.get(f"/pods/{NS}/evil/logs/?q=red").content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\x1b" not in page and "[31m" not in page and "\u202e" not in page and "\x07" not in page
    assert "U+202E" in page and "U+0007" in page
    assert "<mark>red</mark>" in page and "data-log-matches" in page


def test_limits_bytes_and_busy(client, own):
    cluster, cache = own
    make_pod(cluster, cache, "big")
    cluster.advance(600)
    with override_settings(VOLCANO_UI_LOGS_MAX_BYTES=1024):
        page = client.get(f"/pods/{NS}/big/logs/?tail=all").content.decode()
    assert "data-log-truncated" in page and 0 < sum(len(ln) + 1 for ln in lines_of(page)) <= 1024
    from dashboard.views.logs import slots

    with override_settings(VOLCANO_UI_LOGS_MAX_STREAMS=1), slots().take():
        busy = client.get(f"/pods/{NS}/big/logs/")
    assert busy.status_code == 503 and b"data-log-busy" in busy.content and busy["Retry-After"]
    # A slot just taken, the API server answering: the cause is the limit, not the API server.
    assert b"Too many logs are being read right now" in busy.content
    assert b"The API server is not answering" not in busy.content


def test_a_download_that_reads_nothing_is_an_error_not_an_empty_file(client, own):
    cluster, cache = own
    make_pod(cluster, cache, "unread")
    cluster.advance(20)
    cluster.server.set_faults({"error_rate": 1.0})
    try:
        failed = client.get(f"/pods/{NS}/unread/logs/?download=1")
    finally:
        cluster.server.set_faults({"error_rate": 0.0})
    assert failed.status_code == 502 and "Content-Disposition" not in failed
    assert failed["Content-Type"].startswith("text/plain")
    assert "The log could not be read:" in failed.content.decode()
    assert "injected fault" in failed.content.decode()
    from dashboard.views.logs import slots

    with override_settings(VOLCANO_UI_LOGS_MAX_STREAMS=1), slots().take():
        busy = client.get(f"/pods/{NS}/unread/logs/?download=1")
    assert busy.status_code == 503 and busy["Retry-After"] and "Content-Disposition" not in busy
    ok = client.get(f"/pods/{NS}/unread/logs/?download=1")
    assert ok.status_code == 200 and ok["Content-Disposition"] and ok.content


def test_logs_can_be_turned_off(client, own):
    cluster, cache = own
    make_pod(cluster, cache, "off")
    before = cluster.server.stats()["requests"].get("get pods/log", 0)
    with override_settings(VOLCANO_UI_LOGS=False):
        resp = client.get(f"/pods/{NS}/off/logs/")
    assert resp.status_code == 403 and b"Logs are turned off" in resp.content
    assert cluster.server.stats()["requests"].get("get pods/log", 0) == before


def test_a_pod_that_has_not_started_says_it_has_no_logs_yet(client, own):
    cluster, cache = own
    spec = {"schedulerName": "volcano", "containers": [{"name": "main", "image": "busybox:1.36"}]}
    cluster.store.create(POD, {"metadata": {"name": "not-placed", "namespace": NS}, "spec": spec})
    cluster.store.mutate(POD, NS, "not-placed", lambda obj: obj.__setitem__("status", {"phase": "Pending"}))
    cache.wait_for(lambda s: ((s.pods.get(NS, "not-placed") or {}).get("status") or {}).get("phase"), 10)
    for url in (f"/pods/{NS}/not-placed/logs/", f"/pods/{NS}/not-placed/logs/?fragment=tail"):
        page = unescape(client.get(url).content.decode())
        assert "This pod has not started yet (no container has run), so there are no logs yet." in page, url
        assert "No log lines." not in page, url


# ------------------------------------------------------------------ ?tail= as asked, or said why not
@pytest.fixture(scope="module")
def long_log(own):
    """A pod whose log has more lines than the largest tail (a busybox line every 1.5 s)."""
    cluster, cache = own
    make_pod(cluster, cache, "long")
    cluster.advance(9000)
    return f"/pods/{NS}/long/logs/"


def _note(page: str) -> str:
    found = re.search(r"<div[^>]*data-log-query-note[^>]*>(.*?)</div>", page, re.S)
    return text(found.group(1)).strip() if found else ""


def _selected_tail(page: str) -> str:
    select = re.search(r'<select name="tail">(.*?)</select>', page, re.S).group(1)
    return re.search(r'<option value="([^"]*)" selected>', select).group(1)


@pytest.mark.parametrize("asked", ["100", "1000", "5000", "all", "ALL", ""])
def test_a_tail_of_the_choices_is_read_without_a_note(client, long_log, asked):
    page = client.get(long_log, {"tail": asked}).content.decode()
    assert "data-log-query-note" not in page
    expected = {"": "1000", "ALL": "all"}.get(asked, asked)
    assert _selected_tail(page) == expected
    shown = lines_of(page)
    assert len(shown) > 5000 if expected == "all" else len(shown) == int(expected)


@pytest.mark.parametrize("asked", ["0", "-1", "abc", "1.5", " "])
def test_a_tail_not_understood_reads_the_default_and_says_so(client, long_log, asked):
    resp = client.get(long_log, {"tail": asked})
    page = resp.content.decode()
    assert resp.status_code == 200
    assert len(lines_of(page)) == 1000 and _selected_tail(page) == "1000"
    if asked.strip():
        assert _note(page) == (
            f"?tail={asked} ignored (give a number of lines from 1 to 5000, or all): "
            "showing the last 1000 lines."
        )
    else:
        assert "data-log-query-note" not in page  # an empty tail is no tail


def test_a_tail_above_the_cap_reads_the_cap_and_says_so(client, long_log):
    page = client.get(long_log, {"tail": "99999999"}).content.decode()
    assert len(lines_of(page)) == 5000 and _selected_tail(page) == "5000"
    assert _note(page) == (
        "?tail=99999999 is more than 5000 lines: showing the last 5000 (choose “all” for every line)."
    )


def test_a_tail_between_the_choices_is_read_as_asked(client, long_log):
    page = client.get(long_log, {"tail": "250"}).content.decode()
    assert len(lines_of(page)) == 250 and "data-log-query-note" not in page
    # The form keeps it, so "Show" after changing another control reads 250 lines again.
    select = re.search(r'<select name="tail">(.*?)</select>', page, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"', select) == ["100", "250", "1000", "5000", "all"]
    assert _selected_tail(page) == "250"


def test_a_hostile_tail_is_quoted_escaped(client, long_log):
    page = client.get(long_log, {"tail": "<script>alert(1)</script>\u202e"}).content.decode()
    assert "<script>alert(1)</script>" not in page and "\u202e" not in page
    note = re.search(r"<div[^>]*data-log-query-note[^>]*>(.*?)</div>", page, re.S).group(1)
    assert "?tail=&lt;script&gt;alert(1)&lt;/script&gt;" in note and "U+202E" in note
    assert len(lines_of(page)) == 1000


def test_the_failure_cards_tail_fragment_ignores_the_pages_tail(client, long_log):
    resp = client.get(long_log, {"tail": "abc", "fragment": "tail"}, headers={"HX-Request": "true"})
    body = resp.content.decode()
    assert resp.status_code == 200 and "data-log-query-note" not in body
    pre = re.search(r'<pre class="log log-wrap">(.*?)</pre>', body, re.S).group(1)
    assert len([ln for ln in pre.split("\n") if ln]) == 20


# ------------------------------------------------------------------ switches: 1/0 and their words
@pytest.fixture(scope="module")
def restarted(own):
    """A running pod whose container ran once before and failed."""
    cluster, cache = own
    begun = rfc3339(cluster.clock.now())
    cluster.advance(30)
    last = {"exitCode": 1, "reason": "Error", "startedAt": begun, "finishedAt": rfc3339(cluster.clock.now())}
    make_pod(cluster, cache, "again", last=last)
    cluster.advance(30)
    return f"/pods/{NS}/again/logs/"


@pytest.mark.parametrize("word", ["1", "true", "Yes", "on"])
def test_previous_in_any_word_for_on_reads_the_previous_container(client, restarted, word):
    page = client.get(restarted, {"previous": word}).content.decode()
    assert "data-log-query-note" not in page
    assert lines_of(page)[-1].endswith("exited with status 1")
    assert '<input type="checkbox" name="previous" value="1" checked>' in page


def test_a_switch_not_understood_keeps_its_default_and_says_so(client, restarted):
    current = lines_of(client.get(restarted, {"ts": "0"}).content.decode())
    resp = client.get(restarted, {"previous": "maybe", "ts": "<b>x</b>", "wrap": "2"})
    page = resp.content.decode()
    assert resp.status_code == 200
    assert "<b>x</b>" not in page and 'class="log"' in page  # not wrapped
    shown = lines_of(page)
    assert not any("exited with status" in ln for ln in shown)  # the current container
    assert re.match(r"^\d{4}-\d\d-\d\dT", shown[0])  # timestamps shown
    assert [ln.split(" ", 1)[1] for ln in shown] == current
    assert _note(page) == (
        "?previous=maybe ignored (give 1 or 0): showing the current container's log. "
        "?ts=<b>x</b> ignored (give 1 or 0): timestamps shown. "
        "?wrap=2 ignored (give 1 or 0): lines not wrapped."
    )


@pytest.mark.parametrize(("ts", "wrap"), [("false", "true"), ("OFF", "on"), ("no", "yes"), ("0", "1")])
def test_timestamps_and_wrap_take_every_word_of_a_switch(client, restarted, ts, wrap):
    page = client.get(restarted, {"ts": ts, "wrap": wrap}).content.decode()
    assert "data-log-query-note" not in page and 'class="log log-wrap"' in page
    assert not re.match(r"^\d{4}-\d\d-\d\dT", lines_of(page)[0])


def test_a_tail_is_ascii_digits_and_any_length_of_them_is_capped():
    from dashboard.views.logs import DEFAULT_TAIL, MAX_TAIL, chosen_tail

    for odd in ("1_000", "５", "+5", "1e3"):
        tail, note = chosen_tail(odd)
        assert tail == DEFAULT_TAIL and "ignored" in note, odd
    for huge in ("9" * 20, "9" * 5000):
        tail, note = chosen_tail(huge)
        assert tail == str(MAX_TAIL) and "is more than" in note
