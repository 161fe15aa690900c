"""What the app left in its database, read on a connection of its own as a thief or an
auditor would, on either backend.

Every read goes through ``backends.connect`` and SQL both backends accept (``?``
placeholders are translated for PostgreSQL), so a test reads SQLite and PostgreSQL alike.
Only the catalogue (which tables, which columns) differs by backend, and only here.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from flask import Flask

from survey_app.storage import backends
from survey_app.storage.backends import Database
from survey_app.storage.postgresql import PostgresDatabase

from .examples import KEYS, SLUG
from .postgresql import server_binaries

try:
    import psycopg

    #: What a broken constraint raises, on either backend.
    INTEGRITY_ERRORS: tuple[type[Exception], ...] = (sqlite3.IntegrityError, psycopg.IntegrityError)
except ImportError:  # SQLite alone: the postgres extra is not installed
    INTEGRITY_ERRORS = (sqlite3.IntegrityError,)


@contextmanager
def opened(setting: str) -> Iterator[Database]:
    """The database the ``DATABASE`` setting names, on its own autocommit connection,
    closed when the block ends (PostgreSQL copies or drops no database still connected)."""
    db = backends.connect(setting)
    try:
        yield db
    finally:
        db.conn.close()


def copy_sqlite_file(source: str | Path, target: str | Path) -> None:
    """Write the SQLite database at ``source`` over the one at ``target`` (or a new file),
    with SQLite's backup API: the source's connection may still hold pages in its WAL."""
    with (
        contextlib.closing(sqlite3.connect(source)) as reading,
        contextlib.closing(sqlite3.connect(target)) as writing,
    ):
        reading.backup(writing)


def rows(
    db: Database, table: str, where: str = "", parameters: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """Every row of ``table`` (``where`` a condition with ``?`` placeholders) as a dict, in
    the order of its first column: the id where the table has one, insertion order.
    PostgreSQL, unlike SQLite, gives no order without one."""
    condition = f" WHERE {where}" if where else ""
    return list(db.query(f"SELECT * FROM {table}{condition} ORDER BY 1", list(parameters)))


def count(db: Database, table: str, where: str = "", parameters: Sequence[Any] = ()) -> int:
    """How many rows of ``table`` (``where`` a condition with ``?`` placeholders)."""
    condition = f" WHERE {where}" if where else ""
    return int(db.execute(f"SELECT count(*) FROM {table}{condition}", parameters).fetchone()[0])


def table_names(db: Database) -> list[str]:
    """The app's tables, by name."""
    if isinstance(db, PostgresDatabase):
        sql = (
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() ORDER BY table_name"
        )
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    return [name for (name,) in db.execute(sql).fetchall()]


def column_names(db: Database, table: str) -> list[str]:
    """The columns of ``table``, in their order."""
    if isinstance(db, PostgresDatabase):
        sql = (
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position"
        )
        return [name for (name,) in db.execute(sql, [table]).fetchall()]
    return [row[1] for row in db.execute("SELECT * FROM pragma_table_info(?)", [table])]


def broken_references(db: Database) -> list[Any]:
    """Rows whose foreign keys point nowhere. SQLite checks them on request; PostgreSQL
    enforces every foreign key as rows change, so there it names the constraints not
    validated (only those could let such a row in)."""
    if isinstance(db, PostgresDatabase):
        sql = "SELECT conname FROM pg_constraint WHERE contype = 'f' AND NOT convalidated"
        return list(db.execute(sql).fetchall())
    return list(db.execute("PRAGMA foreign_key_check").fetchall())


def database_bytes(setting: str) -> bytes:
    """What the app promises holds no deleted data, as bytes to search.

    SQLite: the database file and its WAL, as a thief copying them now would get them
    (``secure_delete`` zeroes deleted rows, and the WAL is emptied). PostgreSQL: a plain
    ``pg_dump`` of the database, what its tables hold and any backup made now would hold.
    Less is promised there (docs/data-retention.md, "On PostgreSQL"): after the ``VACUUM``
    a deletion runs, no old row version is left in the tables (``tests/app/test_retention.py``
    counts them with ``pgstattuple``), but the freed space of the table files may keep
    the bytes until reused, and the cluster's WAL is the server's, never erased by the app.
    """
    if not backends.is_postgresql(setting):
        wal = Path(f"{setting}-wal")
        return Path(setting).read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    binaries = server_binaries()
    assert binaries is not None
    dumped = subprocess.run(
        [str(binaries / "pg_dump"), "--format=plain", "--dbname", setting],
        check=True,
        capture_output=True,
    )
    return dumped.stdout


