"""Running a study from the browser: the survey list, and the owner's open, close, share
and invite, each a question (GET, changes nothing) and then an answer (POST with CSRF).
Sharing asks by POST too, under a rate limit: its answer says whether a username exists.

Viewers and strangers are refused (403 / 404) and nothing changes; the rules are the
command line's (survey_app/web/research/studies.py serves both).
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from babel.dates import format_date
from flask import Flask
from flask.testing import FlaskClient
from limits import parse_many

from survey_app import create_app
from survey_app.domain.definitions import load_definition
from survey_app.storage.accounts import create_researcher
from survey_app.storage.backends import Database
from survey_app.storage.surveys import get_survey, share_survey, store_survey
from survey_app.web.database_session import get_db
from survey_app.web.limits import SHARE_RATE_LIMIT
from survey_app.web.research.studies import MAX_LINKS_AT_ONCE
from tests.support.examples import EXAMPLE, INVITE_ONLY, SLUG
from tests.support.invitations import start, start_page
from tests.support.researchers import PASSWORD, log_in
from tests.support.respondents import answers, fresh_form, hidden_fields
from tests.support.stored import opened

OWNED = "staff-pulse"  # access: invitation, owned by ada
OPEN_OWNED = "ada-campus"  # open to anyone, owned by ada


@pytest.fixture
def studies(app: Flask, researcher: str, tmp_path: Path) -> Flask:
    """ada owns an invitation-only survey and an open one; bob and carol exist; the
    example survey (campus-health) is bob's, shared with ada."""
    invite_file = tmp_path / "staff.yaml"
    invite_file.write_text(INVITE_ONLY)
    open_file = tmp_path / "campus.yaml"
    open_file.write_text(
        EXAMPLE.read_text(encoding="utf-8").replace(f"slug: {SLUG}\n", f"slug: {OPEN_OWNED}\n")
    )
    with app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        store_survey(db, load_definition(invite_file), ada[0], "draft")
        store_survey(db, load_definition(open_file), ada[0], "open")
        bob = create_researcher(db, "bob", PASSWORD)
        create_researcher(db, "carol", PASSWORD)
        db.execute("UPDATE surveys SET owner_id = ? WHERE slug = ?", [bob.id, SLUG])
        share_survey(db, get_survey(db, SLUG), ada[0])  # type: ignore[arg-type]
    return app


def status_of(database: Database, slug: str) -> str:
    return str(database.execute("SELECT status FROM surveys WHERE slug = ?", [slug]).fetchone()[0])


def viewer_names(database: Database, slug: str) -> set[str]:
    return {
        row[0]
        for row in database.execute(
            "SELECT r.username FROM survey_viewers v JOIN researchers r ON r.id = v.researcher_id "
            "JOIN surveys s ON s.id = v.survey_id WHERE s.slug = ?",
            [slug],
        )
    }


def invitation_count(database: Database) -> int:
    return int(database.execute("SELECT count(*) FROM invitations").fetchone()[0])


def confirm_token(page: str) -> str:
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert token, "the confirmation page has a CSRF token"
    return token.group(1)


def session_token(client: FlaskClient) -> str:
    """A valid CSRF token of this client's session, from the logout page's form: for
    POSTs sent without asking first."""
    page = client.get("/logout").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    return token.group(1)


def ask(client: FlaskClient, path: str, **fields: str):
    """The question before an action: a GET, but a POST with the session's CSRF token for
    sharing, whose answer says whether a username exists."""
    if path.endswith("/share"):
        return client.post(path, data={"csrf_token": session_token(client), **fields})
    return client.get(path, query_string=fields)


def confirm(client: FlaskClient, path: str, **fields: str):
    """Ask, then press the confirmation's button (POST its form's hidden fields)."""
    asked = ask(client, path, **fields)
    assert asked.status_code == 200, asked.get_data(as_text=True)
    page = asked.get_data(as_text=True)
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    assert action, "the confirmation page posts back"
    sent = {**hidden_fields(page), "csrf_token": confirm_token(page), **fields}
    return client.post(action.group(1).replace("&amp;", "&"), data=sent)


def as_user(app: Flask, username: str) -> FlaskClient:
    client = app.test_client()
    assert log_in(client, username).status_code == 302
    return client


