"""Researcher sessions and the respondent's "answered" record (issue 9, item 3).

A session lives in the database: logging out revokes it wherever its cookie was copied,
and it ends after an idle time and at an absolute maximum. The login and the record of
which surveys a browser answered are separate cookies; neither changes the other.
Passwords: OWASP's scrypt in production, re-hashed when stored otherwise, and a login
check that costs one hash of the current kind whether or not the username exists.
"""

from __future__ import annotations

import base64
import datetime
import re
import time
from http.cookies import SimpleCookie

import itsdangerous
import pytest
import werkzeug.security
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from survey_app import create_app
from survey_app.storage import accounts
from survey_app.storage.accounts import create_researcher
from survey_app.storage.backends import Database
from survey_app.storage.surveys import get_survey, set_status
from survey_app.web import answered_cookie as answered
from survey_app.web.database_session import get_db
from tests.support.examples import SLUG
from tests.support.researchers import PASSWORD, Clock, log_in
from tests.support.respondents import answers, fresh_form, hidden_fields
from tests.support.stored import opened, rows

IDLE = 30 * 60
MAXIMUM = 8 * 3600


def set_cookies(response: TestResponse) -> dict[str, str]:
    """Each cookie the response sets, by name: its whole Set-Cookie line."""
    lines = response.headers.getlist("Set-Cookie")
    return {line.split("=", 1)[0]: line for line in lines}


def log_out(client: FlaskClient) -> None:
    page = client.get("/logout").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    assert client.post("/logout", data={"csrf_token": token.group(1)}).status_code == 302


def answer_survey(client: FlaskClient) -> TestResponse:
    response = client.post(f"/s/{SLUG}", data={**fresh_form(client), **answers()})
    assert response.status_code == 200
    return response


def test_logout_revokes_a_copied_cookie(app: Flask, logged_in: FlaskClient) -> None:
    thief = app.test_client()
    cookie = logged_in.get_cookie("session")
    assert cookie is not None
    thief.set_cookie("session", cookie.value)
    assert thief.get("/research/").status_code == 200  # a copied cookie works while live
    log_out(logged_in)
    assert logged_in.get("/research/").status_code == 302
    response = thief.get("/research/")
    assert response.status_code == 302, "logging out must end the session on the server"
    assert response.headers["Location"].startswith("/login")


def test_an_idle_session_ends(clock: Clock, logged_in: FlaskClient) -> None:
    for _ in range(4):  # activity keeps it alive past the idle time
        clock.advance(IDLE - 60)
        assert logged_in.get("/research/").status_code == 200
    clock.advance(IDLE + 1)
    assert logged_in.get("/research/").status_code == 302


def test_an_active_session_ends_at_its_maximum_age(clock: Clock, logged_in: FlaskClient) -> None:
    started = clock.now
    while clock.now - started + 10 * 60 <= MAXIMUM:
        clock.advance(10 * 60)
        assert logged_in.get("/research/").status_code == 200
    clock.advance(MAXIMUM - (clock.now - started) + 1)
    assert logged_in.get("/research/").status_code == 302


def test_session_lengths_are_settings(app: Flask, clock: Clock, researcher: str) -> None:
    app.config.update(SESSION_IDLE_MINUTES=2, SESSION_MAX_HOURS=1)
    client = app.test_client()
    assert log_in(client, researcher).status_code == 302
    clock.advance(2 * 60 + 1)
    assert client.get("/research/").status_code == 302


