"""The database: one sqlite-utils connection per request, the schema and its migrations.

Nothing else opens connections. Migrations are numbered and each runs in its own
transaction with ``PRAGMA user_version`` bumped inside it, so a crash mid-migration leaves
the previous version intact and several workers starting at once migrate exactly once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import sqlite_utils
from flask import Flask, current_app, g

BUSY_TIMEOUT_MS = 10_000
T = TypeVar("T")


def _create_surveys_questions_responses(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE surveys (
            id INTEGER PRIMARY KEY,
            slug TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            created_on TEXT NOT NULL
        );
        -- n and reported_yes are running totals kept in the same transaction as each
        -- response, so estimates never need a scan of the responses.
        CREATE TABLE questions (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            position INTEGER NOT NULL,
            key TEXT NOT NULL,
            text TEXT NOT NULL,
            type TEXT NOT NULL,
            truth_probability REAL NOT NULL,
            forced_yes_probability REAL NOT NULL,
            n INTEGER NOT NULL DEFAULT 0,
            reported_yes INTEGER NOT NULL DEFAULT 0,
            UNIQUE (survey_id, key),
            UNIQUE (survey_id, position)
        );
        -- Privacy invariant 6: only the survey, the randomized answers, the mechanism's
        -- parameters and the day. No address, no user agent, no time of day.
        CREATE TABLE responses (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            submission_id TEXT NOT NULL UNIQUE,
            answered_on TEXT NOT NULL,
            mechanism TEXT NOT NULL,
            truth_probability REAL NOT NULL,
            forced_yes_probability REAL NOT NULL,
            answers TEXT NOT NULL
        );
        CREATE INDEX responses_by_survey ON responses (survey_id);
        """
    )


def _create_researchers(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE researchers (
            id INTEGER PRIMARY KEY,
            username TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            created_on TEXT NOT NULL
        );
        -- Failed logins per account and per (hashed) address, to slow down guessing.
        -- Shared through the database so every worker process sees the same counts.
        CREATE TABLE login_failures (
            key TEXT PRIMARY KEY,
            failures INTEGER NOT NULL,
            blocked_until REAL NOT NULL
        );
        """
    )


MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (
    _create_surveys_questions_responses,
    _create_researchers,
)


def connect(path: str | Path) -> sqlite_utils.Database:
    """Open the database in autocommit mode; writers use ``write_transaction``.

    WAL lets readers run while one writer writes; the busy timeout makes concurrent
    writers queue instead of failing with "database is locked".
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    return sqlite_utils.Database(conn)


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One short write transaction: all of it is stored, or none of it.

    ``BEGIN IMMEDIATE`` takes the write lock up front, so a transaction never fails
    half-way when it would upgrade from reading to writing under concurrency.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def schema_version(db: sqlite_utils.Database) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def migrate(db: sqlite_utils.Database) -> int:
    """Apply every migration the database has not had yet; returns the new version."""
    while schema_version(db) < len(MIGRATIONS):
        with write_transaction(db):
            version = schema_version(db)  # re-read under the lock: another worker may have won
            if version < len(MIGRATIONS):
                MIGRATIONS[version](db)
                db.execute(f"PRAGMA user_version = {version + 1}")
    return schema_version(db)


_migrated_paths: set[str] = set()


def get_db() -> sqlite_utils.Database:
    """The request's connection, opened on first use and migrated once per process."""
    if "db" not in g:
        path = current_app.config["DATABASE"]
        g.db = connect(path)
        if path not in _migrated_paths:
            migrate(g.db)
            _migrated_paths.add(path)
    db: sqlite_utils.Database = g.db
    return db


def stream_rows(path: str, produce: Callable[[sqlite_utils.Database], Iterator[T]]) -> Iterator[T]:
    """Run a streaming export on a connection of its own, closed when the stream ends.

    A streamed response outlives its request, and with it the request's connection; the
    stream must not depend on that one.
    """
    db = connect(path)
    try:
        yield from produce(db)
    finally:
        db.conn.close()


def close_db(_error: BaseException | None = None) -> None:
    db = g.pop("db", None)
    if db is not None:
        db.conn.close()


def init_app(app: Flask) -> None:
    app.teardown_appcontext(close_db)
