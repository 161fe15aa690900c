"""PostgreSQL as the second storage backend: a connection offering the part of
sqlite_utils' API the storage layer uses, and the numbered migrations run on it.

Every statement goes through ``postgresql_dialect.translate``, so the storage layer's SQL
(and the migrations in ``database.MIGRATIONS``) is written once. The connection runs in
autocommit mode, as SQLite's does here: ``database.write_transaction`` opens and ends
transactions itself. psycopg is an optional dependency (the ``postgres`` extra), imported
only when a PostgreSQL database is opened, so SQLite installs never need it.

The schema version lives in a one-row table, ``schema_version`` (PostgreSQL has no
``user_version``). Each migration runs in its own write transaction, holding the writers'
advisory lock, with the version re-read under it: DDL is transactional in PostgreSQL, so
as on SQLite a crash mid-migration leaves the previous version whole and several nodes
starting at once migrate exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, cast

import sqlite_utils

from survey_app.config import ENV_PREFIX
from survey_app.storage.database import BUSY_TIMEOUT_MS, write_transaction
from survey_app.storage.postgresql_dialect import begins_write, translate

if TYPE_CHECKING:
    import psycopg

Parameters = Sequence[Any] | Mapping[str, Any] | None
VERSION_TABLE = "schema_version"
CONNECT_TIMEOUT_SECONDS = 10
# Rows a streaming connection's server-side cursor fetches at a time: a few MB of an
# export's rows in the worker, and one round trip per 2,000 rows (benchmarks/TEN_MILLION.md).
STREAM_ROWS = 2_000


class Cursor(Protocol):
    """What storage reads from a statement's result, typed as loosely as sqlite3's cursor
    (whose ``fetchone`` is ``Any``), so that code written for SQLite type-checks on both."""

    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class DatabaseUnavailableError(RuntimeError):
    """The PostgreSQL server cannot be reached now (down, restarting, the connection lost,
    or the writers' lock not free within the busy timeout). Nothing of the transaction it
    interrupted is stored: PostgreSQL rolls back what was not committed. The app answers
    503; the next request opens a new connection."""


class DatabaseUnreachableError(DatabaseUnavailableError):
    """The ``DATABASE`` setting names a PostgreSQL database that cannot be opened."""


@contextmanager
def _unavailable_as_one_error() -> Iterator[None]:
    """psycopg's ``OperationalError`` (a lost connection, a server shutting down, a lock
    timeout) as ``DatabaseUnavailableError``: the one error the app and commands handle."""
    import psycopg

    try:
        yield
    except psycopg.OperationalError as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise DatabaseUnavailableError(f"the PostgreSQL database is unavailable: {reason}") from err


class PostgresConnection:
    """The part of ``sqlite3.Connection`` the storage layer uses, on a psycopg connection."""

    def __init__(self, raw: psycopg.Connection[tuple[Any, ...]]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Parameters = None) -> Cursor:
        """Run one statement. A write transaction that cannot start (its lock timed out) is
        rolled back here: PostgreSQL leaves it open and aborted where SQLite opens none."""
        try:
            with _unavailable_as_one_error():
                translated = translate(sql, parameters=parameters is not None)
                return cast(Cursor, self.raw.execute(translated, parameters))
        except Exception:
            if begins_write(sql) and self.in_transaction:
                self.rollback()
            raise

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with _unavailable_as_one_error(), self.raw.cursor() as cursor:
            cursor.executemany(translate(sql, parameters=True), rows)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status not in (
            TransactionStatus.IDLE,
            TransactionStatus.UNKNOWN,  # the connection is lost: nothing left to end
        )

    def rollback(self) -> None:
        if not self.raw.closed:
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()


class PostgresDatabase:
    """The part of ``sqlite_utils.Database`` the storage layer uses, on PostgreSQL;
    ``url`` is the address it was opened with (the ``DATABASE`` setting).

    ``streaming``: its ``SELECT``s are read through a server-side cursor, ``STREAM_ROWS``
    rows at a time, in one read-only transaction left open until the connection closes.
    psycopg's ordinary cursor receives a whole result before the first row is read (ten
    million responses: gigabytes in the worker), where SQLite's steps through the rows;
    an export's connection of its own (``backends.stream_rows``) streams instead.
    """

    def __init__(self, conn: PostgresConnection, url: str, streaming: bool = False) -> None:
        self.conn = conn
        self.url = url
        self.streaming = streaming
        self._cursors = 0

    def execute(self, sql: str, parameters: Parameters = None) -> Cursor:
        if self.streaming and sql.lstrip()[:6].upper() == "SELECT":
            return self._stream(sql, parameters)
        return self.conn.execute(sql, parameters)

    def _stream(self, sql: str, parameters: Parameters) -> Cursor:
        """``sql``'s rows through a server-side cursor (PostgreSQL's cursors live in a
        transaction: the first opens one, read only)."""
        with _unavailable_as_one_error():
            if not self.conn.in_transaction:
                self.conn.raw.execute("BEGIN READ ONLY")
            self._cursors += 1
            cursor = self.conn.raw.cursor(name=f"stream_{self._cursors}")
            cursor.itersize = STREAM_ROWS
            cursor.execute(translate(sql, parameters=parameters is not None), parameters)
            return cast(Cursor, cursor)

    def executescript(self, sql: str) -> None:
        """Run several statements, without parameters, as one query (as SQLite's does)."""
        with _unavailable_as_one_error():
            self.conn.raw.execute(translate(sql, parameters=False))

    def query(self, sql: str, parameters: Parameters = None) -> Iterator[dict[str, Any]]:
        from psycopg.rows import dict_row

        with _unavailable_as_one_error(), self.conn.raw.cursor(row_factory=dict_row) as cursor:
            cursor.execute(translate(sql, parameters=parameters is not None), parameters)
            yield from cursor


def connect(url: str, streaming: bool = False) -> PostgresDatabase:
    """Open the PostgreSQL database at ``url`` (a ``postgresql://`` address); a
    ``streaming`` one reads its ``SELECT``s a few rows at a time (``PostgresDatabase``).

    Writers wait for the writers' lock as long as SQLite's busy timeout lets them
    (``lock_timeout``). A database that cannot be opened raises
    ``DatabaseUnreachableError``: one line naming the setting and the server, never the
    password.
    """
    import psycopg

    try:
        raw = psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            options=f"-c lock_timeout={BUSY_TIMEOUT_MS}",
        )
    except psycopg.Error as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise DatabaseUnreachableError(
            f"{ENV_PREFIX}DATABASE: cannot open {describe(url)}: {reason}"
        ) from err
    raw.adapters.register_loader("numeric", _whole_numbers_as_int())
    return PostgresDatabase(PostgresConnection(raw), url, streaming)