def test_the_login_cookie_lasts_as_long_as_the_browser(
    client: FlaskClient, researcher: str
) -> None:
    cookie = set_cookies(log_in(client, researcher))["session"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Expires" not in cookie and "Max-Age" not in cookie


def record_cookies(response: TestResponse) -> dict[str, str]:
    """The "answered" records a response sets or deletes, by name: their Set-Cookie lines."""
    return {n: line for n, line in set_cookies(response).items() if n.startswith("answered")}


def test_answering_a_survey_leaves_the_login_cookie_alone(logged_in: FlaskClient) -> None:
    response = answer_survey(logged_in)
    session_cookie = set_cookies(response).get("session", "")
    assert "Expires" not in session_cookie, "answering made the login cookie persistent"
    [record] = record_cookies(response).values()
    assert "Expires" in record and "HttpOnly" in record and "SameSite=Lax" in record


def test_logging_in_and_out_keeps_the_answered_record(client: FlaskClient, researcher: str) -> None:
    answer_survey(client)
    assert log_in(client, researcher).status_code == 302
    log_out(client)
    page = client.get(f"/s/{SLUG}").get_data(as_text=True)
    assert "already answered" in page


def test_the_cookie_jar_does_not_say_which_survey_was_answered(
    app: Flask, client: FlaskClient
) -> None:
    """What a person at a shared computer can read: one record per survey, whose name is a
    keyed hash of the slug (no slug, title or list), whose value is a signature, and which
    expires at a midnight (UTC) at most ANSWERED_RECORD_DAYS later: a day, not a time."""
    response = answer_survey(client)
    [(name, line)] = record_cookies(response).items()
    cookie = client.get_cookie(name)
    assert cookie is not None
    readable = [name, cookie.value, *(_decoded(part) for part in re.split(r"[.-]", cookie.value))]
    for text in readable:
        for secret in (SLUG, SLUG.replace("-", ""), "Campus", "health"):
            assert secret not in text, (secret, text)
    with app.test_request_context():
        assert answered.record_name(SLUG) == name
        app.secret_key = "another key"
        assert answered.record_name(SLUG) != name  # without this app's key, no match
    parsed: SimpleCookie = SimpleCookie()
    parsed.load(line)
    expires = datetime.datetime.strptime(parsed[name]["expires"], "%a, %d %b %Y %H:%M:%S GMT")
    assert expires.time() == datetime.time(0, 0)
    days = (expires.date() - datetime.datetime.now(datetime.UTC).date()).days
    assert 30 <= days <= 31  # the default, far short of the year it used to be
    assert not parsed[name]["max-age"]


def _decoded(text: str) -> str:
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded).decode("latin-1")
    except ValueError:
        return ""


def test_the_record_lifetime_is_a_setting(app: Flask, client: FlaskClient) -> None:
    app.config["ANSWERED_RECORD_DAYS"] = 2
    parsed: SimpleCookie = SimpleCookie()
    parsed.load(next(iter(record_cookies(answer_survey(client)).values())))
    [morsel] = parsed.values()
    expires = datetime.datetime.strptime(morsel["expires"], "%a, %d %b %Y %H:%M:%S GMT")
    assert (expires.date() - datetime.datetime.now(datetime.UTC).date()).days == 3


def test_a_closed_survey_s_record_is_deleted_when_the_browser_comes_back(
    app: Flask, client: FlaskClient
) -> None:
    answer_survey(client)
    with app.test_request_context():
        name = answered.record_name(SLUG)
    assert client.get_cookie(name) is not None
    assert name not in record_cookies(client.get("/"))  # kept while the survey is open
    with app.app_context():
        db = get_db()
        survey = get_survey(db, SLUG)
        assert survey is not None
        set_status(db, survey, "closed")
    response = client.get("/")
    assert name in record_cookies(response)
    assert client.get_cookie(name) is None


def test_a_made_up_record_counts_for_nothing_and_is_deleted(
    app: Flask, client: FlaskClient
) -> None:
    with app.test_request_context():
        name = answered.record_name(SLUG)
    client.set_cookie(name, "not-a-signature")
    response = client.get(f"/s/{SLUG}")
    assert "already answered" not in response.get_data(as_text=True)
    assert name in record_cookies(response)  # deleted
    assert client.get_cookie(name) is None


