"""Managing a survey from the browser and the command line: every survey has an owner,
and its owner deletes a draft or a survey with all it holds (the address typed out,
recorded), stops sharing, lists it on the front page; anyone who sees a survey copies it
into a draft of their own.

Deletion really removes the data: a plain answer stored as given is found in the bytes
of the database file and its WAL before, and in neither after, with the app's own
connection still open. Every action refuses a viewer (403; copying excepted), a stranger
(404, as for no survey) and a POST without its CSRF token (400), and then changes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.storage.accounts import create_researcher
from survey_app.storage.backends import Database
from survey_app.storage.events import COMMAND_LINE, recent_events
from survey_app.storage.studies import copy_slugs
from survey_app.storage.surveys import Survey, get_survey, share_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.examples import INVITE_ONLY, MIXED, MIXED_SLUG, SLUG
from tests.support.paths import ROOT
from tests.support.researchers import PASSWORD, log_in
from tests.support.respondents import fresh_form
from tests.support.stored import column_names, database_bytes, table_names

POLL = "habits"
DRAFT = "sketch"
# A plain number is stored as given: the one answer whose bytes a test can look for. Its
# range is small enough for the joint counts to be kept (``joint_tallies``): they hold it too.
PLAIN_ANSWER = "91827"
POLL_FILE = f"""\
slug: {POLL}
title: Habits
questions:
  - {{key: cheated, text: "Have you cheated on an exam?", type: yes_no}}
  - {{key: code, text: "Your participant code", type: number, min: 0, max: 99999,
      sensitive: false}}
"""
MULTILINGUAL = ROOT / "examples" / "multilingual-survey.yaml"


@pytest.fixture
def managed(app: Flask, researcher: str) -> Flask:
    """ada (the first account: an administrator, owning the example) owns the poll and a
    draft; bob views the poll; carol is a stranger to both."""
    with app.app_context():
        db = get_db()
        ada = researcher_id(db, researcher)
        poll = store_survey(db, parse_definition(POLL_FILE), ada)
        store_survey(db, parse_definition(INVITE_ONLY.replace("staff-pulse", DRAFT)), ada, "draft")
        share_survey(db, poll, create_researcher(db, "bob", PASSWORD).id)
        create_researcher(db, "carol", PASSWORD)
    return app


def researcher_id(db: Database, username: str) -> int:
    return int(
        db.execute("SELECT id FROM researchers WHERE username = ?", [username]).fetchone()[0]
    )


def as_user(app: Flask, username: str) -> FlaskClient:
    client = app.test_client()
    assert log_in(client, username).status_code == 302
    return client


def csrf_token(client: FlaskClient) -> str:
    """A valid CSRF token of this client's session (the logout page's form has one)."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/logout").text)
    assert found
    return found.group(1)


def page_token(page: str) -> dict[str, str]:
    """The CSRF field of a confirmation page's form (``form.hidden_tag()``)."""
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert found, "the page has a form with a CSRF token"
    return {"csrf_token": found.group(1)}


def post(client: FlaskClient, path: str, **fields: str):
    return client.post(path, data={"csrf_token": csrf_token(client), **fields})


def answer_poll(app: Flask, how_many: int = 1) -> None:
    """Respondents without JavaScript: the server randomizes "cheated"; the code is plain."""
    for _ in range(how_many):
        respondent = app.test_client()
        form = fresh_form(respondent, POLL)
        sent = respondent.post(f"/s/{POLL}", data={**form, "cheated": "y", "code": PLAIN_ANSWER})
        assert sent.status_code == 200


def stored_bytes(app: Flask) -> bytes:
    """The database's files as a thief copying them now would get them."""
    return database_bytes(app.config["DATABASE"])


def survey_rows(database: Database, survey_id: int) -> dict[str, int]:
    """For every table with a ``survey_id`` (and the tallies, by question), how many rows
    belong to the survey: found in the schema, so a table added later is checked too."""
    counts = {}
    for table in table_names(database):
        if "survey_id" in column_names(database, table):
            sql = f"SELECT count(*) FROM {table} WHERE survey_id = ?"  # noqa: S608
            counts[table] = database.execute(sql, [survey_id]).fetchone()[0]
    counts["tallies"] = database.execute(
        "SELECT count(*) FROM tallies t JOIN questions q ON q.id = t.question_id "
        "WHERE q.survey_id = ?",
        [survey_id],
    ).fetchone()[0]
    counts["surveys"] = database.execute(
        "SELECT count(*) FROM surveys WHERE id = ?", [survey_id]
    ).fetchone()[0]
    return counts


def stored(app: Flask, slug: str) -> Survey:
    with app.app_context():
        survey = get_survey(get_db(), slug)
    assert survey is not None
    return survey


