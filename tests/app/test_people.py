"""People (issue 18, item 4): administrators, adding researchers with a single-use link to
set a password, deactivating, resetting, and every researcher changing their own password.

Every action is an administrator's (a researcher gets 403, an anonymous visitor the login
page), a POST with its CSRF token (400 without), recorded as an event. The last active
administrator stays one; links are stored only as hashes, work once and expire; ending
an account's sessions really ends them, on other browsers too.
"""

from __future__ import annotations

import re

import pytest
import werkzeug.security
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from werkzeug.test import TestResponse

from survey_app import create_app
from survey_app.storage import accounts
from survey_app.storage.accounts import PASSWORD_LINK_SECONDS, create_researcher
from survey_app.storage.backends import Database
from survey_app.web.database_session import get_db
from tests.support.examples import SLUG
from tests.support.researchers import PASSWORD, Clock, log_in
from tests.support.stored import database_bytes

ADMIN, OTHER = "ada", "bob"  # ada is the first account: the administrator
NEW_PASSWORD = "a brand new password"
# Every administrator's action (the POST), with the form it sends besides its CSRF token.
ACTIONS = {
    "/research/people": {"username": "carol"},
    "/research/people/deactivate": {"username": OTHER},
    "/research/people/reactivate": {"username": OTHER},
    "/research/people/reset-password": {"username": OTHER},
    "/research/people/make-admin": {"username": OTHER},
    "/research/people/unmake-admin": {"username": OTHER},
}
# Every administrator's page (the GET).
PAGES = ["/research/people", *(f"{path}?username={OTHER}" for path in list(ACTIONS)[1:])]


def csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert found, "the page has a CSRF token"
    return found.group(1)


def post(client: FlaskClient, path: str, page: str, **fields: str) -> TestResponse:
    """Send the form of ``page`` (opened by GET) to ``path``, with its CSRF token."""
    token = csrf(client.get(page).get_data(as_text=True))
    return client.post(path, data={"csrf_token": token, **fields})


def act(client: FlaskClient, path: str, username: str) -> TestResponse:
    """Ask (GET, the question) and confirm (POST) one action on one account."""
    return post(client, path, f"{path}?username={username}", username=username)


def shown_link(response: TestResponse) -> str:
    """The set-password link a page shows once, as a path on this server."""
    assert response.status_code == 200, response.get_data(as_text=True)
    found = re.search(
        r"<textarea[^>]*>http://localhost(/set-password/[^<]+)</textarea>",
        str(response.get_data(as_text=True)),
    )
    assert found, "the page shows the link"
    return found.group(1)


def set_password(client: FlaskClient, link: str, password: str, again: str = "") -> TestResponse:
    return post(client, link, link, password=password, again=again or password)


def login_error(response: TestResponse) -> str:
    found = re.search(
        r'<div class="errors" role="alert">(.*?)</div>', response.get_data(as_text=True)
    )
    assert found, "the login page says why"
    return found.group(1)


def events(database: Database) -> list[tuple[str, str, str]]:
    return database.execute("SELECT actor, action, subject FROM events ORDER BY id").fetchall()


@pytest.fixture
def admin(app: Flask, researcher: str) -> FlaskClient:
    """ada (the first account, so an administrator) logged in; bob, a researcher, exists."""
    with app.app_context():
        create_researcher(get_db(), OTHER, PASSWORD)
    client = app.test_client()
    assert log_in(client, researcher).status_code == 302
    return client


@pytest.fixture
def bob(app: Flask, admin: FlaskClient) -> FlaskClient:
    client = app.test_client()
    assert log_in(client, OTHER).status_code == 302
    return client


def test_the_first_account_is_the_administrator_and_adopts_ownerless_surveys(
    runner: FlaskCliRunner, database: Database
) -> None:
    for args, kind in (
        (["first"], "administrator"),
        (["second"], "researcher"),
        (["third", "--admin"], "administrator"),
    ):
        result = runner.invoke(
            args=["create-researcher", *args, "--password-stdin"], input=PASSWORD + "\n"
        )
        assert result.exit_code == 0, result.output
        assert f"Created {kind} '{args[0]}'" in result.output
    rows = database.execute("SELECT username, role FROM researchers ORDER BY id").fetchall()
    assert rows == [("first", "admin"), ("second", "researcher"), ("third", "admin")]
    owner = database.execute("SELECT owner_id FROM surveys WHERE slug = ?", [SLUG]).fetchone()
    assert owner == (1,)  # the example survey nobody owned is the first account's now
    assert events(database) == [
        ("command line", "administrator added", "first"),
        ("command line", "researcher added", "second"),
        ("command line", "administrator added", "third"),
    ]


