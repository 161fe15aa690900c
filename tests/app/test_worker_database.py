"""The tests' PostgreSQL database, reset between tests, is as a new copy of the template.

``tests/support/worker_database.py`` reuses one database per test process instead of
copying the template for every test; these check that a test sees nothing of the one
before: not its rows, not its ids, not the counts the app kept in memory, and that a
database a reset cannot be trusted with is replaced by a new copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from survey_app.domain.definitions import load_definition
from survey_app.storage import crosstabs
from survey_app.storage.accounts import create_researcher
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.conftest import make_app
from tests.support.examples import KEYS, MIXED, SLUG
from tests.support.researchers import PASSWORD
from tests.support.respondents import submit_client_randomized
from tests.support.stored import opened, rows, table_names
from tests.support.worker_database import WorkerDatabase


def state(url: str) -> dict[str, Any]:
    """Every row of every table, and where every sequence stands."""
    with opened(url) as db:
        found: dict[str, Any] = {name: rows(db, name) for name in table_names(db)}
        found["sequences"] = db.execute(
            "SELECT sequencename, last_value FROM pg_sequences ORDER BY 1"
        ).fetchall()
    return found


def joint_counts(url: str) -> dict[Any, int]:
    """The app's counts of the example survey's first question, by stored value."""
    with make_app(url).app_context():
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        return crosstabs.joint_counts(get_db(), survey, [KEYS[0]])


@pytest.fixture
def worker(worker_database: WorkerDatabase) -> Iterator[WorkerDatabase]:
    """The process's database, clean; left clean for the next test too."""
    worker_database.clean()
    yield worker_database
    worker_database.clean()


def test_a_reset_puts_back_every_row_and_where_every_sequence_stands(
    worker: WorkerDatabase,
) -> None:
    url = worker.clean()
    before = state(url)
    app = make_app(url)
    with app.app_context():
        store_survey(get_db(), load_definition(MIXED))
        create_researcher(get_db(), "ada", PASSWORD)
        get_db().execute("UPDATE surveys SET title = 'changed' WHERE slug = ?", [SLUG])
    submit_client_randomized(app, dict.fromkeys(KEYS, "y"))
    assert state(url) != before
    assert worker.clean() == url  # reset, not copied
    assert state(url) == before


def test_a_snapshot_loaded_into_a_later_tests_database_is_what_it_held(
    worker: WorkerDatabase,
) -> None:
    """What ``built_once`` gives a module's later tests: every row, every sequence."""
    url = worker.clean()
    app = make_app(url)
    with app.app_context():
        store_survey(get_db(), load_definition(MIXED))
        create_researcher(get_db(), "ada", PASSWORD)
    submit_client_randomized(app, dict.fromkeys(KEYS, "y"))
    built = state(url)
    snapshot = worker.snapshot()
    assert worker.clean() == url
    assert state(url) != built
    worker.load(snapshot)
    assert state(url) == built


def test_counts_kept_in_memory_before_a_reset_are_not_served_after_it(
    worker: WorkerDatabase,
) -> None:
    """The database's setting and the survey's id are the same after a reset, and
    response ids start again at 1: counts kept through response 2 would pass for the
    first two of the new responses, and only the third would be counted."""
    url = worker.clean()
    for _ in range(2):
        submit_client_randomized(make_app(url), dict.fromkeys(KEYS, "y"))
    assert sorted(joint_counts(url).values()) == [2]
    assert worker.clean() == url
    for _ in range(3):
        submit_client_randomized(make_app(url), dict.fromkeys(KEYS, "n"))
    assert sorted(joint_counts(url).values()) == [3]  # all three alike, nothing else


def test_a_changed_schema_gets_a_new_copy(worker: WorkerDatabase) -> None:
    url = worker.clean()
    with opened(url) as db:
        db.execute("CREATE TABLE left_behind (x INTEGER)")
    copy = worker.clean()
    assert copy != url
    with opened(copy) as db:
        assert "left_behind" not in table_names(db)


def test_a_connection_left_in_a_transaction_gets_a_new_copy(worker: WorkerDatabase) -> None:
    """It may hold locks that would hold the reset up, and what it does next would land
    in the next test's database."""
    url = worker.clean()
    with psycopg.connect(url) as left:
        left.execute("SELECT count(*) FROM researchers")  # a transaction, left open
        assert worker.clean() != url
