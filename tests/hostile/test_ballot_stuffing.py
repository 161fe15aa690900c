"""Ballot stuffing: one form, one response; a burst of responses shows on the dashboard.

The attack these pin down: a script fetched the form once, kept the cookie and the CSRF
token it got before answering, and sent ~480 responses a minute with ids it made up.
Now each response needs a form token the server issued for that survey, unexpired and
unused; and nothing about it finer than the day reaches the database.
"""

from __future__ import annotations

import re
import secrets
import time

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.definitions import load_definition
from survey_app.storage.backends import Database
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web import form_tokens
from survey_app.web.bursts import (
    EXTENSION_KEY,
    FACTOR,
    MIN_BURST,
    WITHOUT_HISTORY,
    Burst,
    BurstMonitor,
)
from survey_app.web.database_session import get_db
from survey_app.web.form_tokens import issue_form_token
from tests.support import stored as auditor
from tests.support.examples import KEYS, MIXED, SLUG
from tests.support.respondents import answers, fresh_form, mixed_form, shown_answers
from tests.support.stored import tally_cells

NOT_ISSUED = "not issued by this site"


def rows(database: Database) -> list[dict]:
    return auditor.rows(database, "responses")


def replaying(app: Flask, cookie: str) -> FlaskClient:
    """A client that sends the session cookie a browser had before it answered."""
    client = app.test_client()
    client.set_cookie("session", cookie)
    return client


def test_replayed_cookie_and_csrf_token_with_made_up_ids_store_one_response(
    app: Flask, client: FlaskClient, database: Database
) -> None:
    form = fresh_form(client)
    cookie = client.get_cookie("session")
    assert cookie is not None
    first = client.post(f"/s/{SLUG}", data={**form, **answers()})
    assert first.status_code == 200
    for made_up in [secrets.token_urlsafe(16) for _ in range(20)] + ["A" * 22, "x" * 64]:
        stuffer = replaying(app, cookie.value)
        response = stuffer.post(
            f"/s/{SLUG}", data={**form, "submission_id": made_up, **answers("n")}
        )
        assert response.status_code == 400
        assert NOT_ISSUED in response.get_data(as_text=True)
    assert len(rows(database)) == 1
    assert {key: cells["n"] for key, cells in tally_cells(database).items()} == dict.fromkeys(
        KEYS, 1
    )


def test_a_replayed_form_token_is_answered_alike_and_stored_once(
    app: Flask, client: FlaskClient, database: Database
) -> None:
    """The retry rule still holds: the same token again (with any answers, any cookie) gets
    the page of the response stored under it, and nothing new is stored."""
    form = fresh_form(client)
    cookie = client.get_cookie("session")
    assert cookie is not None
    first = client.post(f"/s/{SLUG}", data={**form, **answers("y")})
    pages = [first]
    for value in ("y", "n", "n"):
        pages.append(
            replaying(app, cookie.value).post(f"/s/{SLUG}", data={**form, **answers(value)})
        )
    assert [page.status_code for page in pages] == [200] * 4
    shown = [shown_answers(page.get_data(as_text=True)) for page in pages]
    assert shown[0] and all(cells == shown[0] for cells in shown)
    assert len(rows(database)) == 1


FORGERIES = {
    "made up in the old shape": lambda token, key: secrets.token_urlsafe(16),
    "new random part": lambda token, key: secrets.token_urlsafe(16) + token[22:],
    "altered signature": lambda token, key: (
        token[:-10] + ("A" if token[-10] != "A" else "B") + token[-9:]
    ),
    "another key": lambda token, key: issue_form_token(["not-the-key"], SLUG),
    "another survey": lambda token, key: issue_form_token([key], "student-life"),
    "time moved": lambda token, key: token.replace(token.split(".")[1], "AAAAAA"),
}


@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_forged_form_token_is_refused(
    app: Flask, client: FlaskClient, database: Database, forge
) -> None:
    with app.app_context():
        store_mixed(app)
    form = fresh_form(client)
    forged = forge(form["submission_id"], app.secret_key)
    assert forged != form["submission_id"]
    response = client.post(f"/s/{SLUG}", data={**form, "submission_id": forged, **answers()})
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert NOT_ISSUED in page and "Nothing was stored" in page
    assert 'id="survey-form"' in page and "checked" not in page  # the form again, empty
    assert rows(database) == []
    # The genuine token still works afterwards.
    assert client.post(f"/s/{SLUG}", data={**form, **answers()}).status_code == 200


