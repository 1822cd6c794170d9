"""Bearer-token users, namespace-scoped permissions, SubjectAccessReview and TokenReview."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from .conftest import api_client_for


def raw(cluster, method, path, token=None, body=None):
    req = urllib.request.Request(
        cluster.url + path, method=method, data=None if body is None else json.dumps(body).encode()
    )
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_no_token_or_unknown_token_is_401(cluster):
    for token in (None, "wrong"):
        code, body = raw(cluster, "GET", "/api/v1/namespaces", token)
        assert code == 401 and body["reason"] == "Unauthorized" and body["kind"] == "Status"
    assert raw(cluster, "GET", "/version")[0] == 401


def test_namespace_token_403_cluster_wide_200_in_namespace(cluster, tmp_path):
    cluster.store.create("namespaces", {"metadata": {"name": "team-a"}})
    cluster.add_user("alice", "alice-token", ["team-a"])
    with api_client_for(cluster, tmp_path, "alice") as api:
        custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
        with pytest.raises(ApiException) as err:
            custom.list_cluster_custom_object("batch.volcano.sh", "v1alpha1", "jobs")
        body = json.loads(err.value.body)
        assert err.value.status == 403 and body["reason"] == "Forbidden"
        assert body["message"] == (
            'jobs.batch.volcano.sh is forbidden: User "alice" cannot list resource "jobs" '
            'in API group "batch.volcano.sh" at the cluster scope'
        )
        assert (
            custom.list_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "team-a", "jobs")["items"]
            == []
        )
        with pytest.raises(ApiException) as err:
            core.list_namespaced_pod("default")
        assert err.value.status == 403
        # Queues are cluster-scoped; namespace users may read them (cluster_read default).
        assert (
            len(custom.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")["items"]) == 2
        )
        with pytest.raises(ApiException) as err:
            core.list_node()
        assert err.value.status == 403
        # Default verbs: read plus create Commands; not create Jobs.
        custom.create_namespaced_custom_object(
            "bus.volcano.sh",
            "v1alpha1",
            "team-a",
            "commands",
            {
                "apiVersion": "bus.volcano.sh/v1alpha1",
                "kind": "Command",
                "metadata": {"generateName": "j-abortjob-"},
                "action": "AbortJob",
                "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u"},
            },
        )
        with pytest.raises(ApiException) as err:
            custom.create_namespaced_custom_object(
                "batch.volcano.sh",
                "v1alpha1",
                "team-a",
                "jobs",
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "metadata": {"name": "j"},
                    "spec": {},
                },
            )
        assert err.value.status == 403


def test_cluster_wide_reader_and_custom_verbs(cluster, tmp_path):
    cluster.add_user("viewer", "viewer-token", None)
    cluster.add_user("editor", "editor-token", None, verbs=["get", "list", "watch", "create", "patch"])
    assert raw(cluster, "GET", "/api/v1/pods", "viewer-token")[0] == 200
    assert (
        raw(cluster, "DELETE", "/apis/scheduling.volcano.sh/v1beta1/queues/default", "viewer-token")[0] == 403
    )
    code, _ = raw(cluster, "POST", "/api/v1/namespaces", "editor-token", {"metadata": {"name": "made"}})
    assert code == 201


def sar(cluster, token, spec):
    return raw(
        cluster,
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        token,
        {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec},
    )


def test_subject_access_reviews_answer_from_configured_users(cluster):
    cluster.add_user("alice", "alice-token", ["team-a"])
    ask = lambda **attrs: sar(cluster, cluster.admin_token, {"user": "alice", "resourceAttributes": attrs})  # noqa: E731
    code, body = ask(namespace="team-a", verb="list", group="batch.volcano.sh", resource="jobs")
    assert code == 201 and body["status"]["allowed"] is True
    assert (
        ask(namespace="team-b", verb="list", group="batch.volcano.sh", resource="jobs")[1]["status"][
            "allowed"
        ]
        is False
    )
    assert ask(verb="list", group="batch.volcano.sh", resource="jobs")[1]["status"]["allowed"] is False
    assert ask(namespace="team-a", verb="create", group="bus.volcano.sh", resource="commands")[1]["status"][
        "allowed"
    ]
    assert not ask(namespace="team-a", verb="delete", group="batch.volcano.sh", resource="jobs")[1]["status"][
        "allowed"
    ]
    code, body = sar(
        cluster,
        cluster.admin_token,
        {
            "user": "nobody",
            "groups": ["system:masters"],
            "resourceAttributes": {"verb": "delete", "resource": "nodes"},
        },
    )
    assert body["status"]["allowed"] is True
    # Only the admin may create SubjectAccessReviews; everyone may ask about themselves.
    assert sar(cluster, "alice-token", {"user": "alice", "resourceAttributes": {"verb": "get"}})[0] == 403
    code, body = raw(
        cluster,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        "alice-token",
        {
            "spec": {
                "resourceAttributes": {
                    "namespace": "team-a",
                    "verb": "watch",
                    "group": "",
                    "resource": "pods",
                }
            }
        },
    )
    assert code == 201 and body["status"]["allowed"] is True


def test_token_reviews(cluster):
    cluster.add_user("alice", "alice-token", ["team-a"], groups=["devs"])
    code, body = raw(
        cluster,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        cluster.admin_token,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "alice-token"}},
    )
    assert code == 201 and body["status"]["authenticated"] is True
    assert body["status"]["user"]["username"] == "alice"
    assert body["status"]["user"]["groups"] == ["devs", "system:authenticated"]
    body = raw(
        cluster,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        cluster.admin_token,
        {"spec": {"token": "nope"}},
    )[1]
    assert body["status"]["authenticated"] is False
    assert raw(cluster, "GET", "/apis/authentication.k8s.io/v1/tokenreviews", cluster.admin_token)[0] == 405


def test_admin_api_needs_admin_token(cluster):
    cluster.add_user("alice", "alice-token", ["team-a"])
    assert raw(cluster, "GET", "/_sim/stats")[0] == 401
    assert raw(cluster, "GET", "/_sim/stats", "alice-token")[0] == 403
    assert raw(cluster, "GET", "/_sim/stats", cluster.admin_token)[0] == 200


def test_add_user_over_admin_api(cluster):
    code, body = raw(
        cluster,
        "POST",
        "/_sim/users",
        cluster.admin_token,
        {"name": "bob", "token": "bob-token", "namespaces": ["default"]},
    )
    assert code == 201 and body == {"name": "bob", "namespaces": ["default"]}
    assert raw(cluster, "GET", "/api/v1/namespaces/default/pods", "bob-token")[0] == 200
    assert raw(cluster, "GET", "/api/v1/pods", "bob-token")[0] == 403
