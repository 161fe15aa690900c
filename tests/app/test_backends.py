"""SQLite and PostgreSQL: the same numbered migrations make the same schema on both.

PostgreSQL runs in a throwaway cluster (tests/support/postgresql.py); ``database_url``
runs a test once per backend. The schemas are compared as a reader of the tables would
see them: table and column names, types by kind, which columns may be NULL, the named
indexes and the triggers.
"""

from __future__ import annotations

import uuid

import pytest

from survey_app.domain.definitions import parse_definition
from survey_app.storage import accounts, backends, events, postgresql_backup, rate_counts
from survey_app.storage.database import MIGRATIONS, create_owner_only_file, write_transaction
from survey_app.storage.postgresql import (
    VERSION_TABLE,
    DatabaseUnreachableError,
    PostgresDatabase,
)
from survey_app.storage.postgresql_dialect import UntranslatableError, translate
from survey_app.storage.surveys import list_public_surveys, store_survey
from tests.support.postgresql import Cluster

# Declared types by kind: SQLite's affinities, PostgreSQL's names for them.
KINDS = {
    "INTEGER": "integer",
    "bigint": "integer",
    "REAL": "real",
    "double precision": "real",
    "TEXT": "text",
    "text": "text",
}

Schema = dict[str, object]


def sqlite_schema(db) -> Schema:
    tables = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    columns = {
        table: {
            name: (KINDS[declared], bool(notnull or pk))
            for _cid, name, declared, notnull, _default, pk in db.execute(
                f"PRAGMA table_info({table})"
            )
        }
        for table in tables
    }
    named = "SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL"
    return {
        "columns": columns,
        "indexes": sorted(row[0] for row in db.execute(named, ["index"])),
        "triggers": sorted(row[0] for row in db.execute(named, ["trigger"])),
    }


def postgresql_schema(db: PostgresDatabase) -> Schema:
    columns: dict[str, dict[str, tuple[str, bool]]] = {}
    for table, name, declared, nullable in db.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name <> ? ORDER BY ordinal_position",
        [VERSION_TABLE],
    ):
        columns.setdefault(table, {})[name] = (KINDS[declared], nullable == "NO")
    indexes = db.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
        "AND indexname NOT IN (SELECT conname FROM pg_constraint)"
    )
    triggers = db.execute(
        "SELECT DISTINCT trigger_name FROM information_schema.triggers "
        "WHERE trigger_schema = current_schema()"
    )
    return {
        "columns": columns,
        "indexes": sorted(row[0] for row in indexes),
        "triggers": sorted(row[0] for row in triggers),
    }


def schema(db: backends.Database) -> Schema:
    if isinstance(db, PostgresDatabase):
        return postgresql_schema(db)
    return sqlite_schema(db)


@pytest.fixture
def migrated(database_url: str):
    db = backends.connect(database_url)
    backends.migrate(db)
    yield db
    db.conn.close()


def test_init_db_brings_either_backend_to_the_current_version_and_is_safe_to_repeat(
    database_url: str,
):
    db = backends.connect(database_url)
    try:
        assert backends.schema_version(db) == 0
        assert backends.migrate(db) == len(MIGRATIONS)
        assert backends.migrate(db) == len(MIGRATIONS)
        assert backends.schema_version(db) == len(MIGRATIONS)
    finally:
        db.conn.close()


def test_the_same_migrations_make_the_same_schema_on_both(
    tmp_path,
    postgresql_cluster: Cluster,
):
    on_sqlite = backends.connect(str(tmp_path / "survey.db"))
    on_postgresql = backends.connect(postgresql_cluster.new_database())
    try:
        for db in (on_sqlite, on_postgresql):
            backends.migrate(db)
        expected, found = schema(on_sqlite), schema(on_postgresql)
        assert sorted(found["columns"]) == sorted(expected["columns"])  # type: ignore[call-overload]
        assert found == expected
        assert "question_mechanism_fixed" in found["triggers"]  # type: ignore[operator]
    finally:
        on_sqlite.conn.close()
        on_postgresql.conn.close()


