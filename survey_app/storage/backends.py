"""Which database the ``DATABASE`` setting names: a SQLite file (the default) or a
PostgreSQL server (a ``postgresql://`` address), opened and migrated alike.

The one place that tells the backends apart by the setting; everything below it takes an
open database of either kind (``Database``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TypeAlias, TypeVar

import sqlite_utils

from survey_app.storage import database, postgresql

Database: TypeAlias = sqlite_utils.Database | postgresql.PostgresDatabase
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")
T = TypeVar("T")


def is_postgresql(setting: str) -> bool:
    """Whether the ``DATABASE`` setting is a PostgreSQL address rather than a file path."""
    return setting.startswith(POSTGRESQL_SCHEMES)


def connect(setting: str) -> Database:
    """Open the database the setting names, on a connection of its own."""
    if is_postgresql(setting):
        return postgresql.connect(setting)
    return database.connect(setting)


def migrate(db: Database) -> int:
    """Bring the database to the current schema with the numbered migrations; its version."""
    if isinstance(db, postgresql.PostgresDatabase):
        return postgresql.migrate(db, database.MIGRATIONS)
    return database.migrate(db)


def schema_version(db: Database) -> int:
    if isinstance(db, postgresql.PostgresDatabase):
        return postgresql.schema_version(db)
    return database.schema_version(db)


_migrated: set[str] = set()
_per_thread = threading.local()


def thread_connection(setting: str) -> Database:
    """This thread's connection to the database the setting names, kept open across requests.

    Opening a connection costs more than most requests here: SQLite re-reads the schema
    and runs its PRAGMAs again (and closing the last connection checkpoints the WAL);
    PostgreSQL starts a server process per connection. So each worker thread keeps one
    connection (to one database at a time) and reuses it. The database is migrated once
    per process. A connection found broken (PostgreSQL restarted, the network dropped) is
    replaced by a new one on the next request.
    """
    cached: tuple[str, Database] | None = getattr(_per_thread, "db", None)
    if cached is not None and cached[0] == setting and not _broken(cached[1]):
        return cached[1]
    if cached is not None:
        _per_thread.db = None
        cached[1].conn.close()
    db = connect(setting)
    _per_thread.db = (setting, db)
    if setting not in _migrated:
        migrate(db)
        _migrated.add(setting)
    return db


def _broken(db: Database) -> bool:
    return isinstance(db, postgresql.PostgresDatabase) and db.conn.raw.closed


def stream_rows(setting: str, produce: Callable[[Database], Iterator[T]]) -> Iterator[T]:
    """Run a streaming export on a connection of its own, closed when the stream ends.

    A streamed response outlives its request, and with it the request's connection; the
    stream must not depend on that one. On PostgreSQL the connection streams its reads
    (``postgresql.PostgresDatabase``), so memory stays flat however many rows.
    """
    db = postgresql.connect(setting, streaming=True) if is_postgresql(setting) else connect(setting)
    try:
        yield from produce(db)
    finally:
        db.conn.close()


def roll_back_unfinished() -> None:
    """Leave this thread's connection as a fresh one would be: outside any transaction.

    ``write_transaction`` already rolls back on errors; this is the backstop that keeps
    one request's unfinished transaction from leaking into the next on this thread.
    """
    cached = getattr(_per_thread, "db", None)
    if cached is not None and not _broken(cached[1]) and cached[1].conn.in_transaction:
        cached[1].conn.rollback()
