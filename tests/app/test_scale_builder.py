"""The builder's rating scale: added by its button, its labels and scores typed like a
choice's options (one per line), previewed as the respondent's page, saved and read back;
a wrong score is refused at its field with the import's message."""

from __future__ import annotations

import re

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
from tests.app.test_builder import BUILDER, field_error, page_form, press, text

SCALE = SurveyFields(
    slug="moods",
    texts={"title": {"en": "Moods"}},
    questions=[
        QuestionFields(
            key="low",
            type="scale",
            text={"en": "How often did you feel low?"},
            options={"en": "Never\nSometimes\nOften"},
            scores="0\n2\n5",
        )
    ],
)


def test_scale_fields_become_a_definition_and_come_back() -> None:
    definition = parse_definition(definition_yaml(SCALE), "builder")
    (low,) = definition.questions
    assert (low.options, low.scores) == (("Never", "Sometimes", "Often"), (0, 2, 5))
    assert fields_from_source(definition.source).questions == SCALE.questions


def test_a_scale_without_scores_writes_none() -> None:
    question = QuestionFields(
        key="low", type="scale", text={"en": "Low?"}, options={"en": "No\nYes"}
    )
    fields = SurveyFields(slug="moods", texts={"title": {"en": "Moods"}}, questions=[question])
    assert "scores" not in definition_yaml(fields)
    assert parse_definition(definition_yaml(fields)).questions[0].scores == (0, 1)


def test_a_rating_scale_is_built_previewed_and_saved(logged_in: FlaskClient, app: Flask) -> None:
    page = text(logged_in.get(BUILDER))
    assert "Add a rating scale" in page
    page = text(press(logged_in, page, "add", "scale"))
    assert page_form(page)["q1.type"] == "scale"
    edits = {
        "slug": "moods",
        "title__en": "Moods",
        "q0__text__en": "Tired?",
        "q1__key": "low",
        "q1__text__en": "How often did you feel low?",
        "q1__options__en": "Never\r\nSometimes\r\nOften",
        "q1__scores": "0\r\n2\r\n2",
    }
    refused = text(press(logged_in, page, "preview", **edits))
    assert field_error(refused, "b-q1-scores") == (
        "must increase from each option to the next (got 2 after 2)"
    )
    edits["q1__scores"] = "0\r\n2\r\n5"
    page = text(press(logged_in, page, "preview", **edits))
    assert 'class="errors"' not in page
    preview = page[page.index('id="preview-heading"') :]
    assert re.findall(r'name="low" value="\d+"[^>]*> (\w+)', preview) == [
        "Never",
        "Sometimes",
        "Often",
    ]
    assert press(logged_in, page, "save").status_code == 302
    with app.app_context():
        survey = get_survey(get_db(), "moods")
        assert survey is not None
        assert survey.questions[1].scores == (0, 2, 5)
