"""Which database the ``DATABASE`` setting names: a SQLite file (the default) or a
PostgreSQL server (a ``postgresql://`` address), opened and migrated alike.

The one place that tells the backends apart by the setting; everything below it takes an
open database of either kind (``Database``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

import sqlite_utils

from survey_app.config import POSTGRESQL_SCHEMES
from survey_app.domain.display_logic import NOT_APPLICABLE
from survey_app.storage import database, postgresql

Database: TypeAlias = sqlite_utils.Database | postgresql.PostgresDatabase
T = TypeVar("T")


def is_postgresql(setting: str) -> bool:
    """Whether the ``DATABASE`` setting is a PostgreSQL address rather than a file path."""
    return setting.startswith(POSTGRESQL_SCHEMES)


def connect(setting: str, *, streaming: bool = False) -> Database:
    """Open the database the setting names, on a connection of its own. ``streaming``:
    read a few rows at a time on PostgreSQL (``PostgresDatabase``); SQLite always does."""
    if is_postgresql(setting):
        return postgresql.connect(setting, streaming)
    return database.connect(setting)


def describe_setting(setting: str) -> str:
    """The database the setting names, for messages: a file's path, or a PostgreSQL
    database's name, server and user (never its password)."""
    return postgresql.describe(setting) if is_postgresql(setting) else setting


def setting_of(db: Database) -> str:
    """The setting that opens ``db`` again, on a connection of its own: the PostgreSQL
    address it was opened with, or the SQLite file's absolute path."""
    if isinstance(db, postgresql.PostgresDatabase):
        return db.url
    return str(db.execute("PRAGMA database_list").fetchone()[2])


def migrate(db: Database) -> int:
    """Bring the database to the current schema with the numbered migrations; its version."""
    if isinstance(db, postgresql.PostgresDatabase):
        return postgresql.migrate(db, database.MIGRATIONS)
    return database.migrate(db)


def schema_version(db: Database) -> int:
    if isinstance(db, postgresql.PostgresDatabase):
        return postgresql.schema_version(db)
    return database.schema_version(db)


@dataclass(frozen=True)
class AnswerSql:
    """How a backend reads one question's stored answer out of ``responses.answers`` (JSON
    text). Each expression holds one ``?``, bound to ``parameter(key)``. An answer that did
    not apply (``NOT_APPLICABLE``) reads as null, like a skip, except in ``stored``.

    SQLite's ``json_extract`` gives the stored value with its own type (an integer or a
    text), good for every use; PostgreSQL reads JSON as ``jsonb`` and needs to be told:
    ``->>`` gives text, cast for arithmetic, and ``->`` keeps the type for grouping
    (psycopg loads a ``jsonb`` as the Python value, as SQLite's rows come).
    """

    parameter: Callable[[str], str]
    #: The value as stored, "not applicable" included: compared with a text.
    stored: str
    #: The answer with its stored type (a number, a text or null): grouped and returned.
    value: str
    #: The answer as text: compared with a text, cut with ``substr``, joined with ``||``.
    text: str
    #: The answer as an integer: summed, multiplied, compared with a number.
    number: str


def _json_path(key: str) -> str:
    return f'$."{key}"'


_SQLITE_ANSWER = "json_extract(answers, ?)"
_SQLITE_APPLICABLE = f"nullif({_SQLITE_ANSWER}, '{NOT_APPLICABLE}')"
SQLITE_ANSWERS = AnswerSql(
    parameter=_json_path,
    stored=_SQLITE_ANSWER,
    value=_SQLITE_APPLICABLE,
    text=_SQLITE_APPLICABLE,
    number=_SQLITE_APPLICABLE,
)
_POSTGRESQL_TEXT = "(CAST(answers AS jsonb) ->> CAST(? AS TEXT))"
POSTGRESQL_ANSWERS = AnswerSql(
    parameter=str,
    stored=_POSTGRESQL_TEXT,
    # A skip is JSON null, read as SQL null: grouped with an absent key, as on SQLite.
    value=(
        "nullif(nullif(CAST(answers AS jsonb) -> CAST(? AS TEXT), 'null'), "
        f"'{json.dumps(NOT_APPLICABLE)}')"
    ),
    text=f"nullif({_POSTGRESQL_TEXT}, '{NOT_APPLICABLE}')",
    number=f"CAST(nullif({_POSTGRESQL_TEXT}, '{NOT_APPLICABLE}') AS BIGINT)",
)


def answer_sql(db: Database) -> AnswerSql:
    """How ``db`` reads stored answers (``AnswerSql``)."""
    return POSTGRESQL_ANSWERS if isinstance(db, postgresql.PostgresDatabase) else SQLITE_ANSWERS


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
    db = connect(setting, streaming=True)
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