def test_the_survey_list_shows_status_counts_and_last_response_day(
    studies: Flask, logged_in: FlaskClient
) -> None:
    for _ in range(2):
        respondent = studies.test_client()
        form = fresh_form(respondent, OPEN_OWNED)
        posted = respondent.post(f"/s/{OPEN_OWNED}", data={**form, **answers("y")})
        assert posted.status_code == 200
    page = logged_in.get("/research/").get_data(as_text=True)
    rows = dict(re.findall(r'<tr data-slug="([\w-]+)">(.*?)</tr>', page, flags=re.S))
    assert set(rows) == {SLUG, OWNED, OPEN_OWNED}
    today = format_date(datetime.date.today(), "medium", locale="en")
    assert re.search(r'data-label="Responses">2<', rows[OPEN_OWNED])
    assert today in rows[OPEN_OWNED] and ">open<" in rows[OPEN_OWNED]
    assert ">draft<" in rows[OWNED] and "by invitation" in rows[OWNED]
    assert "none yet" in rows[OWNED] and re.search(r'data-label="Responses">0<', rows[OWNED])
    # Only the owner's surveys offer to run them; the example is bob's, ada only views it.
    assert f"/research/surveys/{OWNED}/study" in rows[OWNED]
    assert "/study" not in rows[SLUG]
    # Dates follow the page's language.
    korean = logged_in.get("/research/?lang=ko").get_data(as_text=True)
    assert format_date(datetime.date.today(), "medium", locale="ko") in korean


def test_the_owner_opens_and_closes_with_a_confirmation(
    studies: Flask, logged_in: FlaskClient, database: Database
) -> None:
    study = logged_in.get(f"/research/surveys/{OWNED}/study").get_data(as_text=True)
    assert "The survey is draft." in study and f"/research/surveys/{OWNED}/open" in study
    # Asking changes nothing: a link, a prefetch or a crawler cannot open a survey.
    asked = logged_in.get(f"/research/surveys/{OWNED}/open")
    assert asked.status_code == 200 and "Yes, open the survey" in asked.get_data(as_text=True)
    assert status_of(database, OWNED) == "draft"

    opened = confirm(logged_in, f"/research/surveys/{OWNED}/open")
    assert opened.status_code == 302
    assert opened.headers["Location"].endswith(f"/research/surveys/{OWNED}/study")
    assert status_of(database, OWNED) == "open"
    after = logged_in.get(opened.headers["Location"]).get_data(as_text=True)
    assert "The survey is open: it accepts answers." in after  # the flashed message
    assert f"/research/surveys/{OWNED}/close" in after

    assert confirm(logged_in, f"/research/surveys/{OWNED}/close").status_code == 302
    assert status_of(database, OWNED) == "closed"
    # A closed survey refuses answers, as after `survey-app close`.
    assert studies.test_client().get(f"/s/{OPEN_OWNED}").status_code == 200
    assert confirm(logged_in, f"/research/surveys/{OPEN_OWNED}/close").status_code == 302
    assert studies.test_client().get(f"/s/{OPEN_OWNED}").status_code != 200


def test_a_post_without_its_csrf_token_changes_nothing(
    studies: Flask, logged_in: FlaskClient, database: Database
) -> None:
    before = invitation_count(database)
    for path, fields in [
        (f"/research/surveys/{OWNED}/open", {}),
        (f"/research/surveys/{OPEN_OWNED}/close", {}),
        (f"/research/surveys/{OWNED}/share", {"username": "bob"}),
        (f"/research/surveys/{OWNED}/invite", {"count": "3"}),
    ]:
        for token in (None, "forged"):
            data = fields if token is None else {**fields, "csrf_token": token}
            refused = logged_in.post(path, data=data)
            assert refused.status_code == 400, (path, token)
    assert status_of(database, OWNED) == "draft"
    assert status_of(database, OPEN_OWNED) == "open"
    assert viewer_names(database, OWNED) == set()
    assert invitation_count(database) == before


def test_sharing_names_a_researcher_who_then_sees_the_results(
    studies: Flask, logged_in: FlaskClient, database: Database
) -> None:
    bob = as_user(studies, "bob")
    assert bob.get(f"/research/surveys/{OWNED}").status_code == 404
    asked = ask(logged_in, f"/research/surveys/{OWNED}/share", username="bob")
    assert "Share Staff pulse with bob?" in asked.get_data(as_text=True)
    assert viewer_names(database, OWNED) == set()
    shared = confirm(logged_in, f"/research/surveys/{OWNED}/share", username="bob")
    assert shared.status_code == 302
    assert viewer_names(database, OWNED) == {"bob"}
    assert "bob can now view" in logged_in.get(shared.headers["Location"]).get_data(as_text=True)
    assert bob.get(f"/research/surveys/{OWNED}").status_code == 200
    # The owner sees who can view; sharing again changes nothing (as in the CLI).
    study = logged_in.get(f"/research/surveys/{OWNED}/study").get_data(as_text=True)
    assert '<span class="viewer">bob</span>' in study
    assert confirm(logged_in, f"/research/surveys/{OWNED}/share", username="bob").status_code == 302
    assert viewer_names(database, OWNED) == {"bob"}