def test_a_stored_questions_mechanism_cannot_change_on_either_backend(migrated):
    with write_transaction(migrated):
        survey_id = migrated.execute(
            "INSERT INTO surveys (slug, title, created_on) VALUES (?, ?, ?) RETURNING id",
            ["s", "A survey", "2026-11-26"],
        ).fetchone()[0]
        migrated.execute(
            "INSERT INTO questions (survey_id, position, key, text, type, parameters) "
            "VALUES (?, 0, 'q', 'Q?', 'yes_no', '{}')",
            [survey_id],
        )
    with pytest.raises(Exception, match="a question's mechanism is fixed once stored"):
        with write_transaction(migrated):
            migrated.execute("UPDATE questions SET parameters = '{\"p\": 1}'")
    with write_transaction(migrated):
        migrated.execute("UPDATE questions SET text = 'Asked again?'")
    assert [row[0] for row in migrated.execute("SELECT text FROM questions")] == ["Asked again?"]


def test_survey_ids_are_never_given_out_twice_on_either_backend(migrated):
    def new_survey(slug: str) -> int:
        with write_transaction(migrated):
            return int(
                migrated.execute(
                    "INSERT INTO surveys (slug, title, created_on) VALUES (?, 'T', 'd') "
                    "RETURNING id",
                    [slug],
                ).fetchone()[0]
            )

    first = new_survey("a")
    with write_transaction(migrated):
        migrated.execute("DELETE FROM surveys WHERE id = ?", [first])
    assert new_survey("b") > first


def test_writers_on_two_postgresql_connections_take_turns(
    postgresql_cluster: Cluster,
):
    """Two nodes' connections: while one holds a write transaction the other's waits, as
    SQLite's ``BEGIN IMMEDIATE`` makes it; reads go on meanwhile. (The second sends what
    its node's ``write_transaction`` would, without this process's own writer lock.)"""
    url = postgresql_cluster.new_database()
    first, second = backends.connect(url), backends.connect(url)
    try:
        backends.migrate(first)
        second.execute("SET lock_timeout = '300ms'")
        with write_transaction(first):
            first.execute(
                "INSERT INTO events (happened_at, actor, action, subject) VALUES (?, ?, ?, ?)",
                ["t", "a", "b", "c"],
            )
            assert second.execute("SELECT count(*) FROM events").fetchone() == (0,)
            with pytest.raises(Exception, match="lock timeout"):
                second.execute("BEGIN IMMEDIATE")
            assert not second.conn.in_transaction  # as on SQLite: none was opened
        second.execute("BEGIN IMMEDIATE")
        assert second.execute("SELECT count(*) FROM events").fetchone() == (1,)
        second.execute("COMMIT")
    finally:
        first.conn.close()
        second.conn.close()


def test_sums_of_integers_are_integers_on_either_backend(migrated):
    with write_transaction(migrated):
        migrated.execute(
            "INSERT INTO rate_counts (key, count, window_ends) VALUES (?, ?, 1.5), (?, ?, 1.5)",
            ["a", 2**62, "b", 2**62 - 1],
        )
    total, ends = migrated.execute(
        "SELECT sum(count), sum(window_ends) FROM rate_counts"
    ).fetchone()
    assert (total, type(total)) == (2**63 - 1, int)
    assert (ends, type(ends)) == (3.0, float)


def test_an_unreachable_postgresql_database_is_one_line_naming_the_setting(
    tmp_path,
    postgresql_cluster: Cluster,
):
    nowhere = f"postgresql://app:s3cret@/survey?host={tmp_path}"
    missing = postgresql_cluster.url("no_such_database").replace("postgres@", "postgres:s3cret@")
    for url, reason in ((nowhere, "No such file"), (missing, "does not exist")):
        with pytest.raises(DatabaseUnreachableError) as refused:
            backends.connect(url)
        message = str(refused.value)
        assert message.startswith("SURVEY_APP_DATABASE: cannot open PostgreSQL database")
        assert reason in message
        assert "\n" not in message
        assert "s3cret" not in message