@pytest.mark.parametrize("path", PAGES)
def test_administrator_pages_are_for_administrators_only(
    app: Flask, admin: FlaskClient, bob: FlaskClient, path: str
) -> None:
    assert admin.get(path).status_code == 200
    assert bob.get(path).status_code == 403
    anonymous = app.test_client().get(path)
    assert anonymous.status_code == 302 and anonymous.headers["Location"].startswith("/login?next=")


@pytest.mark.parametrize(("path", "fields"), ACTIONS.items())
def test_every_action_refuses_researchers_anonymous_visitors_and_forged_forms(
    app: Flask,
    admin: FlaskClient,
    bob: FlaskClient,
    database: Database,
    path: str,
    fields: dict[str, str],
) -> None:
    """A researcher (with a valid CSRF token of their own) gets 403, an anonymous visitor
    the login page, the administrator without the token 400; none changes anything."""
    before = database.execute("SELECT * FROM researchers").fetchall(), events(database)
    assert post(bob, path, "/research/account", **fields).status_code == 403
    anonymous = app.test_client()
    refused = post(anonymous, path, "/login", **fields)
    assert refused.status_code == 302 and refused.headers["Location"].startswith("/login")
    assert admin.post(path, data=fields).status_code == 400
    assert (database.execute("SELECT * FROM researchers").fetchall(), events(database)) == before


def test_an_administrator_adds_a_researcher_who_sets_a_password_once(
    app: Flask, admin: FlaskClient, database: Database
) -> None:
    link = shown_link(post(admin, "/research/people", "/research/people", username="carol"))
    carol = app.test_client()
    assert log_in(carol, "carol", "").status_code == 400  # no password yet: nothing to give
    page = carol.get(link)
    assert page.status_code == 200 and "carol" in page.get_data(as_text=True)
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert page.headers["Cache-Control"] == "no-store"
    done = set_password(carol, link, NEW_PASSWORD)
    assert done.status_code == 302 and done.headers["Location"] == "/login"
    assert log_in(carol, "carol", NEW_PASSWORD).status_code == 302
    assert carol.get("/research/").status_code == 200
    assert carol.get("/research/people").status_code == 403  # a researcher, not an administrator
    assert app.test_client().get(link).status_code == 410  # used: gone
    assert set_password_again(app, link).status_code == 410
    assert events(database)[-2:] == [
        (ADMIN, "researcher added", "carol"),
        ("carol", "password set", "carol"),
    ]


def set_password_again(app: Flask, link: str) -> TestResponse:
    """A second use of the link, with a form token from elsewhere (the link's page is gone)."""
    client = app.test_client()
    token = csrf(client.get("/login").get_data(as_text=True))
    return client.post(link, data={"csrf_token": token, "password": "x" * 12, "again": "x" * 12})


def test_links_are_stored_only_as_hashes(app: Flask, admin: FlaskClient) -> None:
    link = shown_link(post(admin, "/research/people", "/research/people", username="carol"))
    token = link.rsplit("/", 1)[1]
    raw = database_bytes(app.config["DATABASE"])
    assert token.encode() not in raw
    assert accounts._token_hash(token).encode() in raw  # the hash is what is kept


def test_used_expired_and_unknown_links_get_the_same_page(
    app: Flask, admin: FlaskClient, clock: Clock
) -> None:
    used = shown_link(post(admin, "/research/people", "/research/people", username="carol"))
    assert set_password(app.test_client(), used, NEW_PASSWORD).status_code == 302
    expiring = shown_link(post(admin, "/research/people", "/research/people", username="dave"))
    clock.advance(PASSWORD_LINK_SECONDS - 60)
    assert app.test_client().get(expiring).status_code == 200  # still live the week it lasts
    clock.advance(61)
    paths = (used, expiring, "/set-password/made-up")
    pages = [app.test_client().get(path) for path in paths]
    assert {page.status_code for page in pages} == {410}
    # The same page but for its own address (in the language switcher's links).
    bodies = {
        page.get_data(as_text=True).replace(p, "PATH") for page, p in zip(pages, paths, strict=True)
    }
    assert len(bodies) == 1


def test_a_new_link_replaces_the_old_one(app: Flask, admin: FlaskClient) -> None:
    first = shown_link(post(admin, "/research/people", "/research/people", username="carol"))
    second = shown_link(act(admin, "/research/people/reset-password", "carol"))
    assert app.test_client().get(first).status_code == 410
    assert set_password(app.test_client(), second, NEW_PASSWORD).status_code == 302


