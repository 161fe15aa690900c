"""Shared fixtures: a fresh app on a real database, its test client and CLI runner, a
researcher, the mixed survey, the database as an auditor reads it, and a hand-moved clock.

``app`` runs once per storage backend (the ``backend`` parameter): on a SQLite file, and
on a database in a throwaway PostgreSQL cluster (tests/support/postgresql.py), one per
test process, reset between tests (tests/support/worker_database.py).
A test that checks SQLite's own files (its WAL, file modes, the online backup) is marked
``sqlite_only`` and runs on SQLite alone.

Plain helpers (constants, page parsers, statistics) are in tests/support/, imported by the
test modules that use them; this file holds fixtures only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import jinja2
import jinja2.bccache
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app import create_app
from survey_app.domain.definitions import load_definition
from survey_app.storage import backends
from survey_app.storage.backends import Database
from survey_app.storage.database import create_owner_only_file
from survey_app.storage.surveys import store_survey
from survey_app.web.database_session import get_db
from tests.support.compiled_rules import compile_rules_once
from tests.support.examples import EXAMPLE, MIXED
from tests.support.postgresql import (  # noqa: F401 (fixtures offered to every test)
    BACKENDS,
    Cluster,
    database_url,
    postgresql_cluster,
)
from tests.support.researchers import PASSWORD, Clock, log_in
from tests.support.stored import StoredState, copy_sqlite_file, opened
from tests.support.worker_database import State, WorkerDatabase


class CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates shared by every test's app, in memory.

    Each test builds a new app, and each app's Jinja environment compiled every template
    it rendered again: a third of the fast tests' time. Jinja checks each entry against
    its template source's checksum, so an edited template is compiled anew.
    """

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = CompiledTemplates()


