"""Display logic (``show_if``) on a real SQLite file: the survey file's conditions, refused
with their file, line and field where they could leak or cannot work; stored and given
back; and the respondent's form without JavaScript, where the server decides from the
posted plain answer whether a question applied, storing "n/a" (never an answer) when not.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.builder_fields import definition_yaml as builder_yaml
from survey_app.domain.builder_fields import fields_from_form
from survey_app.domain.definitions import parse_definition
from survey_app.domain.display_logic import NOT_APPLICABLE, ShowIf, not_applicable
from survey_app.domain.labelled_exports import NOT_APPLICABLE_CODES, STATA_NOT_APPLICABLE
from survey_app.domain.question_estimates import survey_estimates
from survey_app.domain.survey_model import SurveyDefinitionError
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.storage.crosstabs import joint_counts
from survey_app.storage.surveys import Survey, get_survey, store_survey, survey_definition
from survey_app.storage.tallies import recount
from survey_app.web.database_session import get_db
from tests.app.test_builder import field_error, page_form, press, text, upload
from tests.support.respondents import post_without_javascript, stored_answers
from tests.support.stored import opened, tally_cells

SLUG = "placements"
SURVEY_FILE = f"""\
slug: {SLUG}
title: Placements
questions:
  - key: year
    text: Which year are you in?
    type: choice
    sensitive: false
    options: [First year, Second year, Third year, Fourth year]
  - key: age
    text: How old are you?
    type: number
    sensitive: false
    min: 16
    max: 99
  - key: harassed
    text: Were you harassed on a clinical placement?
    show_if: {{question: year, is: [3, 4]}}
  - key: drinks
    text: Drinks last week?
    type: number
    min: 0
    max: 40
    show_if: {{question: age, min: 18, max: 25}}
  - key: often
    text: How often?
    type: choice
    options: [never, sometimes, often]
    show_if: {{question: year, is: [4]}}
"""


@pytest.fixture
def survey(app: Flask) -> Survey:
    with app.app_context():
        return store_survey(get_db(), parse_definition(SURVEY_FILE))


def refusal(condition: str, *, target: str = "harassed") -> SurveyDefinitionError:
    """The error for SURVEY_FILE with ``condition`` as ``target``'s show_if."""
    lines = SURVEY_FILE.splitlines()
    start = lines.index(f"  - key: {target}")
    at = next(i for i in range(start, len(lines)) if "show_if" in lines[i])
    lines[at] = f"    show_if: {condition}"
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition("\n".join(lines) + "\n", source="placements.yaml")
    return caught.value


def test_a_condition_is_read_as_option_indexes_or_a_range() -> None:
    questions = parse_definition(SURVEY_FILE).questions
    assert questions[2].show_if == ShowIf("year", options=(2, 3))
    assert questions[3].show_if == ShowIf("age", min=18, max=25)
    assert questions[0].show_if is None


@pytest.mark.parametrize(
    ("condition", "field", "words"),
    [
        ("{question: often, is: [1]}", "questions[2].show_if.question", "later question"),
        ("{question: harassed, is: [1]}", "questions[2].show_if.question", "its own answer"),
        ("{question: nobody, is: [1]}", "questions[2].show_if.question", "names no question"),
        ("{question: year, is: [5]}", "questions[2].show_if.is[0]", "out of range"),
        ("{question: year, is: [0]}", "questions[2].show_if.is[0]", "out of range"),
        ("{question: year, is: [3, 3]}", "questions[2].show_if.is", "listed twice"),
        ("{question: year, is: []}", "questions[2].show_if.is", "must list option numbers"),
        ("{question: year, min: 2}", "questions[2].show_if.min", "is a choice"),
        ("{question: year}", "questions[2].show_if.is", "is required"),
        ("{question: age, is: [1]}", "questions[2].show_if.is", "is a number"),
        ("{question: age}", "questions[2].show_if", "needs min, max or both"),
        ("{question: age, min: 30, max: 20}", "questions[2].show_if.max", "at least min"),
        ("{question: age, min: 100}", "questions[2].show_if", "never be shown"),
        ("{question: year, is: [1], when: 2}", "questions[2].show_if.when", "unknown key"),
        ("year", "questions[2].show_if", "must be a mapping"),
    ],
)
def test_a_condition_that_cannot_work_is_refused_with_its_file_line_and_field(
    condition: str, field: str, words: str
) -> None:
    error = refusal(condition)
    assert error.field == field and words in error.message, str(error)
    assert error.source == "placements.yaml" and error.line is not None
    assert str(error).startswith(f"placements.yaml:{error.line}: {field}: ")


