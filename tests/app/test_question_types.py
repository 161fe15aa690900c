"""Every question type through the respondent's pages, checked against the real SQLite file.

The mixed example survey asks a plain covariate (year), yes/no at ε 0.5 and 2, a 5-option
choice (GRR at ε = 1), a 0-50 number (Duchi's bit at ε = 1) and an optional yes/no, behind
a consent step.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from fractions import Fraction

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.storage import backends
from survey_app.storage.backends import Database
from tests.support.examples import MIXED_SLUG
from tests.support.respondents import hidden_fields, mixed_form, shown_answers
from tests.support.stored import tally_cells

# A number question whose squares once passed what 64-bit tallies hold.
WIDE = (
    "slug: wide\ntitle: Wide\nquestions:\n  - {key: income, text: Income, type: number, "
    "min: 0, max: 1000000, mechanism: laplace, epsilon: 0.05}\n"
)

TRUE_ANSWERS = {
    "year": "2",
    "cheated": "y",
    "skipped_meals": "n",
    "substance": "1",
    "drinks": "7",
}


def submit(client: FlaskClient, fields: dict[str, str]):
    return client.post(f"/s/{MIXED_SLUG}", data=fields)


def stored_answers(database: Database) -> list[dict[str, object]]:
    return [
        json.loads(row["answers"])
        for row in database.query("SELECT answers FROM responses ORDER BY id")
    ]


def test_consent_comes_before_the_questions_and_stores_nothing(
    mixed_app: Flask, database: Database
) -> None:
    client = mixed_app.test_client()
    first = client.get(f"/s/{MIXED_SLUG}")
    page = first.get_data(as_text=True)
    assert "Before you start" in page and "wellbeing-study@example.edu" in page
    assert 'name="agree" value="yes"' in page and 'type="radio"' not in page
    assert "Set-Cookie" not in first.headers  # the consent step leaves no trace
    form = client.get(f"/s/{MIXED_SLUG}?agree=yes")
    assert 'name="agreed" value="yes"' in form.get_data(as_text=True)
    assert stored_answers(database) == []


def test_the_page_states_each_questions_epsilon_and_marks_plain_ones(mixed_app: Flask) -> None:
    page = mixed_app.test_client().get(f"/s/{MIXED_SLUG}?agree=yes").get_data(as_text=True)
    protection = page.index("How your answers are protected")
    assert protection < page.index('type="radio"')
    assert "Not every question is randomized" in page[protection : page.index("<form")]
    assert "Not randomized.</strong> Stored exactly as you give it" in page
    assert "Randomized, ε = 0.50." in page and "Randomized, ε = 2.00." in page
    # ε = 0.5 + 2 + 1 + 1 + ln 3 for the five randomized questions: 5.5986…, shown rounded
    # up, and e^5.5986… = 270.05 likewise.
    assert "All 5 randomized questions together cost ε = 5.599" in page
    assert "at most 271 times as likely" in page
    assert "(optional)" in page


def test_server_randomizes_every_type_and_stores_plain_answers_as_given(
    mixed_app: Flask, database: Database
) -> None:
    client = mixed_app.test_client()
    response = submit(client, {**mixed_form(client), **TRUE_ANSWERS})
    assert response.status_code == 200
    [stored] = stored_answers(database)
    assert stored["year"] == 2  # plain: exactly as given
    assert stored["stress"] is None  # skipped: missing, never randomized into an answer
    assert stored["cheated"] in (0, 1) and stored["skipped_meals"] in (0, 1)
    assert stored["substance"] in range(5)
    assert stored["drinks"] in (0, 1)  # Duchi's bit
    cells = tally_cells(database)
    assert cells["year"] == {"n": 1, "2": 1}
    assert cells["stress"] == {}  # n is per question: a skip counts nowhere
    assert cells["drinks"]["n"] == 1 and set(cells["drinks"]) <= {"n", "sum", "sum_squares"}
    page = response.get_data(as_text=True)
    shown = shown_answers(page)
    assert shown["stress"] == "You skipped this question: it was stored as unanswered."
    assert shown["year"] == "3"  # the option's text


@pytest.mark.slow
def test_server_coins_follow_each_mechanism(mixed_app: Flask, database: Database) -> None:
    """The same true answers 400 times through the server: each question's reports follow
    its own mechanism, so a path that stored any true answer (or used another question's
    coins) fails.

    cheated (ε 0.5, truth "yes"): P(yes) = 1/2 + t/2 with t = tanh(1/4) ≈ 0.245, ≈ 0.622;
    substance (GRR, k = 5, ε 1, truth 1): P(1) = e/(e + 4) ≈ 0.405;
    drinks (Duchi, 0-50, ε 1, truth 7): P(1) = 1/2 + r(14 - 50)/100 ≈ 0.334, r = tanh(1/2).
    400 draws: 5 standard errors are at most ±0.125; storing the truth gives 1, 1 and 7.
    """
    respondents = 400
    for _ in range(respondents):
        client = mixed_app.test_client()
        assert submit(client, {**mixed_form(client), **TRUE_ANSWERS}).status_code == 200
    rows = stored_answers(database)
    r = math.tanh(0.5)
    expected = {
        "cheated": (lambda v: v == 1, 0.5 + math.tanh(0.25) / 2),
        "skipped_meals": (lambda v: v == 1, 0.5 - math.tanh(1) / 2),
        "substance": (lambda v: v == 1, math.e / (math.e + 4)),
        "drinks": (lambda v: v == 1, 0.5 + r * (14 - 50) / 100),
    }
    for key, (event, probability) in expected.items():
        share = sum(event(row[key]) for row in rows) / respondents
        bound = 5 * math.sqrt(probability * (1 - probability) / respondents)
        assert abs(share - probability) < bound, (key, share, probability)
    assert Counter(row["year"] for row in rows) == {2: respondents}


def test_browser_reports_are_stored_as_sent(mixed_app: Flask, database: Database) -> None:
    client = mixed_app.test_client()
    reports = {
        "year": "0",
        "cheated": "n",
        "skipped_meals": "y",
        "substance": "4",
        "drinks": "1",
        "stress": "y",
        "randomized": "client",
    }
    assert submit(client, {**mixed_form(client), **reports}).status_code == 200
    assert stored_answers(database) == [
        {"year": 0, "cheated": 0, "skipped_meals": 1, "substance": 4, "drinks": 1, "stress": 1}
    ]


def _bad(change: dict[str, str], drop: str = "") -> dict[str, str]:
    return {**{k: v for k, v in TRUE_ANSWERS.items() if k != drop}, **change}


BAD = {
    "choice not among the options": (_bad({"substance": "5"}), "Not a valid choice"),
    "choice given as text": (_bad({"substance": "Cannabis"}), "Not a valid choice"),
    "number out of range": (_bad({"drinks": "51"}), "from 0 to 50"),
    "negative number": (_bad({"drinks": "-1"}), "from 0 to 50"),
    "number not whole": (_bad({"drinks": "2.5"}), "integer"),
    "required question skipped": (_bad({}, drop="cheated"), "Please answer this question"),
    "plain covariate skipped": (_bad({}, drop="year"), "Please answer this question"),
    "browser Duchi report not a bit": (
        _bad({"drinks": "7", "randomized": "client"}),
        "from 0 to 1",
    ),
}


@pytest.mark.parametrize(("fields", "message"), BAD.values(), ids=BAD.keys())
def test_bad_answers_are_refused_and_store_nothing(
    mixed_app: Flask, database: Database, fields: dict[str, str], message: str
) -> None:
    client = mixed_app.test_client()
    response = submit(client, {**mixed_form(client), **fields})
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "Nothing was stored" in page and message in page
    assert 'id="survey-form"' in page and "checked" not in page and 'value="7"' not in page
    assert stored_answers(database) == []
    assert all(cells == {} for cells in tally_cells(database).values())


def test_without_agreeing_nothing_is_stored(mixed_app: Flask, database: Database) -> None:
    client = mixed_app.test_client()
    fields = {k: v for k, v in mixed_form(client).items() if k != "agreed"}
    response = submit(client, {**fields, **TRUE_ANSWERS})
    assert response.status_code == 400
    assert "agree" in response.get_data(as_text=True)
    assert stored_answers(database) == []


@pytest.mark.parametrize("design", ["0123456789abcdef", ""])
def test_browser_reports_made_with_other_parameters_are_refused(
    mixed_app: Flask, database: Database, design: str
) -> None:
    client = mixed_app.test_client()
    fields = {**mixed_form(client), "design": design}
    response = submit(client, {**fields, **_bad({"drinks": "1", "randomized": "client"})})
    assert response.status_code == 400
    assert "privacy settings changed" in response.get_data(as_text=True)
    assert stored_answers(database) == []


def test_unary_encoding_reports_are_bit_strings(app: Flask) -> None:
    """A choice question forced to OUE takes k bits from the browser, stores them as text
    and counts every set bit."""
    from survey_app.domain.definitions import parse_definition
    from survey_app.storage.surveys import store_survey
    from survey_app.web.database_session import get_db

    definition = parse_definition(
        "slug: oue\ntitle: OUE\nquestions:\n  - {key: pick, text: Pick one, type: choice, "
        "options: [a, b, c, d], mechanism: oue, epsilon: 2}\n"
    )
    with app.app_context():
        survey = store_survey(get_db(), definition)
        params = survey.questions[0].mechanism.parameters()
    assert params["mechanism"] == "optimized_unary_encoding"
    assert Fraction(str(params["flip_to_one_probability"])) <= 1 / (math.exp(2) + 1) + 1e-15
    for bits, status in [("0110", 200), ("011", 400), ("0120", 400), ("2", 400)]:
        client = app.test_client()
        form = client.get("/s/oue").get_data(as_text=True)
        sent = {**hidden_fields(form), "pick": bits, "randomized": "client"}
        assert client.post("/s/oue", data=sent).status_code == status, bits
    database = backends.connect(app.config["DATABASE"])
    rows = list(database.query("SELECT answers FROM responses"))
    assert [json.loads(row["answers"]) for row in rows] == [{"pick": "0110"}]
    assert tally_cells(database)["pick"] == {"n": 1, "1": 1, "2": 1}


def test_a_stored_questions_mechanism_cannot_change(mixed_app: Flask, database: Database) -> None:
    """Responses name their design by fingerprint; the parameters behind it are fixed."""
    refusals = (sqlite3.IntegrityError, psycopg.errors.RaiseException)
    with pytest.raises(refusals, match="fixed once stored"):
        database.execute("UPDATE questions SET parameters = '{}' WHERE key = 'cheated'")


def test_laplace_reports_are_bounded_so_their_squares_fit_a_tally(app: Flask) -> None:
    """A forged report of 10^15 once reached the tallies as a square no 64-bit integer
    holds (a 500); reports are now refused past the honest range, whose square fits."""
    from survey_app.domain.answers import padded_number
    from survey_app.domain.definitions import parse_definition
    from survey_app.domain.designs import question_mechanism
    from survey_app.storage.surveys import store_survey
    from survey_app.web.database_session import get_db

    definition = parse_definition(WIDE)
    low, high = question_mechanism(definition.questions[0]).report_range()
    assert high**2 < 2**63
    with app.app_context():
        store_survey(get_db(), definition)
    for report, status in [(high, 200), (low, 200), (high + 1, 400), (10**15, 400)]:
        client = app.test_client()
        form = client.get("/s/wide").get_data(as_text=True)
        sent = {**hidden_fields(form), "income": padded_number(report), "randomized": "client"}
        assert client.post("/s/wide", data=sent).status_code == status, report
    database = backends.connect(app.config["DATABASE"])
    assert tally_cells(database)["income"] == {
        "n": 2,
        "sum": low + high,
        "sum_squares": low**2 + high**2,
    }
    from survey_app.storage.surveys import get_survey
    from survey_app.storage.tallies import recount

    with app.app_context():
        survey = get_survey(get_db(), "wide")
        assert survey is not None
        assert recount(get_db(), survey).matched


def test_a_recount_sums_squares_exactly(app: Flask) -> None:
    """Squares are recounted as exact integers (total() once rounded 1,385,369,234,409,929,378
    to …216 and called matching tallies different)."""
    from survey_app.domain.definitions import parse_definition
    from survey_app.storage.responses import record_response
    from survey_app.storage.surveys import store_survey
    from survey_app.storage.tallies import recount
    from survey_app.web.database_session import get_db

    with app.app_context():
        survey = store_survey(get_db(), parse_definition(WIDE))
        record_response(get_db(), survey, {"income": 832_684_689}, "exact-1")
        record_response(get_db(), survey, {"income": -831_684_689}, "exact-2")
        assert recount(get_db(), survey).matched


@pytest.mark.sqlite_only
def test_a_recount_past_64_bits_sums_in_floats_like_sqlites_tally(app: Flask) -> None:
    """A sum of squares past 2^63, possible only in a SQLite database from before reports
    were bounded, turned its tally REAL (SQLite's integers overflow into floats); it is
    recounted in floats alike. (PostgreSQL databases are newer: their reports are bounded,
    and their ``BIGINT`` tally refuses to overflow.)"""
    from survey_app.domain.definitions import parse_definition
    from survey_app.storage.responses import record_response
    from survey_app.storage.surveys import store_survey
    from survey_app.storage.tallies import recount
    from survey_app.web.database_session import get_db

    with app.app_context():
        survey = store_survey(get_db(), parse_definition(WIDE))
        for index in range(2):  # 2 · (3·10^9)^2 > 2^63
            record_response(get_db(), survey, {"income": 3 * 10**9}, f"old-{index}")
        assert recount(get_db(), survey).matched