def tally_cells(database: Database) -> dict[str, dict[str, int]]:
    """Every question's running tallies by key ({"n": …, "yes": …} for yes/no)."""
    cells: dict[str, dict[str, int]] = {}
    for key, cell, value in database.execute(
        "SELECT q.key, t.cell, t.value FROM questions q LEFT JOIN tallies t ON t.question_id = q.id"
    ).fetchall():
        cells.setdefault(key, {})
        if cell is not None:
            cells[key][cell] = value
    return cells


def stored_answers(
    setting: str, slug: str | None = None, submission_id: str | None = None
) -> list[dict[str, Any]]:
    """The stored responses' answers, in the order stored: every response, the survey
    ``slug``'s, or the one stored under ``submission_id`` (a form token's random part)."""
    conditions, parameters = [], []
    if slug is not None:
        conditions.append("survey_id = (SELECT id FROM surveys WHERE slug = ?)")
        parameters.append(slug)
    if submission_id is not None:
        conditions.append("submission_id = ?")
        parameters.append(submission_id)
    with opened(setting) as db:
        found = rows(db, "responses", " AND ".join(conditions), parameters)
    return [json.loads(row["answers"]) for row in found]


def stored_cells(app: Flask) -> dict[str, dict[str, int]]:
    """``tally_cells`` of the app's database, read on a connection of its own."""
    with opened(app.config["DATABASE"]) as db:
        return tally_cells(db)


class StoredState:
    """The app's database opened on its own, autocommit, as an auditor would: what many
    generated requests left behind, for the example survey."""

    def __init__(self, setting: str) -> None:
        self.setting = setting

    def connect(self) -> AbstractContextManager[Database]:
        """The database on a connection of its own, for a ``with`` block."""
        return opened(self.setting)

    def counts(self) -> tuple[int, dict[str, tuple[int, int]]]:
        """(response rows, {question key: (n, reported_yes)}) for the example survey."""
        with self.connect() as db:
            responses = count(db, "responses")
            counters = dict.fromkeys(KEYS, (0, 0))
            for key, n, yes in db.execute(
                "SELECT q.key, sum(CASE WHEN t.cell = 'n' THEN t.value ELSE 0 END), "
                "sum(CASE WHEN t.cell = 'yes' THEN t.value ELSE 0 END) "
                "FROM questions q JOIN surveys s ON q.survey_id = s.id "
                "JOIN tallies t ON t.question_id = q.id WHERE s.slug = ? GROUP BY q.key",
                [SLUG],
            ).fetchall():
                counters[key] = (n, yes)
        return responses, counters

    def recounted(self) -> dict[str, tuple[int, int]]:
        """The counters rebuilt from the stored rows: what they must always equal."""
        counters = dict.fromkeys(KEYS, (0, 0))
        with self.connect() as db:
            for (stored_answers,) in db.execute("SELECT answers FROM responses").fetchall():
                for key, value in json.loads(stored_answers).items():
                    n, yes = counters[key]
                    counters[key] = (n + 1, yes + value)
        return counters

    def reset_responses(self) -> None:
        """Back to no responses, in one transaction (each commit is an fsync: keep them few)."""
        with self.connect() as db:
            if count(db, "responses"):
                db.executescript(
                    "BEGIN; DELETE FROM responses; DELETE FROM tallies; "
                    "UPDATE surveys SET responses = 0; COMMIT;"
                )

    def table_sizes(self) -> tuple[int, int]:
        """(surveys, questions)."""
        with self.connect() as db:
            return count(db, "surveys"), count(db, "questions")
