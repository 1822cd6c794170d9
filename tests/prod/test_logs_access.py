"""Logs over real HTTP in proxy mode: read only after a SubjectAccessReview for get pods/log in
the pod's namespace; a refusal is a 403 page that holds no log bytes and made no log read."""

from __future__ import annotations

from dashboard.sim.auth import READ, Rule, User
from tests.pages.helpers import pods
from tests.prod.conftest import proxy_session, proxy_settings

# Reads everything the pages show in team-vision, but not pods/log.
NO_LOGS = (
    Rule(
        READ,
        frozenset({"", "batch.volcano.sh", "scheduling.volcano.sh"}),
        frozenset({"jobs", "podgroups", "queues", "pods", "events", "namespaces"}),
    ),
)


def test_logs_need_get_pods_log_in_the_namespace(demo_cluster, installed_cache, dashboard_server):
    demo_cluster.auth.add(User("dora", "token-dora-0123456789", frozenset({"team-vision"}), rules=NO_LOGS))
    demo_cluster.add_user("erin", "token-erin-0123456789", ["team-vision"])  # default rules: read all
    server = dashboard_server(**proxy_settings())
    pod = next(
        p for p in pods(demo_cluster, "team-vision") if (p.get("status") or {}).get("containerStatuses")
    )
    name = pod["metadata"]["name"]
    path = f"/pods/team-vision/{name}/logs/?tail=100"
    before = demo_cluster.server.stats()["requests"].get("get pods/log", 0)

    refused = proxy_session("dora").get(server.url + path)
    assert refused.status_code == 403
    assert "You may not read pod logs in namespace team-vision" in refused.text
    assert 'id="log-lines"' not in refused.text
    job = pod["metadata"]["labels"]["volcano.sh/job-name"]
    assert proxy_session("dora").get(f"{server.url}/jobs/team-vision/{job}/logs/").status_code == 403
    assert demo_cluster.server.stats()["requests"].get("get pods/log", 0) == before  # nothing was read
    # The pod page itself stays readable for dora.
    assert proxy_session("dora").get(f"{server.url}/pods/team-vision/{name}/").status_code == 200

    allowed = proxy_session("erin").get(server.url + path)
    assert allowed.status_code == 200 and 'id="log-lines"' in allowed.text
    assert demo_cluster.server.stats()["requests"].get("get pods/log", 0) > before
    # Another namespace's pod is not found at all (visibility comes first).
    other = next(p for p in pods(demo_cluster, "team-nlp"))["metadata"]["name"]
    assert proxy_session("erin").get(f"{server.url}/pods/team-nlp/{other}/logs/").status_code == 404
