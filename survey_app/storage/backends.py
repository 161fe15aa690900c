"""Which database the ``DATABASE`` setting names: a SQLite file (the default) or a
PostgreSQL server (a ``postgresql://`` address), opened and migrated alike.

The one place that tells the backends apart by the setting; everything below it takes an
open database of either kind.
"""

from __future__ import annotations

from typing import TypeAlias

import sqlite_utils

from survey_app.storage import database, postgresql

Database: TypeAlias = sqlite_utils.Database | postgresql.PostgresDatabase
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


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