def store_mixed(app: Flask) -> None:
    store_survey(get_db(), load_definition(MIXED))


def test_a_token_for_one_survey_cannot_answer_another(
    app: Flask, client: FlaskClient, database: Database
) -> None:
    with app.app_context():
        store_mixed(app)
    mixed = mixed_form(client)
    form = fresh_form(client)
    response = client.post(
        f"/s/{SLUG}", data={**form, "submission_id": mixed["submission_id"], **answers()}
    )
    assert response.status_code == 400 and NOT_ISSUED in response.get_data(as_text=True)
    assert rows(database) == []


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The form tokens' clock, which the test moves: [seconds since the epoch]."""
    now = [time.time()]
    monkeypatch.setattr(form_tokens, "now", lambda: now[0])
    return now


def test_an_expired_form_is_refused_and_a_new_one_offered(
    app: Flask, database: Database, clock: list[float]
) -> None:
    browser = app.test_client()
    form = fresh_form(browser)
    clock[0] += 24 * 3600 + 1  # the default lifetime, FORM_MAX_AGE_HOURS = 24, and a second
    # A fresh CSRF token, so that only the form token is old (a stockpiled form).
    csrf = fresh_form(browser)["csrf_token"]
    response = browser.post(f"/s/{SLUG}", data={**form, "csrf_token": csrf, **answers()})
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "expired" in page and "Nothing was stored" in page and "checked" not in page
    assert rows(database) == []
    # The page offers a new form, which works.
    again = re.search(r'name="submission_id" value="([^"]+)"', page)
    assert again and again.group(1) != form["submission_id"]
    response = browser.post(
        f"/s/{SLUG}",
        data={**form, "csrf_token": csrf, "submission_id": again.group(1), **answers()},
    )
    assert response.status_code == 200
    assert len(rows(database)) == 1


def test_a_form_within_its_lifetime_is_accepted(
    app: Flask, database: Database, clock: list[float]
) -> None:
    browser = app.test_client()
    form = fresh_form(browser)
    clock[0] += 24 * 3600 - 60
    assert browser.post(f"/s/{SLUG}", data={**form, **answers()}).status_code == 200
    assert len(rows(database)) == 1


def test_the_lifetime_is_a_setting(app: Flask, database: Database, clock) -> None:
    app.config["FORM_MAX_AGE_HOURS"] = 1
    browser = app.test_client()
    form = fresh_form(browser)
    clock[0] += 3600 + 1
    response = browser.post(f"/s/{SLUG}", data={**form, **answers()})
    assert response.status_code == 400
    assert "more than an hour ago" in response.get_data(as_text=True)
    assert rows(database) == []


def test_a_form_from_the_future_is_refused(
    app: Flask, database: Database, clock: list[float]
) -> None:
    """Beyond a few minutes of clock skew, a token dated ahead is not one this app issued
    in the ordinary way: refused rather than trusted for a day longer."""
    browser = app.test_client()
    clock[0] += 3600
    form = fresh_form(browser)
    clock[0] -= 3600
    assert browser.post(f"/s/{SLUG}", data={**form, **answers()}).status_code == 400
    assert rows(database) == []


def test_nothing_finer_than_the_day_is_stored(
    app: Flask, client: FlaskClient, database: Database
) -> None:
    form = fresh_form(client)
    token = form["submission_id"]
    random_part, issued_at, _signature = token.split(".")
    assert client.post(f"/s/{SLUG}", data={**form, **answers()}).status_code == 200
    [row] = rows(database)
    assert set(row) == {"id", "survey_id", "submission_id", "answered_on", "design", "answers"}
    assert row["submission_id"] == random_part  # 128 random bits, drawn apart from the time
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["answered_on"])
    # Neither the token nor its issue time is anywhere in the database, nor a table of
    # counts per minute (bursts are counted in memory).
    tables = auditor.table_names(database)
    assert {"responses", "surveys", "tallies"} <= set(tables)  # the catalogue was read
    for table in tables:
        for stored in auditor.rows(database, table):
            for value in stored.values():
                assert issued_at not in str(value) and token not in str(value), table
    assert not [t for t in tables if "burst" in t or "minute" in t]