def test_a_condition_on_a_sensitive_answer_is_refused_in_words_that_say_why() -> None:
    error = refusal("{question: harassed, is: [1]}", target="often")
    assert error.field == "questions[4].show_if.question"
    assert "sensitive question 'harassed'" in error.message
    assert "which questions someone saw would reveal their answer" in error.message


def test_a_cycle_is_named_even_though_a_later_question_is_refused_anyway() -> None:
    text = SURVEY_FILE.replace(
        "    show_if: {question: year, is: [3, 4]}", "    show_if: {question: often, is: [1]}"
    ).replace(
        "    show_if: {question: year, is: [4]}", "    show_if: {question: harassed, is: [1]}"
    )
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition(text)
    messages = [problem.message for problem in caught.value.problems]
    assert any("cycle (harassed → often → harassed)" in message for message in messages)


def test_conditions_chain_as_a_respondent_reads_them() -> None:
    questions = parse_definition(
        SURVEY_FILE.replace(
            "    show_if: {question: year, is: [4]}", "    show_if: {question: year, is: [4]}"
        )
    ).questions
    assert not_applicable(questions, {"year": 3, "age": 20}) == frozenset()
    assert not_applicable(questions, {"year": 2, "age": 17}) == {"often", "drinks"}
    assert not_applicable(questions, {"year": None, "age": None}) == {
        "harassed",
        "drinks",
        "often",
    }


def test_conditions_are_stored_and_given_back_as_written(app: Flask, survey: Survey) -> None:
    with app.app_context():
        stored = get_survey(get_db(), SLUG)
    assert stored is not None
    assert [q.show_if for q in stored.questions] == [
        q.show_if for q in parse_definition(SURVEY_FILE).questions
    ]
    definition = survey_definition(stored)
    again = parse_definition(definition_yaml(definition))
    assert again == definition  # (the mechanisms as chosen, where the file said auto)
    assert [q.show_if for q in again.questions] == [q.show_if for q in stored.questions]
    assert "show_if:\n    question: year\n    is:\n    - 3\n    - 4" in definition_yaml(definition)


def post(app: Flask, data: dict[str, str]) -> tuple[int, str, int]:
    return post_without_javascript(app, SLUG, data)


def test_without_javascript_a_conditioned_question_says_who_answers_it_and_is_not_required(
    app: Flask, survey: Survey
) -> None:
    page = app.test_client().get(f"/s/{SLUG}").get_data(as_text=True)
    assert "Only if you answered Third year or Fourth year to “Which year are you in?”." in page
    assert "Only if your answer to “How old are you?” was from 18 to 25." in page
    # Not required in the page (the server decides); the script requires it when shown.
    assert 'name="harassed" value="y" data-req>' in page
    assert '<input type="hidden" name="harassed" value="_" data-na disabled>' in page
    assert 'name="year" value="0" required>' in page


def test_a_question_whose_condition_fails_is_stored_not_applicable_whatever_was_posted(
    app: Flask, survey: Survey
) -> None:
    # First year, 30: nothing applies; the sensitive answers posted anyway are dropped.
    status, page, _ = post(
        app, {"year": "0", "age": "30", "harassed": "y", "drinks": "07", "often": "2"}
    )
    assert status == 200, page
    assert stored_answers(app) == [
        {"year": 0, "age": 30, "harassed": NOT_APPLICABLE, "drinks": NOT_APPLICABLE,
         "often": NOT_APPLICABLE}
    ]  # fmt: skip
    assert "This question did not apply to you: it was stored as not applicable." in page
    # Left blank, as the note says: the same, and no "Please answer" for them.
    status, page, _ = post(app, {"year": "1", "age": "40"})
    assert status == 200, page
    assert stored_answers(app)[1]["harassed"] == NOT_APPLICABLE


