"""Issue 9's "the rest": what a cache, another local user or a spreadsheet could get.

Each test here failed on the code before the fix: research downloads without
``Cache-Control: no-store``, database files and written links readable by everyone
(umask 022), invitations stored although their links file could not be written, and
``a;=cmd`` opening as a formula cell in a spreadsheet that splits CSV at ";".
"""

from __future__ import annotations

import csv
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlite_utils
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app import create_app
from survey_app.domain.exports import FORMULA_PREFIXES, neutralize
from survey_app.web.database_session import get_db
from tests.support.examples import INVITE_ONLY, SLUG
from tests.support.respondents import fresh_form, submit_client_randomized

RESEARCH_DOWNLOADS = [
    "/research/",
    f"/research/surveys/{SLUG}",
    f"/research/surveys/{SLUG}/plot.svg",
    f"/research/surveys/{SLUG}/plot.svg?question=cheated",
    f"/research/surveys/{SLUG}/export.csv",
    f"/research/surveys/{SLUG}/responses.csv",
    f"/research/surveys/{SLUG}/estimates.json",
    f"/research/surveys/{SLUG}/codebook.json",
    "/research/surveys/no-such-survey",
]


@pytest.fixture
def everyone_may_read() -> Iterator[None]:
    """The usual umask (022): files are world-readable unless created otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --------------------------------------------------------------------------- caching


@pytest.mark.slow
@pytest.mark.parametrize("path", RESEARCH_DOWNLOADS)
def test_every_research_response_forbids_caching(
    app: Flask, logged_in: FlaskClient, path: str
) -> None:
    submit_client_randomized(app, {"cheated": "y", "drugs": "n", "skipped_meals": "y"})
    response = logged_in.get(path)
    response.get_data()
    assert response.status_code in (200, 404)
    assert response.headers["Cache-Control"] == "no-store", response.mimetype


def test_research_redirects_to_login_are_not_cached(client: FlaskClient) -> None:
    response = client.get(f"/research/surveys/{SLUG}/export.csv")
    assert response.status_code == 302
    assert response.headers["Cache-Control"] == "no-store"


def test_static_files_stay_cacheable(client: FlaskClient) -> None:
    for address in ("/static/favicon.svg", "/css/style.css", "/js/randomize.js"):
        response = client.get(address)
        assert response.status_code == 200
        assert "no-store" not in response.headers.get("Cache-Control", "")


# --------------------------------------------------------------------------- file modes


def test_a_new_database_and_its_wal_and_shm_are_owner_only(
    tmp_path: Path, everyone_may_read: None
) -> None:
    database = tmp_path / "survey.db"
    app = create_app({"TESTING": True, "DATABASE": str(database), "SECRET_KEY": "k"})
    with app.app_context():
        get_db().execute("CREATE TABLE IF NOT EXISTS probe (x)")
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
        assert all(path.exists() for path in files), files  # the connection is still open
        assert {path.name: oct(_mode(path)) for path in files} == {
            path.name: "0o600" for path in files
        }


def test_an_existing_database_keeps_the_operators_mode(
    tmp_path: Path, everyone_may_read: None
) -> None:
    database = tmp_path / "survey.db"
    sqlite_utils.Database(database).execute("CREATE TABLE t (x)")
    database.chmod(0o640)  # e.g. readable by a backup group, on purpose
    app = create_app({"TESTING": True, "DATABASE": str(database), "SECRET_KEY": "k"})
    with app.app_context():
        get_db()
    assert _mode(database) == 0o640


@pytest.fixture
def invite_only(app: Flask, runner: FlaskCliRunner, tmp_path: Path) -> str:
    definition = tmp_path / "staff.yaml"
    definition.write_text(INVITE_ONLY)
    assert runner.invoke(args=["import-survey", str(definition)]).exit_code == 0
    return "staff-pulse"


def _invitations(app: Flask) -> int:
    with app.app_context():
        return int(get_db().execute("SELECT count(*) FROM invitations").fetchone()[0])


def test_links_file_is_owner_only(
    app: Flask, runner: FlaskCliRunner, invite_only: str, tmp_path: Path, everyone_may_read: None
) -> None:
    links = tmp_path / "links.txt"
    result = runner.invoke(args=["invite", invite_only, "--count", "3", "-o", str(links)])
    assert result.exit_code == 0, result.output
    assert len(links.read_text().splitlines()) == 3
    assert _mode(links) == 0o600


@pytest.mark.parametrize("problem", ["exists", "no such directory", "a directory"])
def test_invite_stores_nothing_when_the_links_file_cannot_be_written(
    app: Flask, runner: FlaskCliRunner, invite_only: str, tmp_path: Path, problem: str
) -> None:
    target = {
        "exists": tmp_path / "links.txt",
        "no such directory": tmp_path / "missing" / "links.txt",
        "a directory": tmp_path,
    }[problem]
    if problem == "exists":
        target.write_text("earlier links, never to be lost\n")
    result = runner.invoke(args=["invite", invite_only, "--count", "5", "-o", str(target)])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Error" in result.output and str(target) in result.output, result.output
    assert _invitations(app) == 0
    if problem == "exists":
        assert target.read_text() == "earlier links, never to be lost\n"


def test_backup_and_exports_are_owner_only(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, everyone_may_read: None
) -> None:
    backup = tmp_path / "backup.db"
    assert runner.invoke(args=["backup", str(backup)]).exit_code == 0
    assert _mode(backup) == 0o600
    export = tmp_path / "responses.csv"
    result = runner.invoke(args=["export", SLUG, "--responses", "-o", str(export)])
    assert result.exit_code == 0, result.output
    assert _mode(export) == 0o600
    assert _mode(tmp_path / "responses.codebook.json") == 0o600


def test_backup_into_a_missing_directory_is_a_clear_error(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(args=["backup", str(tmp_path / "missing" / "b.db")])
    assert result.exit_code == 1
    assert "cannot write" in result.output


# --------------------------------------------------------------------------- CSV and ";"


@pytest.mark.parametrize(
    ("text", "neutral"),
    [
        ("=1+1", "'=1+1"),
        (
            'Cheated;=HYPERLINK("http://evil.example")',
            'Cheated;\'=HYPERLINK("http://evil.example")',
        ),
        ("a;+1;-2;@x", "a;'+1;'-2;'@x"),
        ("a;\t=1", "a;'\t=1"),
        ("=a;=b", "'=a;'=b"),
        ("Tea; coffee; water", "Tea; coffee; water"),
        ("a;;b", "a;;b"),
        ("plain", "plain"),
        ("=\r=", "'=\r'="),  # a line break ends the row in a ";" reading (Hypothesis)
        ("a\r\n+1\n@x", "a\r\n'+1\n'@x"),
    ],
)
def test_neutralize_guards_every_piece_a_semicolon_starts(text: str, neutral: str) -> None:
    assert neutralize(text) == neutral


def _formula_cells(text: str, delimiter: str) -> list[str]:
    """Cells that start like a formula when the file is read with this separator."""
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    return [
        cell
        for row in rows
        for cell in row
        if cell.startswith(FORMULA_PREFIXES) and not cell.lstrip("+-").replace(".", "").isdigit()
    ]


def test_exports_hold_no_formula_in_a_semicolon_locale(
    app: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    definition = tmp_path / "semicolons.yaml"
    definition.write_text(
        "slug: semicolons\n"
        "title: T\n"
        "questions:\n"
        "  - {key: q1, text: 'Ok;=cmd|'' /C calc''!A0', type: yes_no}\n"
        "  - {key: q2, text: 'Pick one', type: choice, options: ['a;@SUM(A1)', 'b;-2+3']}\n"
    )
    assert runner.invoke(args=["import-survey", str(definition)]).exit_code == 0
    for option in ("0", "1"):
        respondent = app.test_client()
        page = respondent.get("/s/semicolons").get_data(as_text=True)
        assert "Ok;=cmd" in page  # the page shows the text as written
        fields = {**fresh_form(respondent, "semicolons"), "q1": "y", "q2": option}
        response = respondent.post("/s/semicolons", data={**fields, "randomized": "client"})
        assert response.status_code == 200
    exports = [
        logged_in.get(f"/research/surveys/semicolons/{name}").get_data(as_text=True)
        for name in ("export.csv", "responses.csv")
    ]
    for text in exports:
        assert _formula_cells(text, ",") == []
        assert _formula_cells(text, ";") == [], text
    assert "Ok;'=cmd" in exports[0]
    assert "a;'@SUM(A1)" in exports[1] and "b;'-2+3" in exports[1]


def test_a_post_over_https_behind_the_proxy_needs_no_referer(tmp_path: Path) -> None:
    """Every page asks browsers to send no Referer (a survey's address may carry a panel's
    participant id), so a form's POST comes without one. Over HTTPS, as the app sees it
    behind a trusted proxy, Flask-WTF's strict check refused every such POST: answers and
    logins alike. The CSRF token and the Lax session cookie are the protection."""
    from survey_app.domain.definitions import load_definition
    from survey_app.storage.surveys import store_survey
    from survey_app.web.database_session import get_db
    from tests.conftest import make_app
    from tests.support.examples import EXAMPLE, SLUG
    from tests.support.respondents import answers, hidden_fields

    app = make_app(tmp_path / "survey.db", TRUSTED_PROXIES=1)
    with app.app_context():
        store_survey(get_db(), load_definition(EXAMPLE))
    client = app.test_client()
    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    page = client.get(f"/s/{SLUG}", headers=https, base_url="https://localhost")
    form = {**hidden_fields(page.get_data(as_text=True)), **answers()}
    response = client.post(f"/s/{SLUG}", data=form, headers=https, base_url="https://localhost")
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
