"""The per-thread connection: reused across requests, never shared, never left mid-transaction."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app import create_app
from survey_app.db import get_db

from .conftest import KEYS, SLUG, submit_client_randomized
from .test_research import RESEARCH_ROUTES


def _connection_in_request(app: Flask) -> sqlite3.Connection:
    with app.test_request_context("/healthz"):
        return get_db().conn


def test_a_thread_reuses_its_connection_across_requests(app: Flask) -> None:
    assert _connection_in_request(app) is _connection_in_request(app)


def test_threads_never_share_a_connection(app: Flask) -> None:
    seen: list[sqlite3.Connection] = []
    worker = threading.Thread(target=lambda: seen.append(_connection_in_request(app)))
    worker.start()
    worker.join()
    assert seen and seen[0] is not _connection_in_request(app)


def test_another_database_replaces_and_closes_the_connection(app: Flask, tmp_path: Path) -> None:
    first = _connection_in_request(app)
    other = create_app({"DATABASE": str(tmp_path / "other.db"), "SECRET_KEY": "test-secret"})
    assert _connection_in_request(other) is not first
    with pytest.raises(sqlite3.ProgrammingError):  # closed, not left holding a file open
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
    submit_client_randomized(app, dict.fromkeys(KEYS, "yes"))
    for path in ["/", f"/s/{SLUG}", "/healthz", *RESEARCH_ROUTES]:
        logged_in.get(path)
    elsewhere = sqlite3.connect(app.config["DATABASE"])
    with elsewhere:
        elsewhere.execute("UPDATE surveys SET status = 'closed' WHERE slug = ?", [SLUG])
    elsewhere.close()
    assert logged_in.get(f"/s/{SLUG}").status_code == 403