def test_a_question_whose_condition_holds_is_answered_and_required_as_always(
    app: Flask, survey: Survey
) -> None:
    status, page, _ = post(app, {"year": "3", "age": "20"})
    assert status == 400 and "Please answer this question." in page
    assert stored_answers(app) == []
    status, page, _ = post(app, {"year": "3", "age": "20", "harassed": "y", "drinks": "07",
                                 "often": "1"})  # fmt: skip
    assert status == 200, page
    (answers,) = stored_answers(app)
    assert answers["harassed"] in (0, 1) and isinstance(answers["drinks"], int)
    assert answers["often"] in (0, 1, 2)


def test_estimates_count_not_applicable_apart_from_n_and_from_skips(
    app: Flask, survey: Survey
) -> None:
    for year, age in (("0", "30"), ("2", "20"), ("3", "19"), ("1", "50")):
        status, page, _ = post(
            app, {"year": year, "age": age, "harassed": "y", "drinks": "03", "often": "0"}
        )
        assert status == 200, page
    with opened(app.config["DATABASE"]) as database:
        cells = tally_cells(database)
    assert cells["harassed"]["n"] == 2 and cells["harassed"]["not_applicable"] == 2
    assert cells["drinks"]["n"] == 2 and cells["drinks"]["not_applicable"] == 2
    assert cells["often"]["n"] == 1 and cells["often"]["not_applicable"] == 3
    assert "not_applicable" not in cells["year"]
    with app.app_context():
        estimates = {e.question.key: e for e in survey_estimates(get_db(), survey)}
        assert estimates["harassed"].n == 2 and estimates["often"].n == 1
        # The tallies rebuilt from the stored rows agree, "n/a" counted apart.
        assert recount(get_db(), survey).matched


@pytest.fixture
def answered(app: Flask, survey: Survey) -> Flask:
    """Four respondents: two the conditions apply to in part, two not at all."""
    for year, age in (("0", "30"), ("2", "20"), ("3", "19"), ("1", "50")):
        status, page, _ = post(
            app, {"year": year, "age": age, "harassed": "y", "drinks": "03", "often": "0"}
        )
        assert status == 200, page
    return app


def test_the_dashboard_says_whom_an_estimate_describes_and_counts_apart(
    answered: Flask, logged_in: FlaskClient
) -> None:
    page = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    section = page[page.index('id="q-harassed"') : page.index('id="q-drinks"')]
    assert (
        "Asked only of respondents who answered “Third year”, “Fourth year” to “Which year are "
        "you in?”: the estimates describe them. n = 2; not applicable to 2; skipped by 0."
    ) in section
    section = page[page.index('id="q-drinks"') : page.index('id="q-often"')]
    assert "whose answer to “How old are you?” was from 18 to 25" in section


