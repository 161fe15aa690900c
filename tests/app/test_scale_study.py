"""A survey of rating scales through the respondent's and the researcher's pages, on a
real SQLite file: a sensitive scale (auto's GRR), one forced to unary encoding and a plain
one with its own scores, answered with and without ``randomized=client``; the dashboard's
distribution and mean score, the exports, codebook and labelled files."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path

import pyreadstat
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.definitions import parse_definition
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.storage.backends import Database
from survey_app.storage.surveys import get_survey, store_survey, survey_definition
from survey_app.web.database_session import get_db
from tests.support.respondents import fresh_form
from tests.support.stored import count

EXAMPLE = Path(__file__).parents[2] / "examples" / "rating-scales.yaml"
SLUG = "rating-scales"
RESPONDENTS = 40


def _answers(number: int) -> dict[str, str]:
    return {
        "year": f"{number % 4}",
        "binge": f"{number % 4}",
        "days_low": f"{number % 2}",
        "satisfied": f"{(number % 3) + 2}",
    }


@pytest.fixture
def answered(built_once: Callable[[Callable[[Flask], None]], Flask]) -> Flask:
    return built_once(answer)


def answer(app: Flask) -> None:
    """The survey stored and answered by RESPONDENTS respondents, once per module."""
    with app.app_context():
        survey = store_survey(get_db(), parse_definition(EXAMPLE.read_text(), EXAMPLE.name))
    assert [q.mechanism.name for q in survey.questions[1:3]] == [
        "generalized_randomized_response",
        "optimized_unary_encoding",
    ]
    for number in range(RESPONDENTS):
        respondent = app.test_client()
        response = respondent.post(
            f"/s/{SLUG}", data={**fresh_form(respondent, SLUG), **_answers(number)}
        )
        assert response.status_code == 200


def test_the_page_asks_each_scale_as_its_labels_in_order(app: Flask) -> None:
    with app.app_context():
        store_survey(get_db(), parse_definition(EXAMPLE.read_text(), EXAMPLE.name))
    page = app.test_client().get(f"/s/{SLUG}").get_data(as_text=True)
    binge = re.findall(r'name="binge" value="(\d+)"[^>]*> ([^<]+)', page)
    assert binge == [("0", "Never"), ("1", "Once or twice"), ("2", "Monthly"), ("3", "Weekly")]


def test_scores_are_stored_with_the_question_and_given_back(
    answered: Flask, database: Database
) -> None:
    with answered.app_context():
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        assert [q.scores for q in survey.questions] == [
            (),
            (0, 1, 2, 3),
            (0, 1, 2, 3),
            (-2, -1, 0, 1, 2),
        ]
        written = definition_yaml(survey_definition(survey))
    assert "scores:" in written and "- -2" in written
    again = parse_definition(written, "again.yaml")
    assert [q.scores for q in again.questions] == [q.scores for q in survey.questions]


def test_an_answer_off_the_scale_is_refused_and_nothing_stored(
    answered: Flask, database: Database
) -> None:
    respondent = answered.test_client()
    form = fresh_form(respondent, SLUG)
    response = respondent.post(f"/s/{SLUG}", data={**form, **_answers(0), "binge": "4"})
    assert response.status_code == 400
    assert 'value="0" checked' not in response.get_data(as_text=True)
    assert count(database, "responses") == RESPONDENTS


def test_a_client_randomized_scale_report_is_stored_as_sent(
    answered: Flask, database: Database
) -> None:
    respondent = answered.test_client()
    form = fresh_form(respondent, SLUG)
    reports = {"year": "1", "binge": "3", "days_low": "0101", "satisfied": "0"}
    response = respondent.post(f"/s/{SLUG}", data={**form, **reports, "randomized": "client"})
    assert response.status_code == 200
    assert count(database, "responses") == RESPONDENTS + 1
    for off_scale in ({"binge": "4"}, {"days_low": "01011"}, {"satisfied": "5"}):
        other = answered.test_client()
        refused = other.post(
            f"/s/{SLUG}",
            data={**fresh_form(other, SLUG), **reports, **off_scale, "randomized": "client"},
        )
        assert refused.status_code == 400, off_scale
    assert count(database, "responses") == RESPONDENTS + 1


def test_the_dashboard_shows_the_distribution_and_the_mean_score(
    answered: Flask, logged_in: FlaskClient
) -> None:
    text = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    binge = text[text.index('id="q-binge"') : text.index('id="q-days_low"')]
    assert "Estimated share of each option" in binge and "Weekly" in binge
    assert "Mean score (from 0 to 3)" in binge
    satisfied = text[text.index('id="q-satisfied"') :]
    # Plain: 40 answers of 0, 1, 2 (scores −2 … 2: 0, 1, 2 → 0.0, 1.0, 2.0) → mean 39/40.
    mean_row = satisfied[satisfied.index("Mean score (from -2 to 2)") :]
    assert re.search(r'data-label="Mean">0\.98', mean_row)
    for key in ("binge", "days_low", "satisfied"):
        svg = logged_in.get(f"/research/surveys/{SLUG}/plot.svg?question={key}")
        assert svg.status_code == 200 and b"<svg" in svg.data


def test_the_exports_give_the_mean_score_and_each_options_score(
    answered: Flask, logged_in: FlaskClient
) -> None:
    aggregate = logged_in.get(f"/research/surveys/{SLUG}/export.csv").get_data(as_text=True)
    rows = [r for r in csv.DictReader(io.StringIO(aggregate)) if r["question"] == "satisfied"]
    assert [r["category"] for r in rows][-1] == "mean"
    assert float(rows[-1]["estimate"]) == pytest.approx(39 / 40)
    book = logged_in.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    (satisfied,) = [q for q in book["questions"] if q["key"] == "satisfied"]
    assert satisfied["scores"] == [-2, -1, 0, 1, 2]
    aggregate_book = logged_in.get(f"/research/surveys/{SLUG}/codebook.json?kind=aggregate")
    assert "mean score" in aggregate_book.get_json()["mean_score"]


@pytest.mark.parametrize("extension", ["sav", "dta"])
def test_spss_and_stata_label_each_score_with_its_option(
    answered: Flask, logged_in: FlaskClient, extension: str, tmp_path: Path
) -> None:
    """A plain scale's value is its score, labelled with the option's text; the sensitive
    one reports an option, written as its score too."""
    download = logged_in.get(f"/research/surveys/{SLUG}/responses.{extension}")
    assert download.status_code == 200
    path = tmp_path / f"read.{extension}"
    path.write_bytes(download.data)
    reader = pyreadstat.read_sav if extension == "sav" else pyreadstat.read_dta
    columns, meta = reader(path, output_format="dict")
    assert meta.variable_value_labels["satisfied"] == {
        -2: "Very dissatisfied",
        -1: "Dissatisfied",
        0: "Neutral",
        1: "Satisfied",
        2: "Very satisfied",
    }
    assert sum(columns["satisfied"]) == 39  # the scores themselves: 0s, 1s and 2s
    assert set(meta.variable_value_labels["binge"]) == {0, 1, 2, 3}


def test_by_group_and_regression_take_a_scale_as_a_choice(
    answered: Flask, logged_in: FlaskClient
) -> None:
    groups = logged_in.get(f"/research/surveys/{SLUG}/groups?question=binge&by=year")
    text = groups.get_data(as_text=True)
    assert groups.status_code == 200 and "Share choosing “Weekly”" in text
    regression = logged_in.get(
        f"/research/surveys/{SLUG}/regression?outcome=binge.3&covariates=satisfied"
    )
    assert regression.status_code == 200
    assert "Weekly" in regression.get_data(as_text=True)


def test_the_public_page_shows_a_scales_figures(answered: Flask, runner: FlaskCliRunner) -> None:
    assert runner.invoke(args=["budget", SLUG, "2"]).exit_code == 0
    published = runner.invoke(args=["publish", SLUG, "--epsilon", "1"])
    assert published.exit_code == 0, published.output
    page = answered.test_client().get(f"/results/{SLUG}")
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "How often did you have six or more drinks" in text and "Once or twice" in text
