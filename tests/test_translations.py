"""The zh-Hans catalog translates every marked string of the product (README "Pages": languages).

Runs Django's ``makemessages`` on a copy of the sources (so the checkout is not touched) and asks
GNU gettext's ``msgattrib`` for entries that are untranslated or fuzzy (a fuzzy entry is not used at
run time, so the page would show English).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PO = Path("locale/zh_Hans/LC_MESSAGES/django.po")


@pytest.fixture(scope="module")
def fresh_catalog(tmp_path_factory) -> Path:
    if not (shutil.which("xgettext") and shutil.which("msgattrib") and shutil.which("msgmerge")):
        pytest.skip("GNU gettext (xgettext, msgmerge, msgattrib) is not installed; .ci/run installs it")
    work = tmp_path_factory.mktemp("catalog")
    for name in ("manage.py", "dashboard", "volcano_ui", "templates", "locale"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, work / name)
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "makemessages",
            "-l",
            "zh_Hans",
            "-i",
            "dashboard/sim/*",
            "--no-location",
        ],
        cwd=work,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "volcano_ui.settings"},
    )
    return work / PO


def _msgids(po_text: str) -> list[str]:
    ids, current, in_id = [], [], False
    for line in po_text.splitlines():
        if line.startswith("msgid "):
            current, in_id = [line[6:].strip('"')], True
        elif line.startswith('"') and in_id:
            current.append(line.strip('"'))
        else:
            if in_id and current != [""]:
                ids.append("".join(current))
            in_id = False
    return [i for i in ids if i]


def test_every_marked_string_has_a_zh_hans_translation(fresh_catalog):
    for flag in ("--untranslated", "--only-fuzzy"):
        out = subprocess.run(
            ["msgattrib", flag, "--no-obsolete", str(fresh_catalog)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        missing = _msgids(out)
        assert not missing, f"{flag[2:]} in {PO} (translate, then compile): {missing}"


def test_the_committed_catalog_compiles(tmp_path):
    if not shutil.which("msgfmt"):
        pytest.skip("GNU gettext (msgfmt) is not installed; .ci/run installs it")
    subprocess.run(
        ["msgfmt", "--check-format", "-o", str(tmp_path / "django.mo"), str(REPO / PO)], check=True
    )
