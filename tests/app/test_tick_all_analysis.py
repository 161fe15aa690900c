"""Tick all that apply by group and as a regression outcome, through storage: each
option's share in each group and "ticked option j" on a plain covariate, both from the
reports about option j only (the others say nothing of it), with the yes/no likelihood at
the mechanism's p and 1 - p."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from scipy.special import expit

from survey_app.domain import analyses as analysis
from survey_app.domain.definitions import parse_definition
from survey_app.privacy.groups import GroupCount, estimate_by_group
from survey_app.privacy.mechanisms import SampledOption
from survey_app.privacy.regression import fit_randomized_logistic
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.stored import stored_answers

SLUG = "ticks"
SURVEY = f"""\
slug: {SLUG}
title: Ticks
questions:
  - {{key: year, text: Year, type: choice, options: [First, Second], sensitive: false}}
  - {{key: used, text: Which have you used, type: multiple, epsilon: 3,
     options: [cannabis, cocaine, ecstasy]}}
"""
RESPONSES = 3_000
#: Log odds of ticking cannabis: -1 in the first year, +1.2 in the second.
INTERCEPT, SECOND_YEAR = -1.0, 1.2


@pytest.fixture
def simulated(built_once: Callable[[Callable[[Flask], None]], Flask]) -> Flask:
    return built_once(simulate)


def simulate(app: Flask) -> None:
    """Respondents whose true cannabis tick follows the logistic model in year, the other
    options ticked at random; randomized by the question's own seeded ``simulate``."""
    rng = np.random.default_rng(20261126)
    with app.app_context():
        db = get_db()
        survey = store_survey(db, parse_definition(SURVEY))
        mechanism = survey.questions[1].mechanism
        assert isinstance(mechanism, SampledOption)
        year = rng.integers(0, 2, RESPONSES)
        cannabis = rng.random(RESPONSES) < expit(INTERCEPT + SECOND_YEAR * year)
        others = rng.integers(0, 2, (RESPONSES, 2))
        answers = np.column_stack([cannabis.astype(int), others])
        reports = mechanism.simulate(answers, rng)
        for i in range(RESPONSES):
            report = (int(reports[i][0]), int(reports[i][1]))
            record_response(db, survey, {"year": int(year[i]), "used": report}, f"t-{i}")


def stored(app: Flask) -> Survey:
    with app.app_context():
        survey = get_survey(get_db(), SLUG)
    assert survey is not None
    return survey


def test_by_group_each_option_counts_only_the_reports_about_it(simulated: Flask) -> None:
    with simulated.app_context():
        db = get_db()
        survey = stored(simulated)
        result = analysis.estimate_groups(db, survey, "used", "year", option=0)
    answers = stored_answers(simulated.config["DATABASE"])
    counted = Counter((answer["year"], answer["used"]) for answer in answers)
    rows = [(group, report, n) for (group, report), n in counted.items()]
    mechanism = survey.questions[1].mechanism
    assert isinstance(mechanism, SampledOption)
    by_hand = {
        str(group): GroupCount(
            sum(n for g, report, n in rows if g == group and report == 1),  # (0, ticked)
            sum(n for g, report, n in rows if g == group and report in (0, 1)),  # about 0
        )
        for group in (0, 1)
    }
    assert 0.25 < by_hand["0"].n / (RESPONSES / 2) < 0.42  # about a third: n_0 only
    expected = estimate_by_group(by_hand, mechanism, 0.95)
    (category,) = result.categories
    assert category.category == "cannabis"
    assert [(r.n, r.estimate) for r in category.rows] == [(e.n, e.estimate) for e in expected]
    truths = (expit(INTERCEPT), expit(INTERCEPT + SECOND_YEAR))
    for row, truth in zip(category.rows, truths, strict=True):
        assert row.estimate is not None
        assert abs(row.estimate.point - truth) < 5 * row.estimate.std_error, row.groups


def test_ticked_option_j_as_an_outcome_is_fitted_on_the_reports_about_j(simulated: Flask) -> None:
    with simulated.app_context():
        db = get_db()
        survey = stored(simulated)
        result = analysis.fit_regression(db, survey, "used", ["year"], option=0)
    answers = stored_answers(simulated.config["DATABASE"])
    rows = [(answer["year"], answer["used"]) for answer in answers]
    about = [(year, report) for year, report in rows if report in (0, 1)]
    assert result.n == len(about) and result.elsewhere == RESPONSES - len(about)
    assert result.category == "cannabis" and result.dropped == 0
    mechanism = survey.questions[1].mechanism
    assert isinstance(mechanism, SampledOption)
    each = fit_randomized_logistic(
        np.array([[1.0, float(year)] for year, _report in about]),
        np.array([float(report) for _year, report in about]),
        mechanism.p_false,
        mechanism.p_true,
        ("intercept", "year=Second"),
    )
    truths = (INTERCEPT, SECOND_YEAR)
    for term, one, truth in zip(result.terms, each.coefficients, truths, strict=True):
        c = term.coefficient
        assert c.estimate == pytest.approx(one.estimate, abs=1e-7)
        assert c.estimate is not None and c.std_error is not None
        assert abs(c.estimate - truth) < 5 * c.std_error, term.name


def test_the_pages_name_the_option_and_the_reports_left_out(
    simulated: Flask, logged_in: FlaskClient
) -> None:
    base = f"/research/surveys/{SLUG}"
    groups = logged_in.get(f"{base}/groups?question=used&by=year").get_data(as_text=True)
    assert "Share ticking “cannabis”" in groups and "Share ticking “ecstasy”" in groups
    page = logged_in.get(f"{base}/regression?outcome=used.0&covariates=year")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "left out as reporting on another option" in text