def pytest_configure(config: pytest.Config) -> None:
    compile_rules_once()
    config.addinivalue_line(
        "markers",
        "both_backends: a slow or browser test run on PostgreSQL too (flows that store, "
        "several servers); other slow and browser tests run on SQLite alone",
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backends",
        default=",".join(BACKENDS),
        help="the storage backends that tests taking one run on, comma-separated "
        f"(default: {','.join(BACKENDS)})",
    )
    parser.addoption(
        "--every-backend",
        action="store_true",
        help="run slow and browser tests on PostgreSQL too, not only those marked both_backends",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the runs on a backend ``--backends`` does not name, and the PostgreSQL
    runs that ``_sqlite_alone`` keeps to SQLite."""
    chosen = {name.strip() for name in config.getoption("backends").split(",")}
    if not chosen <= set(BACKENDS):
        raise pytest.UsageError(f"--backends: choose among {', '.join(BACKENDS)}")
    every = bool(config.getoption("every_backend"))
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        backend = _backend_of(item)
        leave = backend is not None and (
            backend not in chosen or (backend == "postgresql" and _sqlite_alone(item, every))
        )
        (left if leave else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def _backend_of(item: pytest.Item) -> str | None:
    """The backend a test runs on (the ``backend`` of its app, the ``server_backend`` of
    its served app), or None for a test that takes none."""
    params = (
        item.callspec.params
        if isinstance(item, pytest.Function) and hasattr(item, "callspec")
        else {}
    )
    backend = params.get("backend", params.get("server_backend"))
    return None if backend is None else str(backend)


def _sqlite_alone(item: pytest.Item, every: bool) -> bool:
    """Whether a test's PostgreSQL run is left out: a check of SQLite's own files
    (``sqlite_only``) always; a slow or browser test unless it is marked ``both_backends``
    (a flow that stores, several servers) or ``--every-backend`` is given. Their
    PostgreSQL runs would add minutes to the suite's 10 (3.5 for the slow tests alone)
    for storage paths the fast tests already cover on PostgreSQL (docs/contributing.md)."""
    if item.get_closest_marker("sqlite_only") is not None:
        return True
    costly = any(item.get_closest_marker(name) for name in ("slow", "browser"))
    return costly and not every and item.get_closest_marker("both_backends") is None


def make_app(path: Path | str, **settings: object) -> Flask:
    """The app as every test here configures it, on the database at ``path`` (a file, or a
    PostgreSQL address), with ``settings`` on top."""
    app = create_app(
        {
            "TESTING": True,
            "DATABASE": str(path),
            "SECRET_KEY": "test-secret",
            "RATE_LIMITS": False,
            # One PBKDF2 round instead of 0.4 s of scrypt per login; tests/app/test_sessions.py
            # checks the production default on its own.
            "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1",
            **settings,
        }
    )
    app.jinja_env.bytecode_cache = COMPILED_TEMPLATES
    return app


@pytest.fixture(scope="session")
def example_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated database holding the example survey, made once by the app itself, listed
    on the front page as ``survey-app run`` lists it.

    Each test's app starts from a copy: the migrations are a dozen transactions, each
    synced to disk, a tenth of a second that every app test would pay again.
    """
    path = tmp_path_factory.mktemp("example") / "survey.db"
    with make_app(path).app_context():
        store_survey(get_db(), load_definition(EXAMPLE), listed=True)
    return path


@pytest.fixture(scope="session")
def example_postgresql(postgresql_cluster: Cluster) -> str:  # noqa: F811
    """The example database on PostgreSQL, made once by the app itself: the template each
    test's database is copied from (``CREATE DATABASE ... TEMPLATE``)."""
    url = postgresql_cluster.new_database()
    with make_app(url).app_context():
        store_survey(get_db(), load_definition(EXAMPLE), listed=True)
    return url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Which storage backend the test's app runs on."""
    return str(request.param)


@pytest.fixture(scope="session")
def worker_database(postgresql_cluster: Cluster, example_postgresql: str) -> WorkerDatabase:  # noqa: F811
    """This test process's PostgreSQL database for the apps, reset to the example database
    before each test (tests/support/worker_database.py)."""
    return WorkerDatabase(postgresql_cluster, example_postgresql)


@pytest.fixture
def app(backend: str, copy_database: Callable[[str], str], request: pytest.FixtureRequest) -> Flask:
    """A fresh app on its own database: the example survey, no response, no account.

    On SQLite a copy of the example database; on PostgreSQL this test process's database,
    put back as the example database was (``worker_database``).
    """
    if backend == "sqlite":
        return make_app(copy_database(str(request.getfixturevalue("example_database"))))
    worker: WorkerDatabase = request.getfixturevalue("worker_database")
    return make_app(worker.clean())


@pytest.fixture(scope="session")
def copy_database(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Callable[[str], str]:
    """Copy a database whole on its own backend; the copy's ``DATABASE`` setting.

    A SQLite file is copied with SQLite's backup API (the source's connection may still
    hold pages in its WAL) into a file created owner-only, as the app creates its own; a
    PostgreSQL database with ``CREATE DATABASE ... TEMPLATE``.
    """

    def copy(setting: str) -> str:
        if backends.is_postgresql(setting):
            cluster: Cluster = request.getfixturevalue("postgresql_cluster")
            return cluster.copy_database(setting)
        path = tmp_path_factory.mktemp("db") / "survey.db"
        create_owner_only_file(path)
        copy_sqlite_file(setting, path)
        return str(path)

    return copy


@pytest.fixture(scope="module")
def built_states() -> dict[tuple[str, str], str | State]:
    """What ``built_once`` kept in this module, by builder and backend."""
    return {}


@pytest.fixture
def built_once(
    app: Flask,
    backend: str,
    built_states: dict[tuple[str, str], str | State],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Callable[[Callable[[Flask], object]], Flask]:
    """``build(app)`` once per module and backend: what a module's tests all read (thousands
    of responses, each stored in a transaction of its own, took 1 s a test on SQLite and
    3-4 s on PostgreSQL). The first test's app builds it; every later test's database
    gets what that left, written over it in place (the setting unchanged, so a fixture
    that opened it sees it too): SQLite's backup API, or PostgreSQL's tables emptied and
    loaded (``worker_database``). Whatever the database held is replaced, so a fixture
    that stores something else (an account) must come after the build."""

    def once(build: Callable[[Flask], object]) -> Flask:
        key = (build.__qualname__, backend)
        setting = app.config["DATABASE"]
        worker: WorkerDatabase | None = (
            request.getfixturevalue("worker_database") if backend == "postgresql" else None
        )
        kept = built_states.get(key)
        if kept is None:
            build(app)
            if worker is not None:
                built_states[key] = worker.snapshot()
            else:
                path = str(tmp_path_factory.mktemp("built") / "survey.db")
                copy_sqlite_file(setting, path)
                built_states[key] = path
        elif isinstance(kept, State):
            assert worker is not None
            worker.load(kept)
        else:
            copy_sqlite_file(kept, setting)
        return app

    return once


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


@pytest.fixture
def database(app: Flask) -> Iterator[Database]:
    """The app's database opened on its own connection, as a thief or an auditor would."""
    with opened(app.config["DATABASE"]) as db:
        yield db


@pytest.fixture
def new_database(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Database]]:
    """Open new, empty, migrated databases on the test's backend (for storage tests that
    need one or two without an app); all closed when the test ends."""
    made: list[tuple[str, Database]] = []

    def new() -> Database:
        if backend == "postgresql":
            cluster: Cluster = request.getfixturevalue("postgresql_cluster")
            setting = cluster.new_database()
        else:
            setting = str(tmp_path / f"survey-{len(made)}.db")
        db = backends.connect(setting)
        made.append((setting, db))
        backends.migrate(db)
        return db

    yield new
    for setting, db in made:
        db.conn.close()
        if backends.is_postgresql(setting):
            request.getfixturevalue("postgresql_cluster").release_database(setting)


@pytest.fixture
def researcher(app: Flask) -> str:
    from survey_app.storage.accounts import create_researcher

    with app.app_context():
        create_researcher(get_db(), "ada", PASSWORD)
    return "ada"


@pytest.fixture
def logged_in(client: FlaskClient, researcher: str) -> FlaskClient:
    assert log_in(client, researcher).status_code == 302
    return client


@pytest.fixture
def mixed_app(app: Flask) -> Flask:
    """The app with the example survey that mixes every question type, consent included."""
    with app.app_context():
        store_survey(get_db(), load_definition(MIXED))
    return app


@pytest.fixture
def stored(app: Flask) -> StoredState:
    return StoredState(app.config["DATABASE"])


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    from survey_app.storage import accounts

    clock = Clock()
    monkeypatch.setattr(accounts, "current_time", lambda: clock.now)
    return clock
