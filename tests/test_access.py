"""Who may answer and who may see: lifecycle, invitations, owners, rate limits, backups."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app import create_app
from survey_app.storage.accounts import create_researcher
from survey_app.storage.database import get_db

from .conftest import INVITE_ONLY, PASSWORD, SLUG, answers, fresh_form, hidden_fields, log_in


def submit(client: FlaskClient, slug: str, fields: dict[str, str], **extra: str):
    return client.post(f"/s/{slug}", data={**fields, **extra})


@pytest.fixture
def invite_only(runner: FlaskCliRunner, tmp_path: Path) -> list[str]:
    """The invitation survey and five links to it, made through the CLI."""
    definition = tmp_path / "staff.yaml"
    definition.write_text(INVITE_ONLY)
    assert runner.invoke(args=["import-survey", str(definition)]).exit_code == 0
    links_file = tmp_path / "links.txt"
    result = runner.invoke(args=["invite", "staff-pulse", "--count", "5", "-o", str(links_file)])
    assert result.exit_code == 0, result.output
    links = links_file.read_text().splitlines()
    assert len(links) == 5 and len(set(links)) == 5
    return [link.removeprefix("http://127.0.0.1:5000") for link in links]


def test_invitation_link_answers_once(
    app: Flask, invite_only: list[str], database: sqlite_utils.Database
) -> None:
    browser = app.test_client()
    page = browser.get(invite_only[0])
    assert page.status_code == 200
    fields = hidden_fields(page.get_data(as_text=True))
    assert "invitation" in fields
    assert submit(browser, "staff-pulse", fields, burnout="y").status_code == 200
    # The same link from another browser: refused, nothing stored.
    other = app.test_client()
    assert other.get(invite_only[0]).status_code == 403
    replay = submit(
        other,
        "staff-pulse",
        {**fresh_form_for(other, invite_only[1]), "invitation": fields["invitation"]},
        burnout="n",
    )
    assert replay.status_code == 403
    assert "already been used" in replay.get_data(as_text=True)
    assert database["responses"].count == 1
    # A different link still works, from the same browser: the token is the rule here.
    assert (
        submit(
            browser, "staff-pulse", fresh_form_for(browser, invite_only[1]), burnout="n"
        ).status_code
        == 200
    )
    assert database["responses"].count == 2


def fresh_form_for(client: FlaskClient, link: str) -> dict[str, str]:
    return hidden_fields(client.get(link).get_data(as_text=True))


def test_invitation_survey_refuses_without_a_valid_link(
    app: Flask, invite_only: list[str], database: sqlite_utils.Database
) -> None:
    browser = app.test_client()
    assert browser.get("/s/staff-pulse").status_code == 403
    assert browser.get("/s/staff-pulse?invitation=" + "A" * 22).status_code == 403
    fields = fresh_form_for(browser, invite_only[0])
    del fields["invitation"]
    assert submit(browser, "staff-pulse", fields, burnout="y").status_code == 403
    assert database["responses"].count == 0
    assert "staff-pulse" not in browser.get("/").get_data(as_text=True)  # not listed


def test_invitations_are_stored_as_hashes_without_a_link_to_responses(
    app: Flask, invite_only: list[str], database: sqlite_utils.Database
) -> None:
    browser = app.test_client()
    fields = fresh_form_for(browser, invite_only[0])
    submit(browser, "staff-pulse", fields, burnout="y")
    tokens = [link.split("invitation=")[1] for link in invite_only]
    dump = "\n".join(database.conn.iterdump())
    assert not any(token in dump for token in tokens)
    assert {c.name for c in database["invitations"].columns} == {"token_hash", "survey_id", "used"}
    assert [row["used"] for row in database["invitations"].rows].count(1) == 1
    assert "invitation" not in {c.name for c in database["responses"].columns}


def test_invite_refuses_an_open_survey(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["invite", SLUG, "--count", "3"])
    assert result.exit_code == 1
    assert "access: invitation" in result.output


def test_lifecycle_draft_open_closed(
    app: Flask, runner: FlaskCliRunner, database: sqlite_utils.Database, tmp_path: Path
) -> None:
    definition = tmp_path / "later.yaml"
    definition.write_text(
        INVITE_ONLY.replace("staff-pulse", "later").replace("access: invitation\n", "")
    )
    assert runner.invoke(args=["import-survey", "--draft", str(definition)]).exit_code == 0
    browser = app.test_client()
    assert browser.get("/s/later").status_code == 404  # a draft: as if no survey were there
    assert "later" not in browser.get("/").get_data(as_text=True)
    assert runner.invoke(args=["open", "later"]).exit_code == 0
    fields = fresh_form(browser, "later")
    assert runner.invoke(args=["close", "later"]).exit_code == 0
    closed = submit(browser, "later", fields, burnout="y")
    assert closed.status_code == 403
    assert "closed" in closed.get_data(as_text=True)
    assert database["responses"].count == 0


@pytest.fixture
def two_researchers(app: Flask, runner: FlaskCliRunner, tmp_path: Path) -> None:
    with app.app_context():
        create_researcher(get_db(), "owner", PASSWORD)
        create_researcher(get_db(), "other", PASSWORD)
    definition = tmp_path / "private.yaml"
    definition.write_text(INVITE_ONLY.replace("staff-pulse", "private"))
    result = runner.invoke(args=["import-survey", "--owner", "owner", str(definition)])
    assert result.exit_code == 0, result.output


PRIVATE_ROUTES = [
    "/research/surveys/private",
    "/research/surveys/private/plot.svg",
    "/research/surveys/private/export.csv",
    "/research/surveys/private/responses.csv",
    "/research/surveys/private/estimates.json",
    "/research/surveys/private/codebook.json",
]


@pytest.mark.parametrize("path", PRIVATE_ROUTES)
def test_researchers_see_only_their_own_surveys(
    app: Flask, two_researchers: None, runner: FlaskCliRunner, path: str
) -> None:
    owner, other = app.test_client(), app.test_client()
    log_in(owner, "owner")
    log_in(other, "other")
    assert owner.get(path).status_code == 200
    assert other.get(path).status_code == 404
    assert "Staff pulse" not in other.get("/research/").get_data(as_text=True)
    assert runner.invoke(args=["share", "private", "other"]).exit_code == 0
    assert other.get(path).status_code == 200


def test_import_with_an_unknown_owner_fails(runner: FlaskCliRunner, tmp_path: Path) -> None:
    definition = tmp_path / "x.yaml"
    definition.write_text(INVITE_ONLY)
    result = runner.invoke(args=["import-survey", "--owner", "ghost", str(definition)])
    assert result.exit_code == 1 and "no researcher named 'ghost'" in result.output


def test_submissions_are_rate_limited(tmp_path: Path) -> None:
    from survey_app.domain.definitions import load_definition
    from survey_app.storage.surveys import store_survey

    from .conftest import EXAMPLE

    app = create_app(
        {
            "DATABASE": str(tmp_path / "s.db"),
            "SECRET_KEY": "k",
            "RATE_LIMITS": True,
            "SUBMIT_RATE_LIMIT": "2 per minute",
        }
    )
    with app.app_context():
        store_survey(get_db(), load_definition(EXAMPLE))
    statuses = []
    for _ in range(3):
        browser = app.test_client()
        statuses.append(submit(browser, SLUG, fresh_form(browser), **answers()).status_code)
    assert statuses == [200, 200, 429]
    assert sqlite_utils.Database(tmp_path / "s.db")["responses"].count == 2


def test_backup_copies_a_consistent_database(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    browser = app.test_client()
    submit(browser, SLUG, fresh_form(browser), **answers())
    target = tmp_path / "backup.db"
    result = runner.invoke(args=["backup", str(target)])
    assert result.exit_code == 0, result.output
    assert "integrity check ok" in result.output
    copy = sqlite3.connect(target)
    assert copy.execute("SELECT count(*) FROM responses").fetchone()[0] == 1
    assert runner.invoke(args=["backup", str(target)]).exit_code == 1  # never overwrites


def test_a_failed_migration_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    from survey_app.storage import database as db_module

    def broken(db: sqlite_utils.Database) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration failed half-way")

    monkeypatch.setattr(db_module, "MIGRATIONS", (*db_module.MIGRATIONS, broken))
    database = db_module.connect(tmp_path / "m.db")
    with pytest.raises(RuntimeError):
        db_module.migrate(database)
    assert db_module.schema_version(database) == len(db_module.MIGRATIONS) - 1
    assert "half_done" not in database.table_names()