def test_postgresql_writers_wait_as_long_as_sqlites_busy_timeout(migrated):
    if isinstance(migrated, PostgresDatabase):
        assert migrated.execute("SHOW lock_timeout").fetchone() == ("10s",)
    else:
        assert migrated.execute("PRAGMA busy_timeout").fetchone() == (10_000,)


def test_a_postgresql_backup_restores_what_was_stored(
    tmp_path,
    postgresql_cluster: Cluster,
):
    # With a password (the test cluster trusts its socket and ignores it): passed to pg_dump
    # in its environment, never on its command line.
    source_url = postgresql_cluster.new_database().replace("postgres@", "postgres:s3cret@")
    assert "s3cret" not in postgresql_backup.address_and_password(source_url)[0]
    source = backends.connect(source_url)
    copy_url = postgresql_cluster.new_database()
    backup = tmp_path / "survey.dump"
    create_owner_only_file(backup)
    try:
        backends.migrate(source)
        with write_transaction(source):
            source.execute(
                "INSERT INTO surveys (slug, title, created_on) VALUES (?, ?, ?)",
                ["kept", "Kept for later", "2026-11-26"],
            )
        postgresql_backup.dump(source_url, backup)
        postgresql_backup.restore(backup, copy_url)
    finally:
        source.conn.close()
    copy = backends.connect(copy_url)
    try:
        assert backends.schema_version(copy) == len(MIGRATIONS)
        assert copy.execute("SELECT slug, title FROM surveys").fetchall() == [
            ("kept", "Kept for later")
        ]
    finally:
        copy.conn.close()
    assert backup.stat().st_mode & 0o777 == 0o600


def test_a_truncated_postgresql_backup_changes_nothing(
    tmp_path,
    postgresql_cluster: Cluster,
):
    """Restoring starts, meets the cut, and leaves the database as it was."""
    url = postgresql_cluster.new_database()
    db = backends.connect(url)
    damaged = tmp_path / "survey.dump"
    create_owner_only_file(damaged)
    try:
        backends.migrate(db)
        with write_transaction(db):  # data enough that the cut falls in it, past the schema
            db.execute(
                "INSERT INTO events (happened_at, actor, action, subject) "
                "SELECT 't', 'a', 'b', md5(random()::text) || md5(random()::text) "
                "FROM generate_series(1, 5000)"
            )
        postgresql_backup.dump(url, damaged)
        with write_transaction(db):
            db.execute("INSERT INTO surveys (slug, title, created_on) VALUES ('s', 'T', 'd')")
        damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size * 2 // 3])
        with pytest.raises(postgresql_backup.BackupError, match="^pg_restore: error: "):
            postgresql_backup.restore(damaged, url)
        assert db.execute("SELECT slug FROM surveys").fetchall() == [("s",)]
        assert backends.schema_version(db) == len(MIGRATIONS)
    finally:
        db.conn.close()


def test_storage_that_already_runs_unchanged_on_either_backend(migrated):
    """Accounts, rate counts and the record of events, as the app calls them: the first
    storage modules whose SQL the dialect carries whole (docs/postgresql-plan.md)."""
    accounts.create_researcher(migrated, "ana", "a long enough password")
    assert accounts.find_researcher(migrated, "ana") == accounts.Researcher(1, "ana", True)
    with pytest.raises(accounts.UsernameTakenError):
        accounts.create_researcher(migrated, "ana", "another long password")
    assert [rate_counts.count_attempt(migrated, "k", 60, 1000.0 + i) for i in range(3)] == [1, 2, 3]
    assert rate_counts.attempts(migrated, "k", 1059.0) == (3, 1060.0)
    assert rate_counts.attempts(migrated, "k", 1060.0) == (0, 1060.0)
    events.record_event(migrated, "ana", "deleted survey", "s: T")
    assert [(e.actor, e.action, e.subject) for e in events.recent_events(migrated)] == [
        ("ana", "deleted survey", "s: T"),
        ("command line", "administrator added", "ana"),
    ]


