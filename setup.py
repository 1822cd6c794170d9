"""Packaging detail that pyproject.toml cannot express: ship the top-level templates/, static/ and
locale/ directories inside the wheel, as volcano_ui/{templates,static,locale}, so a non-editable
install (the container image) is self-contained. volcano_ui/settings.py looks for them at the top
of a checkout first, then inside the installed package. Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
ASSETS = {f"volcano_ui.{name}": name for name in ("templates", "static", "locale") if (HERE / name).is_dir()}

setup(
    packages=find_packages(include=["volcano_ui", "volcano_ui.*", "dashboard", "dashboard.*"]) + list(ASSETS),
    package_dir=ASSETS,
    package_data={name: ["**/*"] for name in ASSETS} | {"dashboard": ["templates/**/*", "static/**/*"]},
)
