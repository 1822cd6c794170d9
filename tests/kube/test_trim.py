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
                    "env": [{"name": "A", "value": "secret"}, {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s"}}}],
                    "volumeMounts": [{"name": "v"}],
                }
            ],
            "initContainers": [{"name": "i", "image": "init"}],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "c", "ready": True, "containerID": "containerd://0f", "imageID": "sha256:1"}],
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
        "env": [{"name": "B", "valueFrom": {"secretKeyRef": {"name": "s"}}}],
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
    for obj in ({}, {"metadata": None, "spec": "x", "status": 3}, {"spec": {"tasks": [None, 1, {"template": "t"}]}}):
        trim.trim_pod(obj)
        trim.trim_job(obj)
        trim.trim_podgroup(obj)
        trim.trim_event(obj)
