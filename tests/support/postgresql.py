"""A throwaway PostgreSQL cluster for the tests, and the backend fixture parameter.

Debian's ``postgresql`` package gives ``initdb`` and ``pg_ctl`` (under
``/usr/lib/postgresql/<version>/bin``); the cluster lives in a temporary folder, listens on
a Unix socket in that folder only (no port to collide with another run) and is stopped
and removed at the end of the session. PostgreSQL refuses to run as root, so as root (CI,
this machine) the cluster runs as the ``postgres`` user the package creates.

A test asking for ``database_url`` or ``new_database`` gets a new database in the one
cluster (``CREATE DATABASE`` takes a few milliseconds) and runs once per backend; the
apps of ``app`` share one database per test process, reset between tests
(tests/support/worker_database.py).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

BACKENDS = ("sqlite", "postgresql")
SERVICE_USER = "postgres"
# How CREATE DATABASE copies the template (8.5 MB, mostly the system catalogue): PostgreSQL
# 15's default, WAL_LOG, writes every page into the WAL; FILE_COPY copies the files after
# a checkpoint, cheap with fsync off. Measured per copy on a two-core machine: alike when
# idle (about 30 ms each), FILE_COPY 33-40 ms against WAL_LOG's 48-127 under load.
STRATEGY = "FILE_COPY"


def server_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl (the newest installed), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _major_version(initdb: str) -> int:
    return int(Path(initdb).parent.parent.name)


class Cluster:
    """A PostgreSQL server in a folder of its own, reached through its socket there."""

    def __init__(self, binaries: Path, folder: Path) -> None:
        self.binaries = binaries
        self.folder = folder
        self.data = folder / "data"
        self.user = _service_user()
        self.released: list[str] = []  # databases to drop once nothing is connected

    def start(self) -> None:
        if self.user is not None:
            shutil.chown(self.folder, self.user.pw_name, self.user.pw_name)
        self._run(
            "initdb", "-D", str(self.data), "-A", "trust", "-U", SERVICE_USER, "-E", "UTF8",
            "--locale=C", "--no-sync", "--no-instructions",
        )  # fmt: skip
        # fsync off: a test cluster is thrown away; it changes durability, not behaviour.
        # wal_level logical: the invitation replay test reads a logical decoding slot.
        options = (
            f"-c listen_addresses='' -c unix_socket_directories={self.folder} -c fsync=off"
            " -c wal_level=logical"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-o", options,
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SERVICE_USER}@/{database}?host={self.folder}"

    def new_database(self) -> str:
        """A fresh, empty database in the cluster; its URL."""
        return self.copy_database(None)

    def copy_database(self, template_url: str | None) -> str:
        """A new database in the cluster, a copy of the one at ``template_url`` (or empty);
        its URL. Connections still open on the template (an app's kept connection) are
        ended first: PostgreSQL copies only a database nobody is connected to."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        name = f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            if template_url is None:
                conn.execute(f"CREATE DATABASE {name}")
            else:
                template = conninfo_to_dict(template_url)["dbname"]
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                    [template],
                )
                conn.execute(f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY {STRATEGY}")
        return self.url(name)

    def rename_database(self, url: str, new_name: str) -> None:
        """Give the database at ``url`` a new name (nobody may be connected to it)."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        name = conninfo_to_dict(url)["dbname"]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {name} RENAME TO {new_name}")

    def release_database(self, url: str) -> None:
        """Let a test's database go: it is dropped as soon as nothing is connected to it.

        Each copy holds 8.5 MB, hundreds of them gigabytes. Dropping at once would have to
        end the app's kept connection, and PostgreSQL then waits 100 ms for it to go; one
        test later that connection has moved to the next test's database, so the drop is
        free (dropping then costs about 10 ms a test, against 110 ms at once).
        """
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        self.released.append(str(conninfo_to_dict(url)["dbname"]))
        with psycopg.connect(self.url(), autocommit=True) as conn:
            busy = {
                name
                for (name,) in conn.execute(
                    "SELECT datname FROM pg_stat_activity WHERE datname = ANY(%s)",
                    [self.released],
                )
            }
            for name in [name for name in self.released if name not in busy]:
                conn.execute(f"DROP DATABASE IF EXISTS {name}")
                self.released.remove(name)

    def _run(self, program: str, *arguments: str) -> None:
        command = [str(self.binaries / program), *arguments]
        if self.user is not None:
            command = ["runuser", "-u", self.user.pw_name, "--", *command]
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder)


def _service_user() -> pwd.struct_passwd | None:
    """Who runs the server: ``postgres`` when we are root, else ourselves (None)."""
    return pwd.getpwnam(SERVICE_USER) if os.geteuid() == 0 else None


@pytest.fixture(scope="session")
def postgresql_cluster() -> Iterator[Cluster]:
    """One throwaway cluster for the session; skips where PostgreSQL is not installed."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    binaries = server_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL's server is not installed (Debian: postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="survey-pg-"))  # short: a socket path is ≤ 107
    cluster = Cluster(binaries, folder)
    try:
        cluster.start()
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The ``DATABASE`` setting of a new, empty database, once for each backend."""
    if backend == "sqlite":
        yield str(tmp_path / "survey.db")
        return
    cluster: Cluster = request.getfixturevalue("postgresql_cluster")
    url = cluster.new_database()
    yield url
    cluster.release_database(url)
