"""Packaging detail that pyproject.toml cannot express: ship the top-level templates/, static/ and
locale/ directories inside the wheel, as volcano_ui/{templates,static,locale}, so a non-editable
install (the container image) is self-contained. volcano_ui/settings.py looks for them at the top
of a checkout first, then inside the installed package. Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_namespace_packages, find_packages, setup

HERE = Path(__file__).resolve().parent
ASSETS = {f"volcano_ui.{name}": name for name in ("templates", "static", "locale") if (HERE / name).is_dir()}

# Every directory of data is listed as a (namespace) package so setuptools ships its files.
data_packages = []
for package, directory in ASSETS.items():
    data_packages += [package] + [f"{package}.{sub}" for sub in find_namespace_packages(where=directory)]
data_packages += find_namespace_packages(
    include=["dashboard.templates.*", "dashboard.static", "dashboard.static.*"]
)
code_packages = find_packages(include=["volcano_ui", "volcano_ui.*", "dashboard", "dashboard.*"])

setup(
    packages=code_packages + data_packages,
    package_dir=ASSETS,
    package_data={package: ["*"] for package in data_packages},
)
