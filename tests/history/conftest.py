"""History store fixtures: a SQLite file per test, and one real PostgreSQL per test session
(Debian's ``postgresql`` package: initdb + pg_ctl in a temporary directory on a free port).

``history_db`` gives the name of a Django database alias; tests pass it as ``using``. The
recorder creates its tables (migrate) on its first step.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import pytest
from django.db import connections


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


@pytest.fixture(scope="session")
def postgres_server():
    """{"host", "port"} of a PostgreSQL started for this session (trust auth, user postgres)."""
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian package postgresql: /usr/lib/postgresql/*/bin)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed")
    base = tempfile.mkdtemp(prefix="volcano-ui-pg-")
    data, port = os.path.join(base, "data"), _free_port()
    # initdb refuses to run as root: run the server as the postgres user then.
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: PostgreSQL cannot be started")
        shutil.chown(base, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    try:
        subprocess.run(
            [*prefix, f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], **run
        )
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*prefix, f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", f"{base}/log", "-w", "start"],
            **run,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"PostgreSQL could not start: {detail.strip()[:300]}")
    server = {
        "host": "127.0.0.1",
        "port": port,
        "bindir": bindir,
        "data": data,
        "prefix": prefix,
        "base": base,
    }
    try:
        yield server
    finally:
        subprocess.run(
            [*prefix, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)


def add_alias(alias: str, settings_dict: dict) -> str:
    base = {
        "ATOMIC_REQUESTS": False,
        "AUTOCOMMIT": True,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False,
        "OPTIONS": {},
        "TIME_ZONE": None,
        "USER": "",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        "TEST": {},
    }
    connections.settings[alias] = {**base, **settings_dict}
    return alias


def drop_alias(alias: str) -> None:
    if alias in connections.settings:
        try:
            connections[alias].close()
        finally:
            del connections.settings[alias]
            with contextlib.suppress(AttributeError):
                delattr(connections._connections, alias)


def _kept() -> dict:
    from django.conf import settings

    return dict(settings.HISTORY_CONNECTION)


def sqlite_alias(path) -> str:
    return add_alias(
        f"hist_sqlite_{uuid.uuid4().hex[:8]}",
        # Kept between requests, as the dashboard keeps its history connections.
        {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path), "OPTIONS": {"timeout": 5}, **_kept()},
    )


def postgres_alias(server, database: str) -> str:
    import psycopg

    with psycopg.connect(
        host=server["host"], port=server["port"], user="postgres", dbname="postgres", autocommit=True
    ) as c:
        c.execute(f'CREATE DATABASE "{database}"')
    return add_alias(
        f"hist_pg_{database}",
        {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": database,
            "USER": "postgres",
            "HOST": server["host"],
            "PORT": str(server["port"]),
            "OPTIONS": {"connect_timeout": 3},
        },
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def history_db(request, tmp_path, django_db_blocker):
    """A database alias for the history tables: a SQLite file, then a real PostgreSQL."""
    with django_db_blocker.unblock():
        if request.param == "sqlite":
            alias = sqlite_alias(tmp_path / "history.sqlite3")
        else:
            server = request.getfixturevalue("postgres_server")
            alias = postgres_alias(server, f"h{uuid.uuid4().hex[:12]}")
        try:
            yield alias
        finally:
            drop_alias(alias)
