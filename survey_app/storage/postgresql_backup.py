"""Backups of a PostgreSQL database: ``pg_dump``'s custom format, restored by ``pg_restore``.

What SQLite's online backup API is for a file (``database.backup_database``), ``pg_dump``
is for a server: one consistent snapshot taken in a repeatable-read transaction while the
app keeps writing. The dump goes to a file the caller created readable by its owner only
(it holds password hashes). ``pg_dump`` exits with an error unless the whole dump was
written; ``pg_restore`` restores all of it or, in one transaction, nothing.

The password never appears on a command line (where ``ps`` would show it): the programs
get the address without it, and the password through ``PGPASSWORD`` in their environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess  # noqa: S404 (fixed programs, arguments as a list, no shell)
from pathlib import Path


class BackupError(RuntimeError):
    """pg_dump or pg_restore failed, or is not installed; the first line of its error."""


def dump(url: str, target: str | Path) -> None:
    """Write the database at ``url`` to ``target`` (an existing, owner-only file)."""
    _run("pg_dump", "--format=custom", "--no-owner", f"--file={target}", url=url)


def restore(source: str | Path, url: str) -> None:
    """Replace what the database at ``url`` holds with the dump at ``source``, all of it or
    nothing (one transaction)."""
    _run(
        "pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction",
        "--exit-on-error", str(source), url=url,
    )  # fmt: skip


def _run(program: str, *arguments: str, url: str) -> None:
    path = shutil.which(program)
    if path is None:
        raise BackupError(f"{program} is not installed (Debian: postgresql-client)")
    environment = dict(os.environ)
    address, password = address_and_password(url)
    if password:
        environment["PGPASSWORD"] = password
    done = subprocess.run(  # noqa: S603 (a fixed program, no shell)
        [path, *arguments, f"--dbname={address}"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"{program}: exit status {done.returncode}"]
        raise BackupError(lines[0])


def address_and_password(url: str) -> tuple[str, str | None]:
    """The address as a libpq connection string without its password, and the password."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    parts = conninfo_to_dict(url)
    password = parts.pop("password", None)
    return make_conninfo("", **parts), None if password is None else str(password)