def test_the_exports_mark_not_applicable_apart_from_a_skip(
    answered: Flask, logged_in: FlaskClient
) -> None:
    text = logged_in.get(f"/research/surveys/{SLUG}/responses.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["harassed"] for row in rows][::3] == [NOT_APPLICABLE, NOT_APPLICABLE]
    assert rows[1]["harassed"] in ("0", "1") and rows[0]["often"] == NOT_APPLICABLE
    aggregate = logged_in.get(f"/research/surveys/{SLUG}/export.csv").get_data(as_text=True)
    by_question = {row["question"]: row for row in csv.DictReader(io.StringIO(aggregate))}
    assert by_question["harassed"]["n"] == "2" and by_question["harassed"]["not_applicable"] == "2"
    assert by_question["harassed"]["population"] == (
        "respondents who answered 'Third year' or 'Fourth year' to year"
    )
    assert by_question["year"]["population"] == "all respondents"
    book = logged_in.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    assert "n/a = not applicable" in book["values"]
    (drinks,) = [q for q in book["questions"] if q["key"] == "drinks"]
    assert drinks["show_if"] == {"question": "age", "min": 18, "max": 25}


@pytest.mark.parametrize("extension", ["sav", "dta"])
def test_spss_and_stata_hold_a_labelled_user_missing_not_applicable(
    answered: Flask, logged_in: FlaskClient, extension: str, tmp_path: Path
) -> None:
    import pyreadstat

    response = logged_in.get(f"/research/surveys/{SLUG}/responses.{extension}")
    assert response.status_code == 200
    path = tmp_path / f"responses.{extension}"
    path.write_bytes(response.data)
    reader = pyreadstat.read_sav if extension == "sav" else pyreadstat.read_dta
    data, meta = reader(str(path), user_missing=True, output_format="dict")
    code: object
    measure: object
    if extension == "sav":
        code, missing = NOT_APPLICABLE_CODES["code"], meta.missing_ranges["harassed"]
        assert missing == [{"lo": code, "hi": code}]
        measure = NOT_APPLICABLE_CODES["measure"]
        assert meta.missing_ranges["drinks"] == [{"lo": measure, "hi": measure}]
    else:
        code = measure = STATA_NOT_APPLICABLE
        assert meta.missing_user_values["harassed"] == [code]
    assert data["harassed"][0] == code and data["harassed"][1] in (0, 1)
    assert data["drinks"][0] == measure
    labels: dict[Any, str] = meta.variable_value_labels["harassed"]
    assert labels[code] == "not applicable" and labels[1] == "yes"
    assert (
        "year" not in meta.variable_value_labels or code not in meta.variable_value_labels["year"]
    )


def test_the_builder_edits_a_condition_previews_its_note_and_places_its_error(
    logged_in: FlaskClient,
) -> None:
    page = text(logged_in.get("/research/builder/"))
    page = text(upload(logged_in, page, "placements.yaml", SURVEY_FILE.encode()))
    fields = page_form(page)
    assert fields["q2.show_if.question"] == "year" and fields["q2.show_if.is"] == "3, 4"
    assert (fields["q3.show_if.min"], fields["q3.show_if.max"]) == ("18", "25")
    assert 'id="b-q0-show_if-question"' not in page  # the first question has none earlier
    page = text(press(logged_in, page, "preview"))
    assert "Only if you answered Third year or Fourth year to" in page
    assert definition_yaml_of(page) == parse_definition(SURVEY_FILE)
    response = press(logged_in, page, "save", q4__show_if__question="harassed")
    assert response.status_code == 400
    error = field_error(text(response), "b-q4-show_if-question")
    assert error is not None and "which questions someone saw would reveal" in error


def definition_yaml_of(page: str) -> object:
    """The definition the builder page's form stands for, as the import reads it."""
    return parse_definition(builder_yaml(fields_from_form(page_form(page))), "builder")


def test_joint_counts_read_not_applicable_as_no_answer(answered: Flask) -> None:
    """By group, the regression and public releases start from these: n/a drops out as a
    skip does, never as a value of its own."""
    with answered.app_context():
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        counts = joint_counts(get_db(), survey, ["year", "harassed"])
    assert {year: harassed for year, harassed in counts if harassed is None} == {0: None, 1: None}
    assert all(harassed in (None, 0, 1) for _year, harassed in counts)


def test_a_browsers_report_where_nothing_applies_is_dropped_and_a_wrong_mark_refused(
    app: Flask, survey: Survey
) -> None:
    """With JavaScript the plain answers decide too: a report posted for a hidden question
    is dropped, and the not-applicable mark posted for a shown one refuses the form."""
    with app.app_context():
        stored = get_survey(get_db(), SLUG)
    assert stored is not None
    sent = {"randomized": "client", "design": stored.design, "age": "00000000000000030"}
    status, page, _ = post(app, {**sent, "year": "0", "harassed": "y", "drinks": "_" * 17,
                                 "often": "1"})  # fmt: skip
    assert status == 200, page
    assert stored_answers(app)[0]["harassed"] == NOT_APPLICABLE
    assert stored_answers(app)[0]["often"] == NOT_APPLICABLE
    status, page, _ = post(app, {**sent, "year": "3", "harassed": "_", "drinks": "_" * 17,
                                 "often": "1"})  # fmt: skip
    assert status == 400 and len(stored_answers(app)) == 1


def test_a_condition_is_judged_beside_the_files_other_problems() -> None:
    """Every problem at once: a bad condition is reported with an unrelated one, and a
    condition on a question with problems of its own adds none."""
    text = SURVEY_FILE.replace("    max: 99\n", "    max: 9\n").replace(
        "show_if: {question: year, is: [4]}", "show_if: {question: harassed, is: [1]}"
    )
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition(text)
    fields = [problem.field for problem in caught.value.problems]
    assert fields == ["questions[1].max", "questions[4].show_if.question"]