@pytest.mark.parametrize(
    ("password", "again", "words"),
    [
        ("short pw", "short pw", "at least 10 characters"),
        (NEW_PASSWORD, NEW_PASSWORD + "!", "differ"),
    ],
)
def test_a_refused_new_password_leaves_the_link_live(
    app: Flask, admin: FlaskClient, password: str, again: str, words: str
) -> None:
    link = shown_link(post(admin, "/research/people", "/research/people", username="carol"))
    carol = app.test_client()
    refused = set_password(carol, link, password, again)
    assert refused.status_code == 400 and words in refused.get_data(as_text=True)
    assert set_password(carol, link, NEW_PASSWORD).status_code == 302


def test_deactivation_ends_every_session_and_refuses_logins_like_a_wrong_password(
    app: Flask, admin: FlaskClient, bob: FlaskClient, database: Database
) -> None:
    assert bob.get("/research/").status_code == 200
    done = act(admin, "/research/people/deactivate", OTHER)
    assert done.status_code == 302
    assert "bob is deactivated" in admin.get("/research/people").get_data(as_text=True)
    assert bob.get("/research/").status_code == 302  # the session already open ended
    assert sessions_of(database, OTHER) == 0  # deleted, not only refused
    refused = log_in(app.test_client(), OTHER)
    wrong = log_in(app.test_client(), ADMIN, "not the password")
    assert (refused.status_code, login_error(refused)) == (401, login_error(wrong))
    act(admin, "/research/people/reactivate", OTHER)
    assert log_in(app.test_client(), OTHER).status_code == 302
    assert events(database)[-2:] == [
        (ADMIN, "researcher deactivated", OTHER),
        (ADMIN, "researcher reactivated", OTHER),
    ]


def sessions_of(database: Database, username: str) -> int:
    return int(
        database.execute(
            "SELECT count(*) FROM researcher_sessions s JOIN researchers r "
            "ON r.id = s.researcher_id WHERE r.username = ?",
            [username],
        ).fetchone()[0]
    )


def test_a_session_of_an_inactive_account_is_refused_however_it_became_inactive(
    bob: FlaskClient, database: Database
) -> None:
    """Even with its session rows left in place (an operator's edit of the database)."""
    database.execute("UPDATE researchers SET active = 0 WHERE username = ?", [OTHER])
    assert sessions_of(database, OTHER) == 1
    assert bob.get("/research/").status_code == 302