def test_the_year_long_list_of_an_earlier_version_still_counts_and_is_replaced(
    app: Flask, client: FlaskClient
) -> None:
    """The record used to be one signed list of every slug, kept a year: it still refuses
    a second answer, and the first visit swaps it for this version's record."""
    serializer = itsdangerous.URLSafeTimedSerializer("test-secret", salt="answered-surveys")
    client.set_cookie("answered", serializer.dumps([SLUG, "some-closed-survey"]))
    response = client.get(f"/s/{SLUG}")
    assert "already answered" in response.get_data(as_text=True)
    assert client.get_cookie("answered") is None
    with app.test_request_context():
        name = answered.record_name(SLUG)
    assert client.get_cookie(name) is not None
    assert "already answered" in client.get(f"/s/{SLUG}").get_data(as_text=True)


def test_a_record_kept_in_the_old_session_cookie_still_counts(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the record lived in the year-long session cookie: an upgrade must not let
    a browser that answered long ago answer again."""
    serializer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]
    long_ago = int(time.time()) - 300 * 24 * 3600
    monkeypatch.setattr(itsdangerous.TimestampSigner, "get_timestamp", lambda self: long_ago)
    old_cookie = serializer.dumps({"answered": [SLUG], "_permanent": True})
    monkeypatch.undo()
    client.set_cookie("session", old_cookie)
    response = client.get(f"/s/{SLUG}")
    assert "already answered" in response.get_data(as_text=True)
    with app.test_request_context():
        assert answered.record_name(SLUG) in record_cookies(response)  # moved into its own


def test_passwords_are_hashed_at_owasp_parameters(database_url: str) -> None:
    app = create_app({"DATABASE": database_url, "SECRET_KEY": "k"})
    assert app.config["PASSWORD_HASH_METHOD"] == "scrypt:131072:8:1"
    with app.app_context():
        create_researcher(get_db(), "grace", PASSWORD)
    with opened(app.config["DATABASE"]) as database:
        [row] = rows(database, "researchers")
    assert row["password_hash"].startswith("scrypt:131072:8:1$")
    assert "correct horse" not in row["password_hash"]


def test_an_older_hash_is_rehashed_at_the_next_login(
    app: Flask, client: FlaskClient, database: Database
) -> None:
    from werkzeug.security import generate_password_hash

    app.config["PASSWORD_HASH_METHOD"] = "scrypt:1024:8:1"  # small, to keep the test fast
    database.execute(
        "INSERT INTO researchers (username, password_hash, created_on) VALUES (?, ?, ?)",
        ["old", generate_password_hash(PASSWORD, "pbkdf2:sha256:1000"), "2024-01-01"],
    )
    assert log_in(client, "old").status_code == 302
    [stored] = database.execute("SELECT password_hash FROM researchers").fetchone()
    assert stored.startswith("scrypt:1024:8:1$")
    assert log_in(app.test_client(), "old").status_code == 302


@pytest.mark.parametrize("username", ["ada", "nobody"])
def test_a_login_costs_one_hash_of_the_current_kind(
    client: FlaskClient, researcher: str, monkeypatch: pytest.MonkeyPatch, username: str
) -> None:
    """Known and unknown usernames alike: one check against a hash made the current way,
    so neither timing nor load tells which usernames exist."""
    checked: list[str] = []
    real_check = werkzeug.security.check_password_hash

    def counting_check(stored: str, password: str) -> bool:
        checked.append(stored.split("$", 1)[0])
        return real_check(stored, password)

    monkeypatch.setattr(accounts, "check_password_hash", counting_check)
    assert log_in(client, username, "wrong password!").status_code == 401
    assert checked == ["pbkdf2:sha256:1"]


def test_cookies_are_secure_when_asked(app: Flask, researcher: str) -> None:
    app.config["SESSION_COOKIE_SECURE"] = True
    for name, line in set_cookies(log_in(app.test_client(), researcher)).items():
        assert "Secure" in line, name
    respondent = app.test_client()
    https = "https://localhost"
    form = hidden_fields(respondent.get(f"/s/{SLUG}", base_url=https).get_data(as_text=True))
    response = respondent.post(
        f"/s/{SLUG}", data={**form, **answers()}, base_url=https, headers={"Referer": https + "/"}
    )
    assert response.status_code == 200
    [line] = record_cookies(response).values()
    assert "Secure" in line
