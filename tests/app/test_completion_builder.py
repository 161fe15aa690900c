"""The builder edits a survey's thank-you text in every language and its completion (none,
a code or a return address): typed in, saved, refused at its field, filled back in."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.builder_fields import fields_from_source
from survey_app.domain.survey_model import Completion
from survey_app.storage.surveys import get_survey, survey_source
from survey_app.web.database_session import get_db
from tests.app.test_builder import BUILDER, field_error, page_form, press, text

REDIRECT = "https://app.prolific.com/submissions/complete?cc=C1AB2CD3"


def two_language_page(client: FlaskClient) -> str:
    page = text(client.get(BUILDER))
    return text(press(client, page, "preview", language="en", languages=["en", "ko"]))


def filled(**edits: str) -> dict[str, str]:
    return {
        "slug": "panel-built",
        "title__en": "Panel",
        "title__ko": "패널",
        "q0__key": "cheated",
        "q0__text__en": "Cheated?",
        "q0__text__ko": "부정행위?",
        "thank_you__en": "Thanks.\n\nSee you.",
        "thank_you__ko": "감사합니다.",
        **edits,
    }


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("code", "C1AB2CD3", Completion("code", "C1AB2CD3")),
        ("redirect", REDIRECT, Completion("redirect", REDIRECT)),
        ("none", "left over", None),
    ],
)
def test_the_builder_saves_the_completion_and_thank_you_and_fills_them_back(
    logged_in: FlaskClient, app: Flask, kind: str, value: str, expected: Completion | None
) -> None:
    page = two_language_page(logged_in)
    saved = press(logged_in, page, "save", **filled(completion=kind, completion_value=value))
    assert saved.status_code == 302, text(saved)
    with app.app_context():
        survey = get_survey(get_db(), "panel-built")
        assert survey is not None
        assert survey.completion == expected
        assert survey.localized("ko").thank_you == "감사합니다."
        fields = fields_from_source(survey_source(get_db(), survey))
    assert (fields.completion, fields.completion_value) == (
        (kind, value) if expected else ("none", "")
    )
    edit = page_form(text(logged_in.get(saved.headers["Location"])))
    assert edit["thank_you.en"] == "Thanks.\n\nSee you."
    assert edit["completion"] == (kind if expected else "none")


def test_a_bad_completion_is_refused_at_its_field(logged_in: FlaskClient) -> None:
    page = two_language_page(logged_in)
    response = press(
        logged_in,
        page,
        "save",
        **filled(completion="redirect", completion_value="http://panel.example/done"),
    )
    assert response.status_code == 400
    message = field_error(text(response), "b-completion_value")
    assert message is not None and "https://" in message