def test_a_deactivated_login_costs_one_hash_like_any_other(
    admin: FlaskClient, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its password, right or wrong, is checked against the dummy hash: neither timing nor
    load tells that the account exists."""
    act(admin, "/research/people/deactivate", OTHER)
    checked: list[str] = []
    real_check = werkzeug.security.check_password_hash

    def counting_check(stored: str, password: str) -> bool:
        checked.append(stored)
        return real_check(stored, password)

    monkeypatch.setattr(accounts, "check_password_hash", counting_check)
    assert log_in(client, OTHER).status_code == 401
    assert checked == [accounts._dummy_hash("pbkdf2:sha256:1")]


def test_a_reset_ends_sessions_and_the_old_password(
    app: Flask, admin: FlaskClient, bob: FlaskClient, database: Database
) -> None:
    link = shown_link(act(admin, "/research/people/reset-password", OTHER))
    assert bob.get("/research/").status_code == 302
    assert log_in(app.test_client(), OTHER).status_code == 401
    assert set_password(app.test_client(), link, NEW_PASSWORD).status_code == 302
    assert log_in(app.test_client(), OTHER, NEW_PASSWORD).status_code == 302
    assert (ADMIN, "password reset", OTHER) in events(database)


def test_administrators_are_made_and_unmade(
    admin: FlaskClient, bob: FlaskClient, database: Database
) -> None:
    assert "/research/people" not in bob.get("/research/").get_data(as_text=True)
    assert act(admin, "/research/people/make-admin", OTHER).status_code == 302
    assert bob.get("/research/people").status_code == 200  # at once, in the same session
    assert 'href="/research/people"' in bob.get("/research/").get_data(as_text=True)
    assert act(bob, "/research/people/unmake-admin", ADMIN).status_code == 302
    assert admin.get("/research/people").status_code == 403
    assert events(database)[-2:] == [
        (ADMIN, "administrator made", OTHER),
        (OTHER, "administrator unmade", ADMIN),
    ]


def test_the_last_active_administrator_stays_one(
    admin: FlaskClient, bob: FlaskClient, database: Database
) -> None:
    refused = act(admin, "/research/people/unmake-admin", ADMIN)
    assert refused.status_code == 400
    assert "ada is the last active administrator" in refused.get_data(as_text=True)
    act(admin, "/research/people/make-admin", OTHER)
    act(admin, "/research/people/deactivate", OTHER)  # bob: an administrator, not active
    assert act(admin, "/research/people/unmake-admin", ADMIN).status_code == 400
    assert database.execute(
        "SELECT role FROM researchers WHERE username = ?", [ADMIN]
    ).fetchone() == ("admin",)


@pytest.mark.parametrize("path", ["/research/people/deactivate", "/research/people/reset-password"])
def test_an_administrator_cannot_lock_themselves_out(admin: FlaskClient, path: str) -> None:
    refused = act(admin, path, ADMIN)
    assert refused.status_code == 400
    assert admin.get("/research/people").status_code == 200


def test_adding_refuses_bad_and_taken_usernames(admin: FlaskClient) -> None:
    for username, words in [(OTHER, "already a researcher named bob"), ("a b", "letters, digits")]:
        refused = post(admin, "/research/people", "/research/people", username=username)
        assert refused.status_code == 400 and words in refused.get_data(as_text=True)


def test_an_unknown_account_is_a_404(admin: FlaskClient) -> None:
    assert admin.get("/research/people/deactivate?username=ghost").status_code == 404
    refused = post(admin, "/research/people/deactivate", "/research/people", username="ghost")
    assert refused.status_code == 404


def change_password(client: FlaskClient, current: str, new: str = NEW_PASSWORD) -> TestResponse:
    return post(
        client, "/research/account", "/research/account", current=current, password=new, again=new
    )


def test_changing_ones_password_ends_the_other_sessions_and_keeps_this_one(
    app: Flask, admin: FlaskClient, bob: FlaskClient, database: Database
) -> None:
    elsewhere = app.test_client()
    assert log_in(elsewhere, OTHER).status_code == 302
    done = change_password(bob, PASSWORD)
    assert done.status_code == 302
    page = bob.get("/research/account")
    assert page.status_code == 200 and "logged out everywhere else" in page.get_data(as_text=True)
    assert elsewhere.get("/research/").status_code == 302
    assert admin.get("/research/").status_code == 200  # another account's session stays
    assert log_in(app.test_client(), OTHER).status_code == 401
    assert log_in(app.test_client(), OTHER, NEW_PASSWORD).status_code == 302
    assert events(database)[-1] == (OTHER, "password changed", OTHER)


def test_the_current_password_is_required_and_guessing_it_is_throttled(
    bob: FlaskClient, database: Database
) -> None:
    statuses = [change_password(bob, "not my password").status_code for _ in range(5)]
    assert statuses == [400, 400, 400, 400, 429]
    assert "Too many failed logins" in change_password(bob, PASSWORD).get_data(as_text=True)
    assert bob.get("/research/").status_code == 200  # still logged in, password unchanged
    assert ("bob", "password changed", "bob") not in events(database)


def test_the_nav_leads_to_the_account_and_for_administrators_to_people(
    admin: FlaskClient, bob: FlaskClient
) -> None:
    for client, people in ((admin, True), (bob, False)):
        page = client.get("/research/").get_data(as_text=True)
        assert 'href="/research/account"' in page
        assert ('href="/research/people"' in page) is people


def test_recent_events_are_on_the_people_page(admin: FlaskClient) -> None:
    act(admin, "/research/people/deactivate", OTHER)
    page = admin.get("/research/people").get_data(as_text=True)
    assert re.search(
        r"<td[^>]*>ada</td>\s*<td[^>]*>researcher deactivated</td>\s*<td[^>]*>bob</td>", page
    )


def test_set_password_links_are_rate_limited(database_url: str) -> None:
    app = create_app(
        {
            "DATABASE": database_url,
            "SECRET_KEY": "k",
            "RATE_LIMITS": True,
            "LOGIN_RATE_LIMIT": "3 per minute",
        }
    )
    client = app.test_client()
    statuses = [client.get(f"/set-password/guess-{i}").status_code for i in range(4)]
    assert statuses == [410, 410, 410, 429]


def test_a_deleted_survey_is_on_the_people_page_in_words(
    app: Flask, admin: FlaskClient, runner: FlaskCliRunner
) -> None:
    result = runner.invoke(args=["delete-survey", SLUG, "--yes"])
    assert result.exit_code == 0, result.output
    page = admin.get("/research/people?lang=ko").get_data(as_text=True)
    assert re.search(r"<td[^>]*>command line</td>\s*<td[^>]*>설문 삭제</td>", page)
