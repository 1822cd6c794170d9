"""Settings come only from the environment, strictly; deploy/.env.example lists every variable;
`check --deploy` is clean with production settings."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
READ_RE = re.compile(r"""env_\w+\(\s*["']([A-Z][A-Z0-9_]*)["']""")


def _variables_read() -> set[str]:
    names: set[str] = set()
    for path in (REPO / "volcano_ui" / "settings.py", REPO / "deploy" / "gunicorn.conf.py"):
        names |= set(READ_RE.findall(path.read_text()))
    return names


def _listed() -> set[str]:
    text = (REPO / "deploy" / ".env.example").read_text()
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE))


def test_the_scan_finds_the_variables_it_should():
    # Guards the regex itself: a scan that finds nothing would make the next test pass vacuously.
    found = _variables_read()
    assert {"VOLCANO_UI_ACCESS_MODE", "VOLCANO_UI_SECRET_KEY", "VOLCANO_UI_WORKERS"} <= found


def test_env_example_lists_every_variable_read():
    missing = _variables_read() - _listed()
    assert not missing, f"add these to deploy/.env.example: {sorted(missing)}"


def test_docs_document_every_variable_read():
    # In a row of one of the tables of docs/configuration.md.
    text = (REPO / "docs" / "configuration.md").read_text()
    rows = "\n".join(line for line in text.splitlines() if line.startswith("| `"))
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]*)`", rows))
    missing = _variables_read() - documented
    assert not missing, f"add these to a table of docs/configuration.md: {sorted(missing)}"


def test_env_example_lists_the_file_variant_of_the_secret():
    assert "VOLCANO_UI_SECRET_KEY_FILE" in _listed()


def _django(env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOLCANO_UI_")}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"VOLCANO_UI_ACCESS_MODE": "open"},
            "VOLCANO_UI_ACCESS_MODE='open' is not one of: none, proxy, token.",
        ),
        ({"VOLCANO_UI_TLS": "sure"}, "VOLCANO_UI_TLS='sure' is not a boolean"),
        (
            {"VOLCANO_UI_ACCESS_CACHE_SECONDS": "30s"},
            "VOLCANO_UI_ACCESS_CACHE_SECONDS='30s' is not an integer.",
        ),
        (
            {"VOLCANO_UI_ACCESS_MODE": "proxy", "VOLCANO_UI_TRUSTED_PROXIES": "10.0.0.1/8"},
            "VOLCANO_UI_TRUSTED_PROXIES: '10.0.0.1/8' is not an IP address or CIDR block",
        ),
        (
            {"VOLCANO_UI_ACCESS_MODE": "proxy"},
            "VOLCANO_UI_ACCESS_MODE=proxy needs VOLCANO_UI_TRUSTED_PROXIES",
        ),
        ({"VOLCANO_UI_ACCESS_MODE": "token"}, "VOLCANO_UI_ACCESS_MODE=token needs VOLCANO_UI_SECRET_KEY"),
        (
            {"VOLCANO_UI_ENABLE_ACTIONS": "true"},
            "VOLCANO_UI_ENABLE_ACTIONS=true needs VOLCANO_UI_ACCESS_MODE",
        ),
        ({"VOLCANO_UI_LOG_FORMAT": "xml"}, "VOLCANO_UI_LOG_FORMAT='xml' is not one of: text, json."),
        (
            {"VOLCANO_UI_SECRET_KEY_FILE": "/nonexistent/key"},
            "VOLCANO_UI_SECRET_KEY_FILE='/nonexistent/key' cannot be read",
        ),
        ({"VOLCANO_UI_SECRET_KEY": "short"}, "VOLCANO_UI_SECRET_KEY (or VOLCANO_UI_SECRET_KEY_FILE) must be"),
        (
            {"VOLCANO_UI_ACCESS_MODE": "proxy", "VOLCANO_UI_TRUSTED_PROXIES": "0.0.0.0/0"},
            "VOLCANO_UI_TRUSTED_PROXIES must not trust every address",
        ),
        (
            {"VOLCANO_UI_FRAME_ANCESTORS": "https://a.example; script-src *"},
            "VOLCANO_UI_FRAME_ANCESTORS: 'https://a.example; script-src *' is not an origin",
        ),
        (
            {"VOLCANO_UI_ACCESS_WAIT_SECONDS": "90"},
            "VOLCANO_UI_ACCESS_WAIT_SECONDS=90.0 is above the maximum 30",
        ),
    ],
)
def test_a_bad_value_stops_start_up_with_a_message_naming_it(env, message):
    result = _django(env, "check")
    # manage.py prints the ImproperlyConfigured message alone (tests/prod/test_config_errors.py).
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_the_secret_key_can_come_from_a_file(tmp_path):
    key = tmp_path / "key"
    key.write_text(secrets.token_urlsafe(50) + "\n")
    result = _django({"VOLCANO_UI_ACCESS_MODE": "token", "VOLCANO_UI_SECRET_KEY_FILE": str(key)}, "check")
    assert result.returncode == 0, result.stderr


PRODUCTION = {
    "VOLCANO_UI_SECRET_KEY": secrets.token_urlsafe(50),
    "VOLCANO_UI_ALLOWED_HOSTS": "volcano.example.com",
    "VOLCANO_UI_TLS": "true",
    "VOLCANO_UI_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "VOLCANO_UI_ACCESS_MODE": "token",
    "VOLCANO_UI_LOG_FORMAT": "json",
}


def test_check_deploy_is_clean_with_production_settings():
    result = _django(PRODUCTION, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_deploy_warns_without_tls():
    # The check is able to fail: without TLS it names the missing protections.
    result = _django(
        {**PRODUCTION, "VOLCANO_UI_TLS": "false"}, "check", "--deploy", "--fail-level", "WARNING"
    )
    assert result.returncode != 0
    assert "security.W004" in result.stdout + result.stderr
