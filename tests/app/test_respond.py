"""The respondent's pages through the test client, checked against the real database."""

from __future__ import annotations

import json
import math
import re

import pytest
from flask.testing import FlaskClient
from werkzeug.datastructures import MultiDict

from survey_app.storage.backends import Database
from tests.support.examples import KEYS, MIXED_SLUG, SLUG
from tests.support.respondents import answers, fresh_form, mixed_form, shown_answers
from tests.support.stored import column_names, rows, table_names, tally_cells

STORED_COLUMNS = {
    "id",
    "survey_id",
    "submission_id",
    "answered_on",
    "design",
    "answers",
}


def submit(client: FlaskClient, **fields: str):
    return client.post(f"/s/{SLUG}", data=fields)


def response_rows(database: Database) -> list[dict]:
    return rows(database, "responses")


def test_index_lists_the_survey(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    assert f'href="/s/{SLUG}"' in page and "Campus health survey" in page


def test_form_explains_the_protection_before_answering(client: FlaskClient) -> None:
    page = client.get(f"/s/{SLUG}").get_data(as_text=True)
    assert page.index("How your answers are protected") < page.index('type="radio"')
    # ε per answer and the total for three questions, basic composition, rounded up.
    assert "ε = 1.099." in page and "ε = 3.296 in total" in page  # ln 3 = 1.0986…
    for key in KEYS:
        assert page.count(f'name="{key}"') == 2  # one radio group per question: yes and no


def test_form_has_no_inline_script(client: FlaskClient) -> None:
    page = client.get(f"/s/{SLUG}").get_data(as_text=True)
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []
    assert "style=" not in page


def test_unknown_survey_is_404(client: FlaskClient) -> None:
    assert client.get("/s/no-such-survey").status_code == 404
    fields = fresh_form(client)
    assert client.post("/s/no-such-survey", data={**fields, **answers()}).status_code == 404


def test_client_randomized_answers_are_stored_as_sent(
    client: FlaskClient, database: Database
) -> None:
    sent = {"cheated": "y", "drugs": "n", "skipped_meals": "y"}
    response = submit(client, **fresh_form(client), **sent, randomized="client")
    assert response.status_code == 200
    [row] = response_rows(database)
    assert json.loads(row["answers"]) == {"cheated": 1, "drugs": 0, "skipped_meals": 1}
    page = response.get_data(as_text=True)
    # Shows exactly what was stored.
    assert shown_answers(page) == {"cheated": "yes", "drugs": "no", "skipped_meals": "yes"}


def test_stored_row_holds_only_the_allowed_fields(client: FlaskClient, database: Database) -> None:
    fields = fresh_form(client)
    submit(client, **fields, **answers())
    [row] = response_rows(database)
    assert set(row) == STORED_COLUMNS
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["answered_on"])  # the day, no time
    # Only the form token's random part: its issue time is checked, never stored.
    assert row["submission_id"] == fields["submission_id"].split(".")[0]
    # The row names its design; the design holds each question's exact fair coins.
    [design] = rows(database, "designs")
    assert row["design"] == design["fingerprint"] == fields["design"]
    fair = {
        "mechanism": "two_coin_randomized_response",
        "truth_probability": "1/2",
        "forced_yes_probability": "1/2",
    }
    assert json.loads(design["questions"]) == dict.fromkeys(KEYS, fair)
    assert set(json.loads(row["answers"])) == set(KEYS)
    assert set(json.loads(row["answers"]).values()) <= {0, 1}


def test_database_schema_has_no_identifying_columns(database: Database) -> None:
    columns = {c for table in table_names(database) for c in column_names(database, table)}
    assert STORED_COLUMNS <= columns  # the catalogue was read
    for forbidden in ("ip", "user_agent", "remote_addr", "created_at", "timestamp"):
        assert forbidden not in columns


@pytest.mark.slow
def test_server_randomizes_when_javascript_is_off(app, database: Database) -> None:
    """All-"yes" answers through the server path report "yes" 3/4 of the time.

    200 respondents x 3 questions = 600 coins; 5 standard errors is ±0.088, so storing
    the truth (rate 1) or never the truth (rate 1/2), each 0.25 away, fails while fair
    coins cannot flake.
    """
    respondents = 200
    for _ in range(respondents):
        client = app.test_client()
        assert submit(client, **fresh_form(client), **answers("y")).status_code == 200
    reported = [v for row in response_rows(database) for v in json.loads(row["answers"]).values()]
    assert len(reported) == respondents * len(KEYS)
    rate = sum(reported) / len(reported)
    standard_error = math.sqrt(0.75 * 0.25 / len(reported))
    assert abs(rate - 0.75) < 5 * standard_error