# --------------------------------------------------------------------------------------
# Bursts on the dashboard.


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def burst_clock(app: Flask) -> FakeClock:
    """The app's burst monitor on a clock the test moves."""
    fake = FakeClock()
    app.extensions[EXTENSION_KEY] = BurstMonitor(clock=fake)
    return fake


def respond(app: Flask, times: int) -> None:
    for _ in range(times):
        browser = app.test_client()
        response = browser.post(f"/s/{SLUG}", data={**fresh_form(browser), **answers()})
        assert response.status_code == 200


@pytest.mark.slow
def test_the_dashboard_flags_a_burst(app: Flask, logged_in: FlaskClient, burst_clock) -> None:
    for minute in range(30):  # a usual day: a response or two a minute
        respond(app, 1 + minute % 2)
        burst_clock.now += 60
    dashboard = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert 'id="burst-warning"' not in dashboard
    respond(app, 100)  # then a script, within one minute
    burst_clock.now += 60
    respond(app, 1)
    dashboard = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert 'id="burst-warning"' in dashboard
    warning = dashboard[dashboard.index('id="burst-warning"') :]
    assert "100 responses arrived within a single minute" in " ".join(warning.split())
    assert "invitation" in warning


@pytest.mark.slow
def test_the_dashboard_shows_no_burst_for_steady_traffic(
    app: Flask, logged_in: FlaskClient, burst_clock
) -> None:
    """A busy survey is not a burst: 25 a minute, every minute, is its usual."""
    for _minute in range(4):
        respond(app, 25)
        burst_clock.now += 60
    dashboard = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert 'id="burst-warning"' not in dashboard


def test_burst_rule() -> None:
    clock = FakeClock()
    monitor = BurstMonitor(clock=clock)
    for _minute in range(60):
        for _ in range(3):
            monitor.record(1)
        clock.now += 60
    assert monitor.largest_burst(1) is None
    for _ in range(FACTOR * 3 - 1):  # just under ten times the usual 3 a minute
        monitor.record(1)
    assert monitor.largest_burst(1) is None
    monitor.record(1)
    burst = monitor.largest_burst(1)
    assert burst is not None and (burst.count, burst.usual) == (FACTOR * 3, 3.0)
    assert monitor.largest_burst(2) is None  # per survey
    # A fresh survey has no usual yet: WITHOUT_HISTORY in a minute is a burst.
    for _ in range(WITHOUT_HISTORY - 1):
        monitor.record(2)
    assert monitor.largest_burst(2) is None
    monitor.record(2)
    assert monitor.largest_burst(2) is not None
    # A quiet survey (one a minute): never fewer than MIN_BURST in the minute.
    for _minute in range(10):
        monitor.record(3)
        clock.now += 60
    for _ in range(MIN_BURST - 1):
        monitor.record(3)
    assert monitor.largest_burst(3) is None
    monitor.record(3)
    assert monitor.largest_burst(3) == Burst(count=MIN_BURST, usual=1.0)
    # An earlier burst does not raise the usual rate (the median, not the mean).
    for minute in range(22):
        for _ in range(200 if minute == 10 else 1):
            monitor.record(4)
        clock.now += 60
    for _ in range(MIN_BURST):
        monitor.record(4)
    assert monitor.bursts(4) == [Burst(200, 1.0), Burst(MIN_BURST, 1.0)]
    # Forgotten after a day.
    clock.now += 24 * 3600 + 60
    assert monitor.largest_burst(1) is None and monitor.largest_burst(2) is None


@pytest.mark.slow
def test_the_monitor_counts_stored_responses_only(
    app: Flask, client: FlaskClient, burst_clock
) -> None:
    """Retries and refused forms are not responses: on a survey without a usual rate yet,
    WITHOUT_HISTORY of them in a minute would otherwise be flagged."""
    form = fresh_form(client)
    for _ in range(WITHOUT_HISTORY):
        client.post(f"/s/{SLUG}", data={**form, **answers()})  # one stored, then retries
        client.post(f"/s/{SLUG}", data={**form, "submission_id": "A" * 22, **answers()})
    with app.app_context():
        survey = get_survey(get_db(), SLUG)
    assert survey is not None
    assert app.extensions[EXTENSION_KEY].largest_burst(survey.id) is None
