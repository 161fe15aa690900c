"""A survey with a tick-all-that-apply question through the researcher's pages: the
running tallies agree with a recount, and the dashboard, plot, exports, codebook and
ledger show each option's share from the reports about it."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from fractions import Fraction

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.definitions import parse_definition
from survey_app.domain.labelled_exports import labelled_table
from survey_app.domain.question_estimates import survey_estimates
from survey_app.privacy import SECURE
from survey_app.storage.database import write_transaction
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.storage.tallies import add_to_tallies, recount
from survey_app.web.database_session import get_db
from tests.app.test_builder import page_form, press, question_part, text
from tests.support.respondents import fresh_form

SLUG = "used"
OPTIONS = ["cannabis", "cocaine", "ecstasy", "LSD"]
SURVEY = f"""\
slug: {SLUG}
title: Used
questions:
  - {{key: used, text: Which have you used, type: multiple, epsilon: 2,
     options: [{", ".join(OPTIONS)}]}}
  - {{key: year, text: Year, type: choice, options: [first, second], sensitive: false}}
"""
RESPONDENTS = 40


def ticks(number: int) -> dict[str, str]:
    """Respondent ``number``'s yes/no pairs: option j ticked when bit j of number % 16."""
    return {f"used.{j}": "y" if number >> j & 1 else "n" for j in range(len(OPTIONS))}


@pytest.fixture
def answered(built_once: Callable[[Callable[[Flask], None]], Flask]) -> Flask:
    return built_once(answer)


def answer(app: Flask) -> None:
    """The survey stored and answered by RESPONDENTS respondents, once per module."""
    with app.app_context():
        survey = store_survey(get_db(), parse_definition(SURVEY))
    assert survey.questions[0].mechanism.name == "sampled_option"
    for number in range(RESPONDENTS):
        respondent = app.test_client()
        answers = {**ticks(number), "year": f"{number % 2}"}
        response = respondent.post(f"/s/{SLUG}", data={**fresh_form(respondent, SLUG), **answers})
        assert response.status_code == 200


def test_the_tallies_agree_with_a_recount_and_every_report_is_counted_once(
    answered: Flask,
) -> None:
    with answered.app_context():
        db = get_db()
        survey = get_survey(db, SLUG)
        assert survey is not None
        assert recount(db, survey).matched
        (used, _year) = survey_estimates(db, survey)
    assert used.n == RESPONDENTS
    assert sum(c.about for c in used.categories if c.about is not None) == RESPONDENTS
    assert all(c.estimate is not None for c in used.categories if c.about)


def test_the_dashboard_plot_and_ledger(
    answered: Flask, logged_in: FlaskClient, runner: FlaskCliRunner
) -> None:
    page = logged_in.get(f"/research/surveys/{SLUG}?half_width=0.05&respondents=1000")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and f"<strong>{RESPONDENTS} responses.</strong>" in text
    assert "one sampled option, randomized response, ε = 2.00" in text
    assert "sampled_option" not in text
    section = text[text.index('id="q-used"') : text.index('id="q-year"')]
    assert "Reports about it" in section and "Every option" in section
    for option in OPTIONS:
        assert f'<th scope="row">{option}</th>' in section
    planner = text[text.index('id="planner"') :]
    assert "Which have you used" in planner  # a row: its rare option's variance per report
    svg = logged_in.get(f"/research/surveys/{SLUG}/plot.svg?question=used")
    assert svg.status_code == 200 and b"<svg" in svg.data
    out = runner.invoke(args=["ledger", SLUG]).output
    assert "used: sampled_option, ε = 2.00" in out


