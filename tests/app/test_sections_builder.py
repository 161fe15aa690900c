"""Sections in the builder: added, titled, removed, questions put in them, the preview
walking them, the import's errors placed at their fields, saved and read back."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.datastructures import MultiDict

from survey_app.domain.builder_fields import (
    OPTIONAL_TEXTS,
    QuestionFields,
    SectionFields,
    SurveyFields,
    definition_yaml,
    fields_from_form,
    fields_from_source,
)
from survey_app.domain.definitions import parse_definition
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from tests.app.test_builder import BUILDER, field_error, page_form, press, text
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "sections.yaml"


def sectioned_fields() -> SurveyFields:
    return SurveyFields(
        slug="naps",
        texts={"title": {"en": "Naps"}, **{name: {"en": ""} for name in OPTIONAL_TEXTS}},
        questions=[
            QuestionFields(
                key="year",
                type="choice",
                text={"en": "Year"},
                options={"en": "1\n2"},
                sensitive=False,
                section=0,
            ),
            QuestionFields(key="naps", text={"en": "Naps in lectures"}, section=1),
            QuestionFields(key="awake", text={"en": "Awake all night"}, section=1),
        ],
        sections=[
            SectionFields({"en": "About you"}, {"en": "Not randomized."}),
            SectionFields({"en": "Sleep"}, {"en": ""}),
        ],
    )


def test_fields_with_sections_become_a_sectioned_file_and_come_back() -> None:
    fields = sectioned_fields()
    survey = parse_definition(definition_yaml(fields))
    assert [s.title for s in survey.sections] == ["About you", "Sleep"]
    assert [s.start for s in survey.sections] == [0, 1]
    assert survey.sections[0].description == "Not randomized."
    assert fields_from_source(definition_yaml(fields)) == fields


def test_a_sections_own_order_is_chosen_in_the_form_and_comes_back(
    builder: FlaskClient,
) -> None:
    fields = sectioned_fields()
    fields.sections[1].question_order = "random"
    survey = parse_definition(definition_yaml(fields))
    assert [s.question_order for s in survey.sections] == [None, "random"]
    assert fields_from_source(definition_yaml(fields)) == fields
    page = text(builder.get(BUILDER))
    page = text(press(builder, page, "add_section"))
    assert page_form(page)["s1.question_order"] == ""  # the survey's, until chosen
    page = text(press(builder, page, "preview", s1__question_order="random"))
    assert page_form(page)["s1.question_order"] == "random"


def test_the_example_fills_the_form_and_writes_back_the_same_survey() -> None:
    fields = fields_from_source(EXAMPLE.read_text("utf-8"))
    assert [q.section for q in fields.questions] == [0, 1, 1, 2, 2, 2]
    written = parse_definition(definition_yaml(fields))
    assert written == parse_definition(EXAMPLE.read_text("utf-8"))


def test_the_form_lists_questions_section_by_section() -> None:
    """A question moved to an earlier section is listed with it, as the file will be."""
    posted = MultiDict(
        [
            ("slug", "s"), ("title.en", "T"), ("language", "en"),
            ("s0.title.en", "One"), ("s1.title.en", "Two"),
            ("q0.type", "yes_no"), ("q0.key", "a"), ("q0.section", "1"),
            ("q1.type", "yes_no"), ("q1.key", "b"), ("q1.section", "0"),
            ("q2.type", "yes_no"), ("q2.key", "c"), ("q2.section", "99"),
        ]
    )  # fmt: skip
    fields = fields_from_form(posted)
    assert [(q.key, q.section) for q in fields.questions] == [("b", 0), ("a", 1), ("c", 1)]
    assert [s.title for s in fields.sections] == [{"en": "One"}, {"en": "Two"}]


def test_removing_a_section_moves_its_questions_to_the_one_before() -> None:
    fields = sectioned_fields()
    fields.add_section()
    fields.remove_section(1)
    assert [q.section for q in fields.questions] == [0, 0, 0]
    assert len(fields.sections) == 2
    fields.remove_section(0)
    fields.remove_section(0)
    assert fields.sections == [] and {q.section for q in fields.questions} == {0}
    assert "sections" not in definition_yaml(fields)


@pytest.fixture
def builder(logged_in: FlaskClient) -> FlaskClient:
    return logged_in


def test_sections_are_added_titled_filled_previewed_and_saved_without_javascript(
    builder: FlaskClient, app: Flask
) -> None:
    page = text(builder.get(BUILDER))
    assert "The survey is one page." in page
    page = text(press(builder, page, "add_section"))
    assert re.search(r'id="b-s0-title-en"', page) and re.search(r'id="b-s1-title-en"', page)
    assert re.search(r'<input type="text" id="b-s1-title-en"[^>]* autofocus', page)
    # The new question goes in the last section.
    titles = {"s0__title__en": "First", "s1__title__en": "Second"}
    page = text(press(builder, page, "add", "yes_no", slug="naps", title__en="Naps",
                      q0__text__en="Awake?", **titles))  # fmt: skip
    form = page_form(page)
    assert form["q0.section"] == "0" and form["q1.section"] == "1"
    page = text(press(builder, page, "preview", q1__text__en="Naps?"))
    assert 'class="errors"' not in page, page
    # The preview walks the sections: each with its heading and its place, all shown.
    assert "Section 1 of 2" in page and "Section 2 of 2" in page
    assert not re.search(r'<section class="survey-section"[^>]* hidden', page)
    assert 'name="sections-carried"' not in page
    saved = press(builder, page, "save")
    assert saved.status_code == 302
    with app.app_context():
        survey = get_survey(get_db(), "naps")
        assert survey is not None
        assert [s.title for s in survey.sections] == ["First", "Second"]
        assert [q.text for q in survey.section_questions(1)] == ["Naps?"]
    edit = text(builder.get(saved.headers["Location"]))
    assert page_form(edit)["s1.title.en"] == "Second"
    assert page_form(edit)["q1.section"] == "1"


def test_a_sections_problems_are_shown_at_its_fields(builder: FlaskClient) -> None:
    page = text(builder.get(BUILDER))
    page = text(press(builder, page, "add_section"))
    page = text(press(builder, page, "add", "yes_no", slug="s", title__en="T"))
    # An untitled section; the second question's key repeats the first's, across sections.
    page = text(
        press(builder, page, "preview", s0__title__en="One", q0__key="a", q0__text__en="A",
              q1__key="a", q1__text__en="B")
    )  # fmt: skip
    assert field_error(page, "b-s1-title-en") == "must not be empty"
    assert "duplicate question key" in (field_error(page, "b-q1-key") or "")
    # A section left without questions: the import's message, at the section list.
    page = text(press(builder, page, "preview", s1__title__en="Two", q1__key="b",
                      q1__section="0"))  # fmt: skip
    assert "sections[1].questions" in page and "must list at least one question" in page


def test_removing_the_last_sections_makes_one_page_again(builder: FlaskClient) -> None:
    page = text(builder.get(BUILDER))
    page = text(press(builder, page, "add_section"))
    page = text(press(builder, page, "remove_section", "1"))
    page = text(press(builder, page, "remove_section", "0", slug="s", title__en="T",
                      q0__text__en="A"))  # fmt: skip
    assert "b-s0-title-en" not in page and "The survey is one page." in page
    assert 'class="errors"' not in page