def describe(url: str) -> str:
    """The database a URL names, for messages: database, server and user, no password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:  # a URL psycopg cannot read is described by its scheme alone
        return "the PostgreSQL database (an unreadable address)"
    server = f"{parts.get('host') or 'localhost'}:{parts.get('port') or 5432}"
    return f"PostgreSQL database {parts.get('dbname')!r} at {server} as {parts.get('user')!r}"


@cache
def _whole_numbers_as_int() -> type[Any]:
    """``sum`` of integers is ``numeric`` on PostgreSQL and an integer on SQLite; storage
    sums only integers, so a whole numeric is loaded as the ``int`` SQLite gives. (Made on
    first use: psycopg is imported only where PostgreSQL is used.)"""
    from psycopg.types.numeric import NumericLoader

    class WholeNumbersAsInt(NumericLoader):
        def load(self, data: Any) -> Any:
            value = super().load(data)
            return int(value) if value == value.to_integral_value() else float(value)

    return WholeNumbersAsInt


def schema_version(db: PostgresDatabase) -> int:
    """The number of migrations applied; 0 for an empty database."""
    if db.execute("SELECT to_regclass(?)", [VERSION_TABLE]).fetchone() == (None,):
        return 0
    row = db.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()  # noqa: S608
    return 0 if row is None else int(row[0])


Migration = Callable[[sqlite_utils.Database], None]


def migrate(db: PostgresDatabase, migrations: Sequence[Migration]) -> int:
    """Apply every migration the database has not had yet; returns the new version.

    Each runs as written for SQLite, through the dialect, unless it has a counterpart in
    ``MIGRATION_COUNTERPARTS`` (a migration that inspects or rebuilds SQLite's own tables).
    """
    while schema_version(db) < len(migrations):
        with write_transaction(db):
            db.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version INTEGER NOT NULL)")
            version = schema_version(db)  # re-read under the lock: another node may have won
            if version < len(migrations):
                migration = migrations[version]
                run = MIGRATION_COUNTERPARTS.get(migration.__name__, migration)
                # The migrations are typed for sqlite_utils; this offers the part they use
                # (tests/app/test_backends.py runs every one of them here).
                run(cast(sqlite_utils.Database, db))
                db.execute(f"DELETE FROM {VERSION_TABLE}")  # noqa: S608
                db.execute(f"INSERT INTO {VERSION_TABLE} VALUES (?)", [version + 1])  # noqa: S608
    return schema_version(db)


def _ids_are_identities(_db: sqlite_utils.Database) -> None:
    """Migration 12 rebuilds SQLite's ``surveys`` table to add ``AUTOINCREMENT``, so that a
    deleted survey's id is never given out again. PostgreSQL's identity columns (the
    dialect makes every ``id`` one) never give an id out twice: nothing to do."""


MIGRATION_COUNTERPARTS: Mapping[str, Migration] = {
    "_survey_ids_never_reused": _ids_are_identities,
}
