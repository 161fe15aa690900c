"""Shared fixtures: a fresh app on a real SQLite file, its test client and CLI runner."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlite_utils
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from scipy.stats import chisquare

from survey_app import create_app
from survey_app.domain.definitions import load_definition
from survey_app.storage.database import get_db
from survey_app.storage.surveys import store_survey

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "campus-health.yaml"
SLUG = "campus-health"
KEYS = ("cheated", "drugs", "skipped_meals")


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    app = create_app(
        {
            "TESTING": True,
            "DATABASE": str(tmp_path / "survey.db"),
            "SECRET_KEY": "test-secret",
            "RATE_LIMITS": False,
            # One PBKDF2 round instead of 0.4 s of scrypt per login; tests/test_sessions.py
            # checks the production default on its own.
            "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1",
        }
    )
    with app.app_context():
        store_survey(get_db(), load_definition(EXAMPLE))
    yield app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


@pytest.fixture
def database(app: Flask) -> sqlite_utils.Database:
    """The app's database file opened on its own, as a thief or an auditor would."""
    return sqlite_utils.Database(app.config["DATABASE"])


def tally_cells(database: sqlite_utils.Database) -> dict[str, dict[str, int]]:
    """Every question's running tallies by key ({"n": …, "yes": …} for yes/no)."""
    cells: dict[str, dict[str, int]] = {}
    for key, cell, value in database.execute(
        "SELECT q.key, t.cell, t.value FROM questions q LEFT JOIN tallies t ON t.question_id = q.id"
    ).fetchall():
        cells.setdefault(key, {})
        if cell is not None:
            cells[key][cell] = value
    return cells


def hidden_fields(page: str) -> dict[str, str]:
    """The form's hidden inputs (CSRF token and submission id) from a rendered page."""
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))


def shown_answers(page: str) -> dict[str, str]:
    """The thank-you page's stored answers as the respondent sees them, by question key.

    Each cell holds every text it could show (so the page's size does not depend on the
    answers); the shown ones carry ``class="shown"``, the others ``hidden=hidden``.
    """
    cells = re.findall(r'<td data-key="(\w+)">(.*?)</td>', page, flags=re.S)
    return {
        key: " ".join(text.strip() for text in re.findall(r'class="shown">([^<]+)<', cell))
        for key, cell in cells
    }


def fresh_form(client: FlaskClient, slug: str = SLUG) -> dict[str, str]:
    response = client.get(f"/s/{slug}")
    assert response.status_code == 200
    return hidden_fields(response.get_data(as_text=True))


def answers(value: str = "y") -> dict[str, str]:
    """Every question of the example survey answered alike, with its wire value ("y"/"n")."""
    return dict.fromkeys(KEYS, value)


PASSWORD = "correct horse battery"


@pytest.fixture
def researcher(app: Flask) -> str:
    from survey_app.storage.accounts import create_researcher

    with app.app_context():
        create_researcher(get_db(), "ada", PASSWORD)
    return "ada"


def log_in(client: FlaskClient, username: str, password: str = PASSWORD, next_url: str = ""):
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert token, "the login form has a CSRF token"
    query = f"?next={next_url}" if next_url else ""
    return client.post(
        f"/login{query}",
        data={"csrf_token": token.group(1), "username": username, "password": password},
    )


@pytest.fixture
def logged_in(client: FlaskClient, researcher: str) -> FlaskClient:
    assert log_in(client, researcher).status_code == 302
    return client


def submit_client_randomized(app: Flask, reported: dict[str, str]) -> None:
    """One respondent whose browser already randomized: the values are stored as sent."""
    respondent = app.test_client()
    response = respondent.post(
        f"/s/{SLUG}", data={**fresh_form(respondent), **reported, "randomized": "client"}
    )
    assert response.status_code == 200


MIXED = ROOT / "examples" / "mixed-survey.yaml"
MIXED_SLUG = "student-life"


@pytest.fixture
def mixed_app(app: Flask) -> Flask:
    """The app with the example survey that mixes every question type, consent included."""
    with app.app_context():
        store_survey(get_db(), load_definition(MIXED))
    return app


def mixed_form(client: FlaskClient) -> dict[str, str]:
    """The mixed survey's hidden fields, after agreeing to the consent text."""
    return fresh_form(client, f"{MIXED_SLUG}?agree=yes")


