"""Odds ratios and p-values beside the regression's log odds: the formulas exactly, the
p-value's calibration under a true null coefficient, and the page showing them as reports
quote them (the CSV's columns are checked in test_analysis.py)."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from scipy.special import expit
from scipy.stats import norm

from survey_app.domain.definitions import load_definition
from survey_app.privacy import TwoCoinDesign, simulate_reports
from survey_app.privacy.regression import Coefficient, fit_randomized_logistic
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from survey_app.web.research.analysis_pages import odds_ratio_text, p_value_text
from tests.support.researchers import log_in
from tests.support.statistics import within_five_se

SLUG = "odds-test"
SURVEY = f"""\
slug: {SLUG}
title: Odds test
questions:
  - key: year
    text: Which year of study are you in?
    type: choice
    options: [First, Second, Third]
    sensitive: false
  - key: cheated
    text: Have you cheated on an exam?
    type: yes_no
    epsilon: 3
"""


@pytest.mark.parametrize(
    ("estimate", "std_error"),
    [(0.0, 1.0), (0.147573, 0.404711), (-1.288145, 0.63242), (3.0, 0.5), (-9.0, 1.0), (40.0, 1.0)],
)
def test_the_p_value_is_wald_s_two_sided_normal_tail_exactly(
    estimate: float, std_error: float
) -> None:
    c = Coefficient("x", estimate, std_error, estimate - 1, estimate + 1)
    assert c.p_value == 2 * norm.sf(abs(estimate / std_error))


def test_the_odds_ratio_and_its_interval_are_e_to_the_log_odds_and_its_bounds() -> None:
    c = Coefficient("year=Second", -1.288145, 0.63242, -2.641175, -0.097144)
    assert c.odds_ratio == math.exp(-1.288145)
    assert c.odds_ratio_interval == (math.exp(-2.641175), math.exp(-0.097144))


def test_infinite_or_unpinned_estimates_have_no_p_value_and_open_odds_ratios() -> None:
    running = Coefficient("x", math.inf, None, 0.7, math.inf)
    assert running.odds_ratio == math.inf and running.p_value is None
    assert running.odds_ratio_interval == (math.exp(0.7), math.inf)
    unpinned = Coefficient("x", None, None, -math.inf, math.inf)
    assert unpinned.odds_ratio is None and unpinned.p_value is None
    assert unpinned.odds_ratio_interval == (0.0, math.inf)
    beyond_floats = Coefficient("x", 800.0, 300.0, -1.0, 1000.0)  # e^800 overflows a float
    assert beyond_floats.odds_ratio == math.inf and beyond_floats.odds_ratio_interval[1] == math.inf


@pytest.mark.slow
def test_under_a_true_null_slope_p_falls_below_005_about_one_time_in_twenty() -> None:
    """1,000 seeded surveys of 1,000 whose true slope is 0 (a 27% share whatever x, x on a
    five-point scale, fair coins), fitted from their counts as the dashboard fits them:
    the share with p < 0.05 is within five standard errors of 0.05 (0.016 to 0.085)."""
    rng = np.random.default_rng(20261201)
    design = TwoCoinDesign.from_epsilon(math.log(3))
    replicates, n, rejected = 1_000, 1_000, 0
    for _ in range(replicates):
        x = rng.choice(np.arange(-2.0, 3.0), n)
        reports = simulate_reports(rng.random(n) < expit(-1.0 + 0.0 * x), design, rng)
        rows, weights = np.unique(np.column_stack([x, reports]), axis=0, return_counts=True)
        matrix = np.column_stack([np.ones(len(rows)), rows[:, 0]])
        fit = fit_randomized_logistic(
            matrix, rows[:, 1], design.p_false, design.p_true, weights=weights
        )
        slope = fit.coefficients[1].p_value
        assert slope is not None  # no boundary fits at this size
        rejected += slope < 0.05
    assert within_five_se(rejected, replicates, 0.05), rejected / replicates


@pytest.mark.parametrize(
    ("language", "p", "shown"),
    [
        ("en", 0.0123456, "0.012"),
        ("en", 0.001, "0.001"),
        ("en", 0.000999, "< 0.001"),
        ("en", 1e-300, "< 0.001"),
        ("en", 0.99999, "1.000"),
        ("en", None, "—"),
        ("ko", 0.0004, "< 0.001"),
    ],
)
def test_p_values_are_shown_as_reports_quote_them(
    app: Flask, language: str, p: float | None, shown: str
) -> None:
    with app.test_request_context(f"/?lang={language}"):
        assert p_value_text(p) == shown


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [
        (1.159018, "1.16"),
        (0.0712775, "0.07"),
        (0.00123, "1.23E-3"),
        (2.5e26, "2.50E26"),
        (12_345.678, "12,345.68"),
        (0.0, "0.00"),
        (math.inf, "∞"),
        (None, "—"),
    ],
)
def test_odds_ratios_get_two_decimals_or_powers_of_ten(
    app: Flask, ratio: float | None, shown: str
) -> None:
    with app.test_request_context("/"):
        assert odds_ratio_text(ratio) == shown


def store_groups(app: Flask, groups: list[tuple[int, int, int]]) -> None:
    """(year index, respondents, reported yes) per group."""
    with app.app_context():
        db = get_db()
        survey = get_survey(db, SLUG)
        assert survey is not None
        for year, respondents, yes in groups:
            for j in range(respondents):
                answers = {"year": year, "cheated": j < yes}
                record_response(db, survey, answers, f"{year}-{j}")


@pytest.fixture
def odds_survey(app: Flask, researcher: str, tmp_path: Path) -> Flask:
    path = tmp_path / "odds.yaml"
    path.write_text(SURVEY, encoding="utf-8")
    with app.app_context():
        db = get_db()
        owner = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        store_survey(db, load_definition(path), owner[0], "open")
    return app


def cells(page: str, label: str) -> list[str]:
    """The texts of the cells labelled ``label`` (``data-label``), in row order."""
    found = re.findall(rf'data-label="{re.escape(label)}">([^<]*)</td>', page)
    return [html.unescape(" ".join(text.split())) for text in found]


def test_the_page_shows_odds_ratios_their_intervals_and_p_values(odds_survey: Flask) -> None:
    """Second-years report yes far more often than first-years (p < 0.001); third-years a
    little more (p between 0.001 and 1): each p-value as reports quote it, each odds ratio
    e to its estimate, each odds-ratio interval e to the log-odds interval's bounds."""
    store_groups(odds_survey, [(0, 200, 40), (1, 200, 150), (2, 200, 55)])
    client = odds_survey.test_client()
    assert log_in(client, "ada").status_code == 302
    response = client.get(f"/research/surveys/{SLUG}/regression?outcome=cheated&covariates=year")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "as odds ratios" in page and "Wald p-values" in page
    # e to the log odds as shown (to three decimals), so equal up to both roundings.
    log_odds = [float(text) for text in cells(page, "Estimate")]
    log_odds += [float(b) for text in cells(page, "Interval") for b in text.split(" – ")]
    odds = [float(text) for text in cells(page, "Odds ratio")]
    odds += [float(b) for text in cells(page, "Odds ratio interval") for b in text.split(" – ")]
    assert len(odds) == len(log_odds) == 9
    assert odds == [pytest.approx(math.exp(b), rel=1e-3, abs=0.005) for b in log_odds]
    p_values = cells(page, "p-value")
    assert p_values[1] == "< 0.001"
    assert re.fullmatch(r"0\.\d{3}", p_values[2]) and float(p_values[2]) >= 0.001, p_values
