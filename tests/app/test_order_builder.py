"""The builder's display orders: the survey's "random question order" box and each
question's option order and fixed options become the file's keys and come back from it;
a wrong fixed position is refused at its field with the import's message; the saved
draft holds them."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.builder_fields import (
    QuestionFields,
    SurveyFields,
    definition_yaml,
    fields_from_source,
)
from survey_app.domain.definitions import parse_definition
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from tests.app.test_builder import BUILDER, field_error, input_tag, press, text

ORDERED = SurveyFields(
    slug="ordered",
    texts={"title": {"en": "Ordered"}},
    random_question_order=True,
    questions=[
        QuestionFields(
            key="where",
            type="choice",
            text={"en": "Where do you live?"},
            options={"en": "Halls\nA flat\nNone of these"},
            option_order="random",
            fixed_options="3",
        ),
        QuestionFields(
            key="mood",
            type="scale",
            text={"en": "How are you?"},
            options={"en": "Bad\nSo-so\nGood"},
            option_order="reverse",
        ),
        QuestionFields(key="cheated", text={"en": "Cheated?"}),
    ],
)


def test_order_fields_become_a_definition_and_come_back() -> None:
    definition = parse_definition(definition_yaml(ORDERED), "builder")
    assert definition.question_order == "random"
    assert [(q.option_order, q.fixed_options) for q in definition.questions] == [
        ("random", (2,)),
        ("reverse", ()),
        ("as_written", ()),
    ]
    again = fields_from_source(definition.source)
    assert (again.random_question_order, again.questions) == (True, ORDERED.questions)


def test_fixed_positions_typed_under_an_order_as_written_are_left_out() -> None:
    """Like a number question's options, a field that does not apply now loses nothing
    typed and adds no error."""
    question = QuestionFields(
        key="where", type="choice", text={"en": "Where?"}, options={"en": "A\nB"}
    )
    question.fixed_options = "2"
    fields = SurveyFields(slug="s", texts={"title": {"en": "S"}}, questions=[question])
    written = definition_yaml(fields)
    assert "fixed_options" not in written and "option_order" not in written
    assert parse_definition(written).questions[0].fixed_options == ()


def test_orders_are_built_refused_at_their_field_and_saved(
    logged_in: FlaskClient, app: Flask
) -> None:
    page = text(logged_in.get(BUILDER))
    assert 'name="question_order" value="random"' in page
    page = text(press(logged_in, page, "add", "choice"))
    assert 'name="q1.option_order"' in page
    edits = {
        "slug": "ordered",
        "title__en": "Ordered",
        "question_order": "random",
        "q0__text__en": "Cheated?",
        "q1__key": "where",
        "q1__text__en": "Where do you live?",
        "q1__options__en": "Halls\r\nA flat\r\nNone of these",
        "q1__option_order": "random",
        "q1__fixed_options": "4",
    }
    refused = text(press(logged_in, page, "preview", **edits))
    assert field_error(refused, "b-q1-fixed_options") == (
        "must be an option&#39;s position, a whole number from 1 to 3 (got 4)"
    )
    assert 'aria-invalid="true"' in input_tag(refused, "b-q1-fixed_options")
    edits["q1__fixed_options"] = "3"
    page = text(press(logged_in, page, "preview", **edits))
    assert 'class="errors"' not in page
    assert press(logged_in, page, "save").status_code == 302
    with app.app_context():
        survey = get_survey(get_db(), "ordered")
    assert survey is not None and survey.question_order == "random"
    assert (survey.questions[1].option_order, survey.questions[1].fixed_options) == (
        "random",
        (2,),
    )
    again = text(logged_in.get(f"{BUILDER}drafts/ordered"))
    assert 'name="question_order" value="random" checked' in again
    assert 'value="random" selected' in again and 'value="3"' in again
