"""Helpers of the domain tests: Volcano's CRDs and examples, when the shared reference is present."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

SHARED = Path(__file__).resolve().parents[3] / "shared" / "volcano"


def shared_yaml(relative: str) -> list[dict]:
    """Every document of a file under the shared Volcano reference (skips when it is absent)."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared Volcano reference is not mounted)")
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def crd_enum(relative: str, *fields: str) -> list[str]:
    """The enum of a status field in a CRD's served schema (``fields`` is the path below status)."""
    (crd,) = shared_yaml(relative)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    for f in fields:
        schema = schema["properties"][f]
    return schema["enum"]
