"""Fixtures for the fault tests: the simulated API server's fault switches (``POST /_sim/faults``,
as bench/faults.py drives them), the two-team users, and the HTTP dashboard of tests/prod."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import requests

from tests.prod.conftest import ALICE, BOB, dashboard_server  # noqa: F401 - fixtures

__all__ = ["dashboard_server", "wait_for"]


class SimFaults:
    """The simulated API server's fault switches over its admin API; reset at teardown."""

    def __init__(self, cluster) -> None:  # noqa: ANN001
        self.url = cluster.url + "/_sim/faults"
        self.headers = {"Authorization": f"Bearer {cluster.admin_token}"}

    def set(self, **switches) -> dict:
        response = requests.post(self.url, json=switches, headers=self.headers, timeout=5)
        response.raise_for_status()
        return response.json()

    def reset(self) -> None:
        self.set(reset=True)


@pytest.fixture(scope="module")
def teams(demo_cluster):
    for name, token, namespace in (ALICE, BOB):
        demo_cluster.add_user(name, token, [namespace])
    return demo_cluster


@pytest.fixture
def faults(teams):
    switches = SimFaults(teams)
    yield switches
    switches.reset()


def wait_for(condition: Callable[[], object], timeout: float, what: str, every: float = 0.1) -> object:
    """Poll ``condition()`` until it returns something truthy (returned) or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)
