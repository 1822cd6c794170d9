"""What trimming keeps and drops (dashboard/kube/trim.py)."""

from __future__ import annotations

from dashboard.kube import trim

META = {
    "name": "x",
    "namespace": "default",
    "uid": "u",
    "resourceVersion": "7",
    "managedFields": [{"manager": "kubectl"}],
    "annotations": {trim.LAST_APPLIED: "{...}", "keep": "me"},
    "labels": {"a": "b"},
    "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "ju"}],
}


def test_metadata_drops_managed_fields_and_last_applied():
    out = trim.trim_metadata(META)
    assert "managedFields" not in out
    assert out["annotations"] == {"keep": "me"}
    assert out["ownerReferences"][0]["uid"] == "ju" and out["labels"] == {"a": "b"}


def test_pod_keeps_displayed_fields_only():
    pod = {
        "metadata": META,
        "spec": {
            "nodeName": "n1",
            "schedulerName": "volcano",
            "volumes": [{"name": "v"}],
            "affinity": {"x": 1},
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "command": ["sh"],
                    "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi"}, "claims": []},
                    "env": [
                        {"name": "A", "value": "secret"},
                        {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s"}}},
                    ],
                    "volumeMounts": [{"name": "v"}],
                }
            ],
            "initContainers": [{"name": "i", "image": "init"}],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": "c", "ready": True, "containerID": "containerd://0f", "imageID": "sha256:1"}
            ],
            "initContainerStatuses": [],
            "podIPs": [{"ip": "1.2.3.4"}],
        },
    }
    out = trim.trim_pod(pod)
    c = out["spec"]["containers"][0]
    assert c == {
        "name": "c",
        "image": "img",
        "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi"}},
        "env": [
            {"name": "A", "value": trim.HIDDEN_VALUE},
            {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s"}}},
        ],
    }
    assert set(out["spec"]) == {"nodeName", "schedulerName", "containers", "initContainers"}
    assert set(out["status"]) == {"phase", "conditions", "containerStatuses", "initContainerStatuses"}
    assert "managedFields" not in out["metadata"]
    assert out["status"]["containerStatuses"] == [{"name": "c", "ready": True}]


def test_job_task_templates_shrink_but_keep_images_and_policies():
    job = {
        "kind": "Job",
        "metadata": META,
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {
                    "name": "w",
                    "replicas": 2,
                    "policies": [{"event": "PodFailed", "action": "RestartJob"}],
                    "template": {
                        "metadata": {"labels": {"l": "1"}},
                        "spec": {
                            "restartPolicy": "Never",
                            "volumes": [{"name": "big"}],
                            "containers": [{"name": "c", "image": "img:1", "args": ["--x"]}],
                        },
                    },
                }
            ],
        },
        "status": {"state": {"phase": "Running"}, "taskStatusCount": {"w": {"phase": {"Running": 2}}}},
    }
    out = trim.trim_job(job)
    task = out["spec"]["tasks"][0]
    assert task["template"] == {
        "metadata": {"labels": {"l": "1"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "img:1"}]},
    }
    assert task["policies"] == [{"event": "PodFailed", "action": "RestartJob"}]
    assert out["status"] == job["status"]


def test_odd_shapes_do_not_raise():
    for obj in (
        {},
        {"metadata": None, "spec": "x", "status": 3},
        {"spec": {"tasks": [None, 1, {"template": "t"}]}},
    ):
        trim.trim_pod(obj)
        trim.trim_job(obj)
        trim.trim_podgroup(obj)
        trim.trim_event(obj)


def test_long_free_text_is_cut_with_a_visible_marker():
    huge = "x" * 500_000
    cond = {"type": "Unschedulable", "status": "True", "message": huge, "reason": huge}
    ev = trim.trim_event({"metadata": {"name": "e"}, "message": huge, "reason": huge, "type": "Warning"})
    pg = trim.trim_podgroup({"metadata": META, "status": {"conditions": [cond]}})
    queue = trim.trim_object({"metadata": META, "status": {"conditions": [cond], "state": "Open"}})
    job = trim.trim_job({"metadata": META, "status": {"state": {"phase": "Failed", "message": huge}}})
    pod = trim.trim_pod(
        {
            "metadata": META,
            "status": {
                "message": huge,
                "reason": huge,
                "conditions": [cond],
                "containerStatuses": [{"name": "c", "state": {"terminated": {"message": huge}}}],
            },
        }
    )
    cut = [
        ev["message"],
        ev["reason"],
        pg["status"]["conditions"][0]["message"],
        queue["status"]["conditions"][0]["reason"],
        job["status"]["state"]["message"],
        pod["status"]["message"],
        pod["status"]["reason"],
        pod["status"]["conditions"][0]["message"],
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["message"],
    ]
    for text in cut:
        assert text.startswith("x" * trim.MESSAGE_LIMIT)
        assert len(text) < trim.MESSAGE_LIMIT + 100
        assert text.endswith("(truncated by volcano-ui: 500,000 characters in all)")
    # Short text is untouched.
    short = {"metadata": {"name": "e"}, "message": "0/3 nodes are available", "type": "Warning"}
    assert trim.trim_event(short)["message"] == "0/3 nodes are available"
    assert trim.cap_text("y" * trim.MESSAGE_LIMIT) == "y" * trim.MESSAGE_LIMIT
    assert trim.cap_text(cut[0]) == cut[0]  # idempotent


def test_env_entries_stay_visible_without_literal_values():
    container = {
        "name": "c",
        "image": "img",
        "env": [
            {"name": "PASSWORD", "value": "hunter2"},
            {"name": "EMPTY"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            "junk",
        ],
        "envFrom": [
            {"configMapRef": {"name": "settings"}, "prefix": "APP_"},
            {"secretRef": {"name": "db", "optional": True}},
            {"unknownSource": {"value": "x"}},
            None,
        ],
    }
    for out in (
        trim.trim_pod({"spec": {"containers": [container]}})["spec"]["containers"][0],
        trim.trim_job({"spec": {"tasks": [{"template": {"spec": {"containers": [container]}}}]}})["spec"][
            "tasks"
        ][0]["template"]["spec"]["containers"][0],
    ):
        assert out["env"] == [
            {"name": "PASSWORD", "value": "(hidden by volcano-ui)"},
            {"name": "EMPTY"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        ]
        assert out["envFrom"] == [
            {"prefix": "APP_", "configMapRef": {"name": "settings"}},
            {"secretRef": {"name": "db", "optional": True}},
        ]
        assert "hunter2" not in repr(out)