def test_the_exports_and_codebook(answered: Flask, logged_in: FlaskClient) -> None:
    text = logged_in.get(f"/research/surveys/{SLUG}/responses.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == RESPONDENTS
    assert all(row["used.option"] in "0123" and row["used.ticked"] in "01" for row in rows)
    book = logged_in.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    (used,) = [q for q in book["questions"] if q["key"] == "used"]
    assert used["mechanism"] == "sampled_option"
    assert "estimated from the rows about it" in used["encoding"]
    aggregate = logged_in.get(f"/research/surveys/{SLUG}/export.csv").get_data(as_text=True)
    used_rows = [row for row in csv.DictReader(io.StringIO(aggregate)) if row["question"] == "used"]
    assert [row["category"] for row in used_rows] == OPTIONS
    assert sum(int(row["n"]) for row in used_rows) == RESPONDENTS  # each option's n_j
    for kind in ("sav", "dta"):
        assert logged_in.get(f"/research/surveys/{SLUG}/responses.{kind}").status_code == 200
    with answered.app_context():
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        table = labelled_table(get_db(), survey, "test")
    names = [variable.name for variable in table.variables]
    assert names[3:5] == ["used_option", "used_ticked"]
    (note,) = [note for note in table.notes if note.startswith("used_option, used_ticked")]
    assert "0 = cannabis" in note and "used_ticked = 1 among the rows whose used_option" in note


def test_the_builder_adds_one_and_previews_it(logged_in: FlaskClient, app: Flask) -> None:
    """Its button, its options typed one a line, the preview's yes/no pairs, no sensitive
    box (always randomized), and a saved draft with the type and its mechanism."""
    page = logged_in.get("/research/builder/").get_data(as_text=True)
    assert '<button type="submit" name="add" value="multiple"' in page
    assert "Add a tick-all-that-apply question" in page
    page = text(press(logged_in, page, "add", "multiple"))
    assert page_form(page)["q1.type"] == "multiple"
    part = question_part(page, 1)
    box = part[: part.index('id="b-q1-sensitive"')]  # the sensitive box's fieldset: hidden
    plain = re.search(r'data-types="([^"]*)"( hidden)?>', box[box.rindex("<fieldset") :])
    edits = {
        "slug": "ticks",
        "title__en": "Ticks",
        "q0__key": "cheated",
        "q0__text__en": "Have you cheated?",
        "q1__key": "used",
        "q1__text__en": "Which have you used?",
        "q1__options__en": "cannabis\r\ncocaine\r\necstasy",
        "q1__epsilon": "2",
    }
    page = text(press(logged_in, page, "preview", **edits))
    assert 'class="errors"' not in page and "preview-missing" not in page, page
    preview = page.split('<fieldset disabled class="preview-frame">', 1)[1]
    assert '<fieldset class="tick"><legend>cocaine</legend>' in preview
    assert 'name="used.2" value="n"' in preview
    assert "one sampled option, randomized response" in page  # the ledger
    assert press(logged_in, page, "save").status_code == 302
    with app.app_context():
        survey = get_survey(get_db(), "ticks")
    assert survey is not None
    used = survey.questions[1]
    assert used.type == "multiple" and used.mechanism.name == "sampled_option"
    assert used.options == ("cannabis", "cocaine", "ecstasy") and used.sensitive
    assert plain is not None and "multiple" not in plain.group(1).split() and plain.group(2)


def test_the_estimates_cover_a_known_truth(app: Flask) -> None:
    """Reports drawn with the real sampler for 4,000 people, 1 in 4 ticking option 0 and
    none option 3, through the stored tallies: each option's interval holds its truth."""
    with app.app_context():
        db = get_db()
        survey = store_survey(db, parse_definition(SURVEY))
        question = survey.questions[0]
        with write_transaction(db):  # one transaction, as record_response's
            for person in range(4_000):
                answer = (int(person % 4 == 0), person % 2, 1, 0)
                report = question.mechanism.randomize(answer, SECURE)
                add_to_tallies(db, survey, {"used": report, "year": None})
        (used, _year) = survey_estimates(db, survey, confidence=0.999)
    truths = [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(0)]
    for category, truth in zip(used.categories, truths, strict=True):
        assert category.estimate is not None
        assert category.estimate.low <= truth <= category.estimate.high, category