# ---------------------------------------------------------------- every survey has an owner


def test_an_import_without_owner_goes_to_the_first_administrator(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    """Before any account: no owner, until the first account adopts it. After: the first
    administrator owns what is imported without --owner."""
    first = tmp_path / "first.yaml"
    first.write_text(INVITE_ONLY)
    result = runner.invoke(args=["import-survey", str(first)])
    assert result.exit_code == 0 and result.output == "staff-pulse\n"
    assert stored(app, "staff-pulse").owner_id is None
    with app.app_context():
        ada = create_researcher(get_db(), "ada", PASSWORD)
        bob = create_researcher(get_db(), "bob", PASSWORD, admin=True)
    assert stored(app, "staff-pulse").owner_id == ada.id
    assert stored(app, SLUG).owner_id == ada.id  # the example, stored before any account
    second = tmp_path / "second.yaml"
    second.write_text(INVITE_ONLY.replace("staff-pulse", "later"))
    assert runner.invoke(args=["import-survey", str(second)]).exit_code == 0
    assert stored(app, "later").owner_id == ada.id != bob.id


def test_a_survey_nobody_owns_is_visible_to_administrators_only(
    managed: Flask, researcher: str
) -> None:
    """Stored with no owner after accounts exist (a database from before owners): ada, an
    administrator, sees it and cannot run it; bob, a researcher, does not even see it."""
    with managed.app_context():
        store_survey(get_db(), parse_definition(INVITE_ONLY.replace("staff-pulse", "orphan")))
    ada, bob = as_user(managed, researcher), as_user(managed, "bob")
    assert ada.get("/research/surveys/orphan").status_code == 200
    assert "orphan" in ada.get("/research/").text
    assert ada.get("/research/surveys/orphan/study").status_code == 403
    assert bob.get("/research/surveys/orphan").status_code == 404
    assert "orphan" not in bob.get("/research/").text


# --------------------------------------------------------- who may act, and CSRF, for each

ACTIONS = [
    ("get", "delete", {}),
    ("post", "delete", {"slug": POLL}),
    ("post", "unshare", {"username": "bob"}),
    ("post", "listing", {"listed": "y"}),
    ("post", "retention", {"retain_until": "2099-12-31", "keep_public_figures": "y"}),
    ("post", "copy", {}),
]


def poll_state(database: Database) -> tuple[object, ...]:
    row = database.execute(
        "SELECT id, listed, retain_until, keep_public_figures, responses FROM surveys "
        "WHERE slug = ?",
        [POLL],
    ).fetchone()
    viewers = database.execute("SELECT count(*) FROM survey_viewers").fetchone()[0]
    surveys = database.execute("SELECT count(*) FROM surveys").fetchone()[0]
    return (*row, viewers, surveys)


@pytest.mark.parametrize(("method", "action", "fields"), ACTIONS)
def test_viewers_strangers_and_forged_posts_change_nothing(
    managed: Flask,
    researcher: str,
    database: Database,
    method: str,
    action: str,
    fields: dict[str, str],
) -> None:
    answer_poll(managed)
    before = poll_state(database)
    path = f"/research/surveys/{POLL}/{action}"
    bob, carol = as_user(managed, "bob"), as_user(managed, "carol")
    if method == "get":
        assert bob.get(path).status_code == 403
        assert carol.get(path).status_code == 404
    else:
        assert post(carol, path, **fields).status_code == 404
        if action != "copy":  # a viewer may copy what they can read (below)
            assert post(bob, path, **fields).status_code == 403
        owner = as_user(managed, researcher)
        for token in ({}, {"csrf_token": "forged"}):
            assert owner.post(path, data={**fields, **token}).status_code == 400
    assert poll_state(database) == before


def test_a_viewer_copies_into_a_draft_of_their_own(managed: Flask) -> None:
    bob = as_user(managed, "bob")
    copied = post(bob, f"/research/surveys/{POLL}/copy")
    assert copied.status_code == 302
    assert copied.headers["Location"].startswith(f"/research/builder/drafts/{POLL}-copy?")
    copy = stored(managed, f"{POLL}-copy")
    with managed.app_context():
        assert copy.owner_id == researcher_id(get_db(), "bob")
    assert copy.status == "draft"
    assert bob.get(copied.headers["Location"]).status_code == 200  # the builder opens it


# ------------------------------------------------------------------------------- deletion


def test_the_owner_deletes_a_draft_after_a_confirmation(
    managed: Flask, researcher: str, database: Database
) -> None:
    ada = as_user(managed, researcher)
    study = ada.get(f"/research/surveys/{DRAFT}/study").text
    assert "Delete the draft…" in study
    asked = ada.get(f"/research/surveys/{DRAFT}/delete")
    page = asked.text
    assert asked.status_code == 200 and "Yes, delete the draft" in page
    assert 'name="slug"' not in page  # nothing to type: nobody answered it
    assert stored(managed, DRAFT)  # asking deleted nothing
    deleted = ada.post(f"/research/surveys/{DRAFT}/delete", data=page_token(page))
    assert deleted.status_code == 302 and deleted.headers["Location"] == "/research/"
    assert "The draft Staff pulse is deleted." in ada.get("/research/").text
    assert database.execute("SELECT count(*) FROM surveys WHERE slug = ?", [DRAFT]).fetchone() == (
        0,
    )


def test_a_survey_with_answers_is_deleted_only_with_its_address_typed(
    managed: Flask, researcher: str, database: Database
) -> None:
    answer_poll(managed, 3)
    ada = as_user(managed, researcher)
    with managed.app_context():
        get_db().execute(
            "INSERT INTO invitations (token_hash, survey_id) VALUES ('h', ?)",
            [stored(managed, POLL).id],
        )
    asked = ada.get(f"/research/surveys/{POLL}/delete")
    page = asked.text
    for said in ("3 responses", "1 invitation link", "0 public releases", "1 researcher"):
        assert said in page, said
    assert "Backups of the database made before now still hold all of it" in page
    for typed in ("", "habit", "Habits", "campus-health"):
        refused = ada.post(
            f"/research/surveys/{POLL}/delete", data={**page_token(page), "slug": typed}
        )
        assert refused.status_code == 400, typed
        assert 'role="alert"' in refused.text
        assert stored(managed, POLL).id  # nothing deleted
    survey_id = stored(managed, POLL).id
    deleted = ada.post(
        f"/research/surveys/{POLL}/delete", data={**page_token(page), "slug": f" {POLL} "}
    )
    assert deleted.status_code == 302
    told = ada.get("/research/").text
    assert "Habits is deleted, with its 3 responses" in told
    on_postgresql = managed.config["DATABASE"].startswith("postgresql://")
    assert ("copies remain in PostgreSQL’s write-ahead log archives" in told) is on_postgresql
    assert set(survey_rows(database, survey_id).values()) == {0}
    assert stored(managed, SLUG)  # the other surveys stay
    with managed.app_context():
        event = recent_events(get_db())[0]
    assert (event.actor, event.action, event.subject) == (
        researcher,
        "survey deleted",
        f"{POLL} (Habits)",
    )
    assert ada.get(f"/research/surveys/{POLL}").status_code == 404


def test_deletion_removes_the_answers_from_the_database_file_and_its_wal(
    managed: Flask, researcher: str
) -> None:
    """The real app, its thread connection open: a plain answer's bytes are in the files
    before the deletion and in neither the database file nor the WAL after it."""
    answer_poll(managed, 2)
    assert PLAIN_ANSWER.encode() in stored_bytes(managed)
    ada = as_user(managed, researcher)
    deleted = post(ada, f"/research/surveys/{POLL}/delete", slug=POLL)
    assert deleted.status_code == 302
    assert PLAIN_ANSWER.encode() not in stored_bytes(managed)
    assert "still" not in ada.get("/research/").text  # the WAL was erased at once


def test_the_command_line_deletes_after_the_slug_is_typed(
    managed: Flask, runner: FlaskCliRunner
) -> None:
    answer_poll(managed)
    wrong = runner.invoke(args=["delete-survey", POLL], input="habit\n")
    assert wrong.exit_code == 1 and "nothing was deleted" in wrong.output
    assert "1 responses" in wrong.stderr and "Backups made before keep their copies" in wrong.stderr
    assert stored(managed, POLL)
    typed = runner.invoke(args=["delete-survey", POLL], input=f"{POLL}\n")
    assert typed.exit_code == 0, typed.output
    assert f"{POLL}: deleted, with 1 responses." in typed.stdout
    assert PLAIN_ANSWER.encode() not in stored_bytes(managed)
    assert runner.invoke(args=["delete-survey", "--yes", DRAFT]).exit_code == 0
    with managed.app_context():
        events = recent_events(get_db())
        assert get_survey(get_db(), DRAFT) is None
    assert [(e.actor, e.action) for e in events[:2]] == [(COMMAND_LINE, "survey deleted")] * 2
    assert runner.invoke(args=["delete-survey", "--yes", POLL]).exit_code == 1  # gone


# --------------------------------------------------------------------------- sharing


def test_the_owner_stops_sharing(managed: Flask, researcher: str, database: Database) -> None:
    bob = as_user(managed, "bob")
    assert bob.get(f"/research/surveys/{POLL}").status_code == 200
    ada = as_user(managed, researcher)
    study = ada.get(f"/research/surveys/{POLL}/study").text
    assert "Stop sharing" in study and '<span class="visually-hidden"> with bob</span>' in study
    stopped = post(ada, f"/research/surveys/{POLL}/unshare", username="bob")
    assert stopped.status_code == 302
    assert "bob can no longer view" in ada.get(stopped.headers["Location"]).text
    assert database.execute("SELECT count(*) FROM survey_viewers").fetchone()[0] == 0
    assert bob.get(f"/research/surveys/{POLL}").status_code == 404
    unknown = post(ada, f"/research/surveys/{POLL}/unshare", username="nobody")
    assert unknown.status_code == 400
    assert "There is no researcher named nobody." in unknown.text


# ------------------------------------------------------------------------- the front page


def test_the_front_page_lists_only_what_owners_list_while_open_to_anyone(
    managed: Flask, researcher: str
) -> None:
    visitor, ada = managed.test_client(), as_user(managed, researcher)
    assert post(ada, f"/research/surveys/{SLUG}/listing").status_code == 302  # the example
    assert "No survey is listed here." in visitor.get("/").text  # the poll is not, by default
    assert visitor.get(f"/s/{POLL}").status_code == 200  # its address works all the same
    study = ada.get(f"/research/surveys/{POLL}/study").text
    assert 'id="listed" name="listed" value="y" aria' in study  # unchecked
    listed = post(ada, f"/research/surveys/{POLL}/listing", listed="y")
    assert listed.status_code == 302
    assert f'href="/s/{POLL}"' in visitor.get("/").text
    assert "checked" in ada.get(f"/research/surveys/{POLL}/study").text.split('id="listed"')[1][:60]
    assert post(ada, f"/research/surveys/{POLL}/close").status_code == 302
    assert f"/s/{POLL}" not in visitor.get("/").text  # closed: off the front page
    assert post(ada, f"/research/surveys/{POLL}/open").status_code == 302
    assert f"/s/{POLL}" in visitor.get("/").text
    assert post(ada, f"/research/surveys/{POLL}/listing").status_code == 302  # unticked
    assert f"/s/{POLL}" not in visitor.get("/").text
    # A survey by invitation is never listed, whatever the flag says.
    with managed.app_context():
        get_db().execute("UPDATE surveys SET listed = 1, status = 'open' WHERE slug = ?", [DRAFT])
    assert f"/s/{DRAFT}" not in visitor.get("/").text


def test_a_browser_keeps_its_answered_record_of_an_unlisted_open_survey(
    managed: Flask,
) -> None:
    """The front page drops a browser's records of surveys no longer open: an open survey
    that is merely unlisted keeps its record, so the browser cannot answer it twice."""
    respondent = managed.test_client()
    form = fresh_form(respondent, POLL)
    respondent.post(f"/s/{POLL}", data={**form, "cheated": "n", "code": "000001"})
    respondent.get("/")
    assert "already answered this survey" in respondent.get(f"/s/{POLL}").text


# ------------------------------------------------------------------------------- copying


@pytest.mark.parametrize(("path", "slug"), [(MIXED, MIXED_SLUG), (MULTILINGUAL, None)])
def test_a_copy_keeps_the_questions_texts_and_mechanisms(
    managed: Flask, researcher: str, path: Path, slug: str | None
) -> None:
    definition = load_definition(path)
    with managed.app_context():
        original = store_survey(get_db(), definition, researcher_id(get_db(), researcher))
    ada = as_user(managed, researcher)
    for expected in (f"{original.slug}-copy", f"{original.slug}-copy-2"):
        assert post(ada, f"/research/surveys/{original.slug}/copy").status_code == 302
        copy = stored(managed, expected)
        assert copy.status == "draft" and copy.owner_id == original.owner_id
        assert copy.design == original.design
        assert [q.mechanism.parameters() for q in copy.questions] == [
            q.mechanism.parameters() for q in original.questions
        ]
        assert [(q.key, q.text, q.options, q.translations) for q in copy.questions] == [
            (q.key, q.text, q.options, q.translations) for q in original.questions
        ]
        assert (copy.title, copy.consent, copy.translations, copy.languages) == (
            original.title,
            original.consent,
            original.translations,
            original.languages,
        )
        assert not copy.listed and copy.retain_until is None


def test_copy_addresses_stay_within_the_longest_slug() -> None:
    slugs = copy_slugs("a" * 60 + "-bcd")
    first, second = next(slugs), next(slugs)
    assert len(first) <= 64 and first.endswith("-copy") and "--" not in first
    assert len(second) <= 64 and second.endswith("-copy-2")
    assert next(copy_slugs("poll")) == "poll-copy"