def test_retried_post_is_stored_once(app, database: Database) -> None:
    client = app.test_client()
    fields = fresh_form(client)
    first = submit(client, **fields, **answers())
    again = submit(client, **fields, **answers())
    # A retry from a browser that never got the first reply (no cookie) is the same response.
    other_browser = app.test_client()
    other_fields = fresh_form(other_browser)
    retry = submit(
        other_browser,
        csrf_token=other_fields["csrf_token"],
        submission_id=fields["submission_id"],
        **answers(),
    )
    assert first.status_code == again.status_code == retry.status_code == 200
    assert len(response_rows(database)) == 1
    page = shown_answers(first.get_data(as_text=True))
    assert page and page == shown_answers(again.get_data(as_text=True))
    assert page == shown_answers(retry.get_data(as_text=True))


def test_second_response_from_the_same_browser_is_refused(
    client: FlaskClient, database: Database
) -> None:
    fields = fresh_form(client)
    submit(client, **fields, **answers())
    assert "already answered" in client.get(f"/s/{SLUG}").get_data(as_text=True)
    # The same session's CSRF token, a new form from elsewhere: a deliberate second answer.
    new_form = fresh_form(client.application.test_client())["submission_id"]
    response = submit(client, csrf_token=fields["csrf_token"], submission_id=new_form, **answers())
    assert response.status_code == 409
    assert "nothing" in response.get_data(as_text=True)
    assert len(response_rows(database)) == 1


def test_counters_follow_the_responses(app, database: Database) -> None:
    for _ in range(20):
        client = app.test_client()
        submit(client, **fresh_form(client), **answers(), randomized="client")
    client = app.test_client()
    submit(client, **fresh_form(client), **answers("n"), randomized="client")
    assert tally_cells(database) == dict.fromkeys(KEYS, {"n": 21, "yes": 20})


BAD_SUBMISSIONS = {
    "missing answer": lambda f: {**f, "cheated": "y", "drugs": "n"},
    "invalid answer": lambda f: {**f, **answers(), "cheated": "maybe"},
    "missing csrf token": lambda f: {"submission_id": f["submission_id"], **answers()},
    "wrong csrf token": lambda f: {**f, "csrf_token": "forged", **answers()},
    "unknown field": lambda f: {**f, **answers(), "email": "a@example.org"},
    "missing submission id": lambda f: {"csrf_token": f["csrf_token"], **answers()},
    "malformed submission id": lambda f: {**f, **answers(), "submission_id": "x"},
    "bad randomized flag": lambda f: {**f, **answers(), "randomized": "server"},
}


@pytest.mark.parametrize("make_body", BAD_SUBMISSIONS.values(), ids=BAD_SUBMISSIONS.keys())
def test_bad_submissions_are_refused_and_store_nothing(
    client: FlaskClient, database: Database, make_body
) -> None:
    response = submit(client, **make_body(fresh_form(client)))
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "Nothing was stored" in page
    assert 'id="survey-form"' in page  # the form is shown again to answer
    assert "checked" not in page  # the true answers are not echoed back
    assert response_rows(database) == []
    assert tally_cells(database) == dict.fromkeys(KEYS, {})


def test_a_field_sent_twice_is_refused(client: FlaskClient, database: Database) -> None:
    fields = fresh_form(client)
    body = MultiDict([*fields.items(), *answers().items(), ("cheated", "n")])
    response = client.post(f"/s/{SLUG}", data=body)
    assert response.status_code == 400
    assert "more than once" in response.get_data(as_text=True)
    assert response_rows(database) == []


def test_oversized_body_is_refused(client: FlaskClient, database: Database) -> None:
    fields = fresh_form(client)
    response = submit(client, **fields, **answers(), padding="x" * 100_000)
    assert response.status_code == 400
    assert "larger" in response.get_data(as_text=True)
    assert response_rows(database) == []


def test_a_skipped_question_is_shown_as_stored_unanswered(mixed_app, database) -> None:
    """A skip is stored (as null, "no answer"), so the page says so, not "nothing stored"."""
    client = mixed_app.test_client()
    answered = {"year": "2", "cheated": "y", "skipped_meals": "n", "substance": "1", "drinks": "7"}
    response = client.post(f"/s/{MIXED_SLUG}", data={**mixed_form(client), **answered})
    assert response.status_code == 200
    [row] = response_rows(database)
    assert json.loads(row["answers"])["stress"] is None  # stress: optional, skipped
    said = "You skipped this question: it was stored as unanswered."
    assert shown_answers(response.get_data(as_text=True))["stress"] == said
    assert "nothing stored" not in response.get_data(as_text=True)


def test_healthz(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.get_data(as_text=True) == "ok"


def test_security_headers(client: FlaskClient) -> None:
    headers = client.get(f"/s/{SLUG}").headers
    policy = headers["Content-Security-Policy"]
    assert "unsafe-inline" not in policy and "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store"