@pytest.mark.parametrize("username", ["nobody", ""])
def test_sharing_with_nobody_is_refused(
    studies: Flask, logged_in: FlaskClient, database: Database, username: str
) -> None:
    page = ask(logged_in, f"/research/surveys/{OWNED}/share", username=username)
    assert page.status_code == 400
    assert 'role="alert"' in page.get_data(as_text=True)
    # Straight to the confirmation, skipping the question: refused all the same.
    posted = logged_in.post(
        f"/research/surveys/{OWNED}/share",
        data={"csrf_token": session_token(logged_in), "username": username, "confirmed": "yes"},
    )
    assert posted.status_code == 400
    assert viewer_names(database, OWNED) == set()


def test_asking_whether_a_username_exists_needs_a_post_with_csrf(
    studies: Flask, logged_in: FlaskClient
) -> None:
    """A link, a prefetch or another site's page cannot learn whether a researcher exists:
    the question is a POST with the CSRF token, as the action is."""
    path = f"/research/surveys/{OWNED}/share"
    by_link = [logged_in.get(path, query_string={"username": name}) for name in ("bob", "nobody")]
    assert [response.status_code for response in by_link] == [405, 405]
    assert by_link[0].get_data() == by_link[1].get_data().replace(b"nobody", b"bob")
    for name in ("bob", "nobody"):
        forged = logged_in.post(path, data={"username": name})  # no CSRF token
        assert forged.status_code == 400
        page = forged.get_data(as_text=True)
        assert "researcher named" not in page and f"with {name}?" not in page
    # With the token, the owner is told either way (sharing with a typo must not pass quietly).
    known = ask(logged_in, path, username="bob")
    assert "Share Staff pulse with bob?" in known.get_data(as_text=True)
    unknown = ask(logged_in, path, username="nobody")
    assert unknown.status_code == 400
    assert "There is no researcher named nobody." in unknown.get_data(as_text=True)


def test_share_lookups_are_rate_limited(tmp_path: Path, database_url: str) -> None:
    """The limit's per-minute number of lookups, known names or not, then 429 for any."""
    app = create_app(
        {
            "DATABASE": database_url,
            "SECRET_KEY": "k",
            "RATE_LIMITS": True,
            "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1",
        }
    )
    invite_file = tmp_path / "staff.yaml"
    invite_file.write_text(INVITE_ONLY)
    with app.app_context():
        ada = create_researcher(get_db(), "ada", PASSWORD)
        create_researcher(get_db(), "bob", PASSWORD)
        store_survey(get_db(), load_definition(invite_file), ada.id, "draft")
    owner = as_user(app, "ada")
    per_minute = min(parse_many(SHARE_RATE_LIMIT), key=lambda limit: limit.get_expiry())
    assert per_minute.get_expiry() == 60
    path = f"/research/surveys/{OWNED}/share"
    names = ["bob", "nobody"] * per_minute.amount
    statuses = [ask(owner, path, username=name).status_code for name in names[: per_minute.amount]]
    assert set(statuses) == {200, 400}  # told, each time, whether the name exists
    for name in ("bob", "nobody"):
        refused = ask(owner, path, username=name)
        assert refused.status_code == 429
        page = refused.get_data(as_text=True)
        assert "Too many requests came from your network" in page and name not in page
    with opened(database_url) as database:
        assert viewer_names(database, OWNED) == set()