@pytest.fixture
def in_a_linguistic_locale(database_url: str, request: pytest.FixtureRequest):
    """A migrated database whose own collation orders text as people read it: on
    PostgreSQL a database in ICU's English collation, where "alpha" comes before "Zeta";
    SQLite has no collation but its bytes."""
    if backends.is_postgresql(database_url):
        import psycopg

        cluster: Cluster = request.getfixturevalue("postgresql_cluster")
        name = f"english_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            conn.execute(
                f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en'"
            )
        database_url = cluster.url(name)
    db = backends.connect(database_url)
    backends.migrate(db)
    yield db
    db.conn.close()


def test_text_is_listed_in_byte_order_on_either_backend(in_a_linguistic_locale):
    """Titles and usernames are ordered by their bytes on both backends, as SQLite does
    ("Zeta" before "alpha" before "Émile"), whatever the PostgreSQL database's locale."""
    titles = ["alpha", "Émile", "Zeta", "beta"]
    for number, title in enumerate(titles):
        store_survey(
            in_a_linguistic_locale,
            parse_definition(
                f"slug: s{number}\ntitle: {title}\nquestions:\n"
                "  - {key: q, text: Asked, type: yes_no}\n"
            ),
            listed=True,
        )
    listed = [survey["title"] for survey in list_public_surveys(in_a_linguistic_locale)]
    assert listed == sorted(titles, key=str.encode) == ["Zeta", "alpha", "beta", "Émile"]


def test_the_setting_chooses_the_backend():
    assert backends.is_postgresql("postgresql://app@db.example/survey")
    assert backends.is_postgresql("postgres://app@/survey?host=/run/postgresql")
    assert not backends.is_postgresql("/srv/survey/survey.db")
    assert not backends.is_postgresql("postgresql.db")


@pytest.mark.parametrize(
    ("sqlite", "postgresql"),
    [
        (
            "SELECT '?', x FROM t WHERE a = ? AND b LIKE 'x%' AND c = :name",
            "SELECT '?', x FROM t WHERE a = %s AND b LIKE 'x%%' AND c = %(name)s",
        ),
        (
            "INSERT OR IGNORE INTO t (a) VALUES (?) RETURNING a",
            "INSERT INTO t (a) VALUES (%s) ON CONFLICT DO NOTHING RETURNING a",
        ),
        ("SELECT x::text FROM t WHERE y = ?", "SELECT x::text FROM t WHERE y = %s"),
        (
            "SELECT a FROM t WHERE b = ? ORDER BY a COLLATE BINARY",
            'SELECT a FROM t WHERE b = %s ORDER BY a COLLATE "C"',
        ),
    ],
)
def test_statements_with_parameters_are_translated_outside_their_literals(sqlite, postgresql):
    assert translate(sqlite, parameters=True) == postgresql


def test_a_script_keeps_its_literals_and_loses_its_comments():
    script = (
        "CREATE TABLE t (\n  id INTEGER PRIMARY KEY AUTOINCREMENT, -- REAL? INTEGER!\n"
        "  s TEXT DEFAULT 'INTEGER 100%', r REAL\n) WITHOUT ROWID;"
    )
    assert translate(script, parameters=False).split() == [
        *"CREATE TABLE t ( id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,".split(),
        *"s TEXT DEFAULT 'INTEGER 100%', r DOUBLE PRECISION );".split(),
    ]


@pytest.mark.parametrize(
    "statement", ["PRAGMA user_version", "SELECT sql FROM sqlite_master", "ATTACH 'x' AS y"]
)
def test_what_has_no_translation_is_refused_by_name(statement):
    with pytest.raises(UntranslatableError, match="no PostgreSQL translation"):
        translate(statement, parameters=False)
