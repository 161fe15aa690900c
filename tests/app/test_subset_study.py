"""A survey with a subset-selection question through the researcher's pages: the builder
offers it, respondents without JavaScript are randomized by the server, and the dashboard,
planner, plot, exports, codebook and ledger all speak of sets."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.definitions import parse_definition
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.respondents import fresh_form
from tests.support.stored import stored_answers

SLUG = "tools"
SURVEY = f"""\
slug: {SLUG}
title: Tools
questions:
  - {{key: tool, text: Which tool do you use most, type: choice, epsilon: 1,
     options: [pen, pencil, laptop, tablet, phone, chalk, brush, other]}}
  - {{key: year, text: Year, type: choice, options: [first, second], sensitive: false}}
"""
RESPONDENTS = 40


@pytest.fixture
def answered(built_once: Callable[[Callable[[Flask], None]], Flask]) -> Flask:
    return built_once(answer)


def answer(app: Flask) -> None:
    """The survey stored and answered by RESPONDENTS respondents, once per module."""
    with app.app_context():
        survey = store_survey(get_db(), parse_definition(SURVEY))
    assert survey.questions[0].mechanism.name == "subset_selection"  # auto's pick
    for number in range(RESPONDENTS):
        respondent = app.test_client()
        answers = {"tool": f"{number % 8}", "year": f"{number % 2}"}
        response = respondent.post(f"/s/{SLUG}", data={**fresh_form(respondent, SLUG), **answers})
        assert response.status_code == 200
        assert "A set of 2 options is stored" in response.get_data(as_text=True)


def test_the_dashboard_planner_and_plot(answered: Flask, logged_in: FlaskClient) -> None:
    page = logged_in.get(f"/research/surveys/{SLUG}?half_width=0.05&respondents=1000")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and f"<strong>{RESPONDENTS} responses.</strong>" in text
    assert "subset selection, ε = 1.00" in text and "subset_selection" not in text
    planner = text[text.index('id="planner"') :]
    assert "Which tool do you use most" in planner
    svg = logged_in.get(f"/research/surveys/{SLUG}/plot.svg?question=tool")
    assert svg.status_code == 200 and b"<svg" in svg.data


def test_the_exports_and_codebook(answered: Flask, logged_in: FlaskClient) -> None:
    text = logged_in.get(f"/research/surveys/{SLUG}/responses.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    columns = [f"tool.{index}" for index in range(8)]
    assert len(rows) == RESPONDENTS
    assert all(sum(int(row[column]) for column in columns) == 2 for row in rows)  # ω = 2
    book = logged_in.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    (tool,) = [q for q in book["questions"] if q["key"] == "tool"]
    assert tool["mechanism"] == "subset_selection" and tool["r_columns"] == columns
    assert "reported set of 2" in tool["encoding"]
    aggregate = logged_in.get(f"/research/surveys/{SLUG}/export.csv").get_data(as_text=True)
    tool_rows = [row for row in csv.DictReader(io.StringIO(aggregate)) if row["question"] == "tool"]
    assert [row["category"] for row in tool_rows] == [
        "pen", "pencil", "laptop", "tablet", "phone", "chalk", "brush", "other",
    ]  # fmt: skip
    for kind in ("sav", "dta"):
        assert logged_in.get(f"/research/surveys/{SLUG}/responses.{kind}").status_code == 200


def test_the_page_by_group_counts_each_option_in_the_stored_sets(
    answered: Flask, logged_in: FlaskClient
) -> None:
    """Each stored set counts for every option in it (the page once read "3,7" as unary
    bits and failed): each group's estimate is debiased from the sets holding the option."""
    response = logged_in.get(f"/research/surveys/{SLUG}/groups.csv?question=tool&by=year")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    with answered.app_context():
        survey = get_survey(get_db(), SLUG)
    answers = stored_answers(answered.config["DATABASE"])
    sets = [(answer["year"], str(answer["tool"]).split(",")) for answer in answers]
    assert survey is not None
    mechanism = survey.questions[0].mechanism
    for row in rows:
        option = str(survey.questions[0].options.index(row["category"]))
        years = [survey.questions[1].options.index(g) for g in row["group"].split(" + ")]
        in_group = [tools for y, tools in sets if y in years]
        share = sum(option in tools for tools in in_group) / len(in_group)
        debiased = (share - mechanism.p_false) / (mechanism.p_true - mechanism.p_false)  # type: ignore[attr-defined]
        assert int(row["n"]) == len(in_group) == RESPONDENTS  # both years pooled: 20 < 30
        assert float(row["estimate"]) == pytest.approx(min(max(debiased, 0), 1), abs=1e-6)
    assert len(rows) == 8


def test_the_ledger_names_it(answered: Flask, runner: FlaskCliRunner) -> None:
    out = runner.invoke(args=["ledger", SLUG]).output
    assert "tool: subset_selection, ε = 1.00" in out


def test_the_builder_offers_it(logged_in: FlaskClient) -> None:
    page = logged_in.get("/research/builder/").get_data(as_text=True)
    assert '<option value="subset"' in page and "subset: subset selection" in page