def test_invitation_links_are_shown_once_and_work(
    studies: Flask, logged_in: FlaskClient, database: Database
) -> None:
    assert confirm(logged_in, f"/research/surveys/{OWNED}/open").status_code == 302
    asked = logged_in.get(f"/research/surveys/{OWNED}/invite", query_string={"count": "3"})
    assert "Create 3 invitation links for Staff pulse?" in asked.get_data(as_text=True)
    assert invitation_count(database) == 0
    made = confirm(logged_in, f"/research/surveys/{OWNED}/invite", count="3")
    assert made.status_code == 200
    assert made.headers["Cache-Control"] == "no-store"
    page = made.get_data(as_text=True)
    # Built on the address the researcher is using (the test client's), not BASE_URL's default.
    links = re.findall(rf"http://localhost/s/{OWNED}\?invitation=[\w-]+", page)
    assert len(links) == 3 and len(set(links)) == 3
    assert invitation_count(database) == 3
    assert "Only 3 links: when few people answer at once" in page  # timing: SECURITY.md
    many = confirm(logged_in, f"/research/surveys/{OWNED}/invite", count="20")
    assert "when few people answer at once" not in many.get_data(as_text=True)
    stored = {row[0] for row in database.execute("SELECT token_hash FROM invitations")}
    for link in links:
        token = link.rsplit("=", 1)[1]
        assert token not in stored and token not in str(stored)  # only hashes are kept
    respondent = studies.test_client()
    path = links[0].removeprefix("http://localhost")
    assert start_page(respondent, path)["invitation"] == links[0].rsplit("=", 1)[1]
    form = start(respondent, path)
    answered = respondent.post(f"/s/{OWNED}", data={**form, "burnout": "y"})
    assert answered.status_code == 200


@pytest.mark.parametrize("count", ["0", "-1", str(MAX_LINKS_AT_ONCE + 1), "many", ""])
def test_a_count_out_of_range_makes_no_links(
    studies: Flask, logged_in: FlaskClient, database: Database, count: str
) -> None:
    page = logged_in.get(f"/research/surveys/{OWNED}/invite", query_string={"count": count})
    assert page.status_code == 400
    posted = logged_in.post(
        f"/research/surveys/{OWNED}/invite",
        data={"csrf_token": session_token(logged_in), "count": count},
    )
    assert posted.status_code == 400
    assert invitation_count(database) == 0


def test_an_open_access_survey_gets_no_invitations(
    studies: Flask, logged_in: FlaskClient, database: Database
) -> None:
    study = logged_in.get(f"/research/surveys/{OPEN_OWNED}/study").get_data(as_text=True)
    assert "needs no invitations" in study and "/invite" not in study
    asked = logged_in.get(f"/research/surveys/{OPEN_OWNED}/invite", query_string={"count": "2"})
    assert asked.status_code == 400
    posted = logged_in.post(
        f"/research/surveys/{OPEN_OWNED}/invite",
        data={"csrf_token": session_token(logged_in), "count": "2"},
    )
    assert posted.status_code == 400 and "needs no invitations" in posted.get_data(as_text=True)
    assert invitation_count(database) == 0


STUDY_ACTIONS = [
    ("get", "study", {}),
    ("get", "open", {}),
    ("post", "open", {}),
    ("get", "close", {}),
    ("post", "close", {}),
    ("post", "share", {"username": "carol"}),
    ("post", "share", {"username": "carol", "confirmed": "yes"}),
    ("get", "invite", {"count": "2"}),
    ("post", "invite", {"count": "2"}),
]


@pytest.mark.parametrize(("method", "action", "fields"), STUDY_ACTIONS)
def test_viewers_and_strangers_cannot_run_a_study(
    studies: Flask,
    logged_in: FlaskClient,
    database: Database,
    method: str,
    action: str,
    fields: dict[str, str],
) -> None:
    """bob views ada's survey (403: he knows it exists); carol is a stranger (404, as
    for a survey that does not exist); ada only views bob's example (403)."""
    assert confirm(logged_in, f"/research/surveys/{OWNED}/share", username="bob").status_code == 302
    before = (status_of(database, OWNED), viewer_names(database, OWNED), invitation_count(database))
    for username, slug, expected in [
        ("bob", OWNED, 403),
        ("carol", OWNED, 404),
        ("ada", SLUG, 403),
    ]:
        client = logged_in if username == "ada" else as_user(studies, username)
        token = session_token(client)  # valid: the refusal is not the CSRF check's
        path = f"/research/surveys/{slug}/{action}"
        if method == "get":
            response = client.get(path, query_string=fields)
        else:
            response = client.post(path, data={"csrf_token": token, **fields})
        assert response.status_code == expected, (username, slug, response.status_code)
    after = (status_of(database, OWNED), viewer_names(database, OWNED), invitation_count(database))
    assert after == before
    assert status_of(database, SLUG) == "open"
    assert viewer_names(database, SLUG) == {"ada"}


def test_the_dashboard_links_the_owner_to_the_controls(
    studies: Flask, logged_in: FlaskClient
) -> None:
    owned = logged_in.get(f"/research/surveys/{OWNED}").get_data(as_text=True)
    assert f"/research/surveys/{OWNED}/study" in owned
    unowned = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert "/study" not in unowned