def assert_distribution(counts: Counter[Any], expected: Mapping[Any, float]) -> None:
    """Chi-square goodness of fit; cells expected below 5 draws are pooled with the rest.

    A p-value below 1e-6 fails: a false alarm about once in a million runs.
    """
    draws = sum(counts.values())
    assert set(counts) <= set(expected) or sum(expected.values()) < 1, set(counts) - set(expected)
    observed, wanted = [], []
    rest_observed, rest_wanted = draws, float(draws)
    for cell, probability in expected.items():
        if probability * draws >= 5:
            observed.append(counts.get(cell, 0))
            wanted.append(probability * draws)
            rest_observed -= counts.get(cell, 0)
            rest_wanted -= probability * draws
    if rest_wanted >= 1e-9 * draws:
        observed.append(rest_observed)
        wanted.append(rest_wanted)
    else:
        assert rest_observed == 0
    p_value = chisquare(observed, np.array(wanted) * sum(observed) / sum(wanted)).pvalue
    assert p_value > 1e-6, (p_value, observed, wanted)


# Every research route, for tests that visit them all (the last one is a missing survey).
RESEARCH_ROUTES = [
    "/research/",
    f"/research/surveys/{SLUG}",
    f"/research/surveys/{SLUG}/plot.svg",
    f"/research/surveys/{SLUG}/export.csv",
    f"/research/surveys/{SLUG}/responses.csv",
    f"/research/surveys/{SLUG}/estimates.json",
    f"/research/surveys/{SLUG}/codebook.json",
    "/research/surveys/no-such-survey",
]
MAX_BODY = 64 * 1024  # the default SURVEY_APP_MAX_CONTENT_LENGTH
HUGE = MAX_BODY + 5000  # comfortably over the limit whatever the encoding


def hostile(max_examples: int) -> Any:
    """Hypothesis settings for the property-based tests (tests/test_hostile_*.py).

    Function-scoped fixtures are not reset between examples: each test resets what it
    needs by hand (``stored.reset_responses()``), so that health check is off.
    """
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


class StoredState:
    """The app's database file opened on its own, autocommit, as an auditor would: what
    many generated requests left behind, for the example survey."""

    def __init__(self, path: str) -> None:
        self.path = path

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    def counts(self) -> tuple[int, dict[str, tuple[int, int]]]:
        """(response rows, {question key: (n, reported_yes)}) for the example survey."""
        with self.connect() as conn:
            rows = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
            counters = dict.fromkeys(KEYS, (0, 0))
            for key, n, yes in conn.execute(
                "SELECT q.key, sum(t.value * (t.cell = 'n')), sum(t.value * (t.cell = 'yes')) "
                "FROM questions q JOIN surveys s ON q.survey_id = s.id "
                "JOIN tallies t ON t.question_id = q.id WHERE s.slug = ? GROUP BY q.key",
                [SLUG],
            ):
                counters[key] = (n, yes)
        return rows, counters

    def recounted(self) -> dict[str, tuple[int, int]]:
        """The counters rebuilt from the stored rows: what they must always equal."""
        counters = dict.fromkeys(KEYS, (0, 0))
        with self.connect() as conn:
            for (stored_answers,) in conn.execute("SELECT answers FROM responses"):
                for key, value in json.loads(stored_answers).items():
                    n, yes = counters[key]
                    counters[key] = (n + 1, yes + value)
        return counters

    def reset_responses(self) -> None:
        """Back to no responses, in one transaction (each commit is an fsync: keep them few)."""
        with self.connect() as conn:
            if conn.execute("SELECT count(*) FROM responses").fetchone()[0]:
                conn.executescript(
                    "BEGIN; DELETE FROM responses; DELETE FROM tallies; "
                    "UPDATE surveys SET responses = 0; COMMIT;"
                )

    def table_sizes(self) -> tuple[int, int]:
        """(surveys, questions)."""
        with self.connect() as conn:
            surveys = conn.execute("SELECT count(*) FROM surveys").fetchone()[0]
            questions = conn.execute("SELECT count(*) FROM questions").fetchone()[0]
        return surveys, questions


@pytest.fixture
def stored(app: Flask) -> StoredState:
    return StoredState(app.config["DATABASE"])


class Clock:
    """The accounts module's clock (sessions, login throttling), moved by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    from survey_app.storage import accounts

    clock = Clock()
    monkeypatch.setattr(accounts, "current_time", lambda: clock.now)
    return clock


# A survey answerable only through single-use invitation links.
INVITE_ONLY = """\
slug: staff-pulse
title: Staff pulse
access: invitation
questions:
  - key: burnout
    text: Have you felt burnt out this month?
"""
