"""The per-thread connection: reused across requests, never shared, never left mid-transaction."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app import create_app
from survey_app.storage import backends
from survey_app.storage.postgresql import DatabaseUnavailableError, PostgresConnection
from survey_app.web.database_session import get_db
from tests.support.examples import KEYS, SLUG
from tests.support.researchers import RESEARCH_ROUTES
from tests.support.respondents import submit_client_randomized


def _connection_in_request(app: Flask) -> sqlite3.Connection | PostgresConnection:
    with app.test_request_context("/healthz"):
        return get_db().conn


def test_a_thread_reuses_its_connection_across_requests(app: Flask) -> None:
    assert _connection_in_request(app) is _connection_in_request(app)


def test_threads_never_share_a_connection(app: Flask) -> None:
    seen: list[sqlite3.Connection | PostgresConnection] = []
    worker = threading.Thread(target=lambda: seen.append(_connection_in_request(app)))
    worker.start()
    worker.join()
    assert seen and seen[0] is not _connection_in_request(app)


def test_another_database_replaces_and_closes_the_connection(app: Flask, tmp_path: Path) -> None:
    first = _connection_in_request(app)
    other = create_app({"DATABASE": str(tmp_path / "other.db"), "SECRET_KEY": "test-secret"})
    assert _connection_in_request(other) is not first
    # closed, not left holding a file (or a server's process) open
    with pytest.raises((sqlite3.ProgrammingError, DatabaseUnavailableError)):
        first.execute("SELECT 1")


def test_an_unfinished_transaction_ends_with_its_request(app: Flask) -> None:
    """Whatever a request leaves open is rolled back, so the next one starts clean."""
    with app.test_request_context("/"):
        db = get_db()
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            "INSERT INTO tallies (question_id, cell, value) SELECT id, 'n', 1 FROM questions"
        )
    with app.test_request_context("/"):
        db = get_db()
        assert not db.conn.in_transaction
        assert db.execute("SELECT count(*) FROM tallies").fetchone()[0] == 0


def test_no_route_leaves_the_kept_connection_on_an_old_snapshot(
    app: Flask, logged_in: FlaskClient
) -> None:
    """A statement left open holds a read snapshot for the connection's next requests.

    After every page, a change committed elsewhere (the CLI in another process closing the
    survey) must be seen by the very next request on this thread.
    """
    submit_client_randomized(app, dict.fromkeys(KEYS, "y"))
    for path in ["/", f"/s/{SLUG}", "/healthz", *RESEARCH_ROUTES]:
        logged_in.get(path)
    elsewhere = backends.connect(app.config["DATABASE"])
    elsewhere.execute("UPDATE surveys SET status = 'closed' WHERE slug = ?", [SLUG])
    elsewhere.conn.close()
    assert logged_in.get(f"/s/{SLUG}").status_code == 403


def test_a_version_3_database_migrates_without_losing_a_response(tmp_path) -> None:
    """Before questions kept their own mechanism: REAL t and f per question and per
    response, counters on the question rows. Migrating keeps every response, gives each
    its survey's design, and moves the counters into tallies unchanged."""
    from survey_app.storage.database import MIGRATIONS, connect, migrate, write_transaction
    from survey_app.storage.surveys import get_survey
    from survey_app.storage.tallies import read_tallies, recount

    db = connect(tmp_path / "old.db")
    for version, step in enumerate(MIGRATIONS[:3]):
        with write_transaction(db):
            step(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
    db.execute(
        "INSERT INTO surveys (id, slug, title, created_on) VALUES (1, 'old', 'Old', '2026-01-01')"
    )
    for position, key in enumerate(["a", "b"]):
        db.execute(
            "INSERT INTO questions (survey_id, position, key, text, type, truth_probability, "
            "forced_yes_probability, n, reported_yes) "
            "VALUES (1, ?, ?, ?, 'yes_no', 0.5, 0.5, 3, ?)",
            [position, key, key.upper(), 2 - position],
        )
    for i, answers in enumerate(['{"a": 1, "b": 1}', '{"a": 1, "b": 0}', '{"a": 0, "b": 0}']):
        db.execute(
            "INSERT INTO responses (survey_id, submission_id, answered_on, mechanism, "
            "truth_probability, forced_yes_probability, answers) "
            "VALUES (1, ?, '2026-01-02', 'two_coin_randomized_response', 0.5, 0.5, ?)",
            [f"submission-{i:012d}", answers],
        )
    assert migrate(db) == len(MIGRATIONS)
    survey = get_survey(db, "old")
    assert survey is not None
    assert [q.mechanism.parameters()["truth_probability"] for q in survey.questions] == ["1/2"] * 2
    rows = list(db.query("SELECT design, answers FROM responses ORDER BY id"))
    assert [row["design"] for row in rows] == [survey.design] * 3
    assert rows[0]["answers"] == '{"a": 1, "b": 1}'
    tallies = read_tallies(db, survey)
    assert [tallies[q.id] for q in survey.questions] == [{"n": 3, "yes": 2}, {"n": 3, "yes": 1}]
    assert recount(db, survey).matched
    assert db.execute("SELECT responses FROM surveys").fetchone()[0] == 3
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_version_5_database_gains_languages_without_losing_anything(tmp_path) -> None:
    """Before surveys had languages: every survey becomes English-only, its texts, design,
    response and tallies untouched, and its definition (no source kept) is generated."""
    from survey_app.domain.definitions import parse_definition
    from survey_app.domain.designs import question_mechanism
    from survey_app.storage.database import MIGRATIONS, connect, migrate, write_transaction
    from survey_app.storage.surveys import get_survey, survey_source
    from survey_app.storage.tallies import read_tallies

    path = tmp_path / "v5.db"
    db = connect(path)
    for version, step in enumerate(MIGRATIONS[:5]):
        with write_transaction(db):
            step(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
    parameters = question_mechanism(
        parse_definition("slug: s\ntitle: T\nquestions: [{key: a, text: A}]").questions[0]
    ).parameters()
    design = json.dumps({"a": parameters}, sort_keys=True)
    db.executescript(
        f"""
        INSERT INTO surveys (id, slug, title, description, created_on, status, consent,
            contact, design, responses)
            VALUES (1, 'old', 'Old survey', 'Café ☕', '2026-01-01', 'open', 'Agree?',
            'me@example.edu', 'f1', 1);
        INSERT INTO designs (fingerprint, survey_id, questions) VALUES ('f1', 1, '{design}');
        INSERT INTO questions (id, survey_id, position, key, text, type, parameters)
            VALUES (7, 1, 0, 'a', 'Did you?', 'yes_no', '{json.dumps(parameters)}');
        INSERT INTO responses (survey_id, submission_id, answered_on, design, answers)
            VALUES (1, 'submission-000000000001', '2026-01-02', 'f1', '{{"a": 1}}');
        INSERT INTO tallies (question_id, cell, value) VALUES (7, 'n', 1), (7, 'yes', 1);
        """
    )
    before = db.execute("SELECT * FROM surveys").fetchall()
    db.conn.close()

    db = connect(path)
    assert migrate(db) == len(MIGRATIONS)
    assert (
        db.execute(
            "SELECT id, slug, title, description, created_on, owner_id, status, access, consent, "
            "contact, max_epsilon, design, responses FROM surveys"
        ).fetchall()
        == before
    )
    assert db.execute("SELECT languages, translations, source FROM surveys").fetchall() == [
        ('["en"]', "{}", None)
    ]
    survey = get_survey(db, "old")
    assert survey is not None
    assert (survey.languages, survey.translations, survey.localized("ko")) == (
        ("en",),
        {},
        survey,
    )
    assert survey.questions[0].translations == {}
    assert read_tallies(db, survey) == {7: {"n": 1, "yes": 1}}
    assert db.execute("SELECT answers FROM responses").fetchall() == [('{"a": 1}',)]
    regenerated = parse_definition(survey_source(db, survey))
    assert (regenerated.title, regenerated.description, regenerated.consent) == (
        "Old survey",
        "Café ☕",
        "Agree?",
    )
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_version_10_database_gains_an_administrator_and_owners(tmp_path) -> None:
    """The first account becomes the administrator and owns what nobody owned; surveys on the
    front page stay listed (an upgrade hides no running study), the rest are not listed."""
    from survey_app.storage.database import MIGRATIONS, connect, migrate, write_transaction

    db = connect(tmp_path / "v10.db")
    for version, step in enumerate(MIGRATIONS[:10]):
        with write_transaction(db):
            step(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
    db.executescript(
        """
        INSERT INTO researchers (id, username, password_hash, created_on)
            VALUES (3, 'first', 'x', '2026-01-01'), (5, 'second', 'x', '2026-01-02');
        INSERT INTO surveys (id, slug, title, created_on, status, access, owner_id) VALUES
            (1, 'public', 'P', '2026-01-01', 'open', 'open', NULL),
            (2, 'invited', 'I', '2026-01-01', 'open', 'invitation', 5),
            (3, 'drafted', 'D', '2026-01-01', 'draft', 'open', NULL);
        """
    )
    assert migrate(db) == len(MIGRATIONS)
    assert db.execute("SELECT username, role, active FROM researchers ORDER BY id").fetchall() == [
        ("first", "admin", 1),
        ("second", "researcher", 1),
    ]
    assert db.execute("SELECT slug, owner_id, listed FROM surveys ORDER BY id").fetchall() == [
        ("public", 3, 1),
        ("invited", 5, 0),
        ("drafted", 3, 0),
    ]


def test_a_deleted_surveys_id_is_never_given_out_again(tmp_path) -> None:
    """Workers keep counts in memory by survey id: a new survey must not inherit one. The
    rebuild keeps every survey, column and reference of a version-11 database."""
    from survey_app.domain.definitions import parse_definition
    from survey_app.domain.designs import question_mechanism
    from survey_app.storage.database import MIGRATIONS, connect, migrate, write_transaction
    from survey_app.storage.destruction import delete_survey
    from survey_app.storage.surveys import get_survey, store_survey

    db = connect(tmp_path / "v11.db")
    for version, step in enumerate(MIGRATIONS[:11]):
        with write_transaction(db):
            step(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
    # Rows as version 11 holds them (store_survey writes the columns of today's schema).
    definition = parse_definition("slug: a\ntitle: A\nquestions: [{key: q, text: Q}]")
    parameters = json.dumps(question_mechanism(definition.questions[0]).parameters())
    with write_transaction(db):
        for survey_id, slug in ((1, "a"), (2, "b")):
            db.execute(
                "INSERT INTO surveys (id, slug, title, created_on) VALUES (?, ?, ?, '2026-01-01')",
                [survey_id, slug, slug.upper()],
            )
            db.execute(
                "INSERT INTO questions (survey_id, position, key, text, type, parameters) "
                "VALUES (?, 0, 'q', 'Q', 'yes_no', ?)",
                [survey_id, parameters],
            )
    before = db.execute("SELECT * FROM surveys ORDER BY id").fetchall()
    assert migrate(db) == len(MIGRATIONS)
    after = db.execute("SELECT * FROM surveys ORDER BY id").fetchall()
    assert [row[: len(before[0])] for row in after] == before  # later migrations add columns
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert db.execute("PRAGMA foreign_keys").fetchone() == (1,)
    stored_b = get_survey(db, "b")
    assert stored_b is not None and stored_b.questions[0].key == "q"
    delete_survey(db, stored_b, "test")
    again = store_survey(db, parse_definition("slug: c\ntitle: C\nquestions: [{key: q, text: Q}]"))
    assert again.id > 2
