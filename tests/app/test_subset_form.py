"""A posted set of options (subset selection's report) through the respondent's form:
an honest set is stored and counted; a malformed one is a 400 with nothing stored.
"""

from __future__ import annotations

import json

from flask import Flask
from werkzeug.datastructures import MultiDict

from survey_app.domain.answers import set_value
from survey_app.domain.definitions import parse_definition
from survey_app.privacy.mechanisms.subset_selection import SubsetSelection
from tests.support.respondents import hidden_fields
from tests.support.stored import opened, rows, tally_cells

OPTIONS = ", ".join(f"option {index}" for index in range(12))
SURVEY_FILE = (
    "slug: sets\ntitle: Sets\nquestions:\n  - {key: pick, text: Pick one, type: choice, "
    f"options: [{OPTIONS}], mechanism: subset, epsilon: 1}}\n"
)
#: Sets of 3 (ω at ε = 1 for 12 options) of 12 options: indexes two digits wide.
MALFORMED = {
    "too few": "02,05",
    "too many": "02,05,07,11",
    "repeated": "02,02,11",
    "past the last": "02,05,12",
    "out of order": "05,02,11",
    "unpadded": "2,5,11",
    "too wide": "002,005,011",
    "not digits": "02,05,1a",
    "no commas": "020511",
    "trailing comma": "02,05,11,",
    "spaces": "02, 05, 11",
    "negative": "-1,02,05",
    "empty": "",
}


def test_a_malformed_set_is_refused_with_nothing_stored(app: Flask) -> None:
    from survey_app.storage.surveys import store_survey
    from survey_app.web.database_session import get_db

    with app.app_context():
        survey = store_survey(get_db(), parse_definition(SURVEY_FILE))
    mechanism = survey.questions[0].mechanism
    assert isinstance(mechanism, SubsetSelection) and mechanism.size == 3
    honest = set_value(survey.questions[0], (2, 5, 11))
    assert honest == "02,05,11"
    for label, posted in [*MALFORMED.items(), ("honest", honest)]:
        client = app.test_client()
        form = client.get("/s/sets").get_data(as_text=True)
        sent = {**hidden_fields(form), "pick": posted, "randomized": "client"}
        response = client.post("/s/sets", data=sent)
        expected = 200 if label == "honest" else 400
        assert response.status_code == expected, (label, posted)
        if expected == 400 and posted:
            assert f'value="{posted}"' not in response.get_data(as_text=True), label
    with opened(app.config["DATABASE"]) as database:
        stored = [json.loads(row["answers"]) for row in rows(database, "responses")]
        assert stored == [{"pick": "2,5,11"}]
        assert tally_cells(database)["pick"] == {"n": 1, "2": 1, "5": 1, "11": 1}


def test_without_javascript_the_server_draws_a_set_of_the_right_size(app: Flask) -> None:
    from survey_app.storage.surveys import store_survey
    from survey_app.web.database_session import get_db

    with app.app_context():
        survey = store_survey(get_db(), parse_definition(SURVEY_FILE))
    mechanism = survey.questions[0].mechanism
    assert isinstance(mechanism, SubsetSelection)
    for number in range(5):
        client = app.test_client()
        form = client.get("/s/sets").get_data(as_text=True)
        response = client.post("/s/sets", data={**hidden_fields(form), "pick": "07"})
        assert response.status_code == 200, number
    with opened(app.config["DATABASE"]) as database:
        for row in rows(database, "responses"):
            mechanism.members(mechanism.report_format.load(json.loads(row["answers"])["pick"]))
        assert tally_cells(database)["pick"]["n"] == 5


def test_the_field_refuses_what_the_mechanism_could_not_send(app: Flask) -> None:
    """The form alone: each malformed set refused with the format's one message."""
    from survey_app.storage.surveys import store_survey
    from survey_app.web.database_session import get_db
    from survey_app.web.respond.forms import build_response_form

    with app.app_context():
        survey = store_survey(get_db(), parse_definition(SURVEY_FILE))
    assert survey.questions[0].mechanism == SubsetSelection.from_epsilon(12, 1, 3)
    with app.test_request_context():
        for label, posted in [*MALFORMED.items(), ("honest", "02,05,11")]:
            form = build_response_form(survey, MultiDict({"pick": posted, "randomized": "client"}))
            field = form["pick"]
            assert field.validate(form) == (label == "honest"), (label, posted)
            if label not in ("honest", "empty"):
                assert field.errors == ["The randomized answer is malformed."], label
