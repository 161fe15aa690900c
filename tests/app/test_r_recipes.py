"""The R recipes of docs/analysing.md, checked without R.

R is not installed here, so R's estimators are ported from their sources, line by line
where the line matters, and run on what a researcher downloads: the per-response CSV, read
as R's ``read.csv`` reads it, and its codebook. They must agree with the app's own
estimates to 1e-5.

- rr 1.4.2 (Blair, Imai & Zhou; cran/rr, R/rr.R): ``rrreg`` for ``design =
  "forced-known"`` with the codebook's ``r_rr_package`` and ``start = rep(0, k)``.
- RRreg 0.7.6 (Heck & Moshagen; danheck/RRreg): ``RRuni`` and ``RRlog`` for ``model =
  "FR"`` with the codebook's ``r_rrreg_package``.
- ``factor(levels = …)``: the codebook's ``csv_levels`` keep every row, its ``options``
  (an option starting with "=", "+", "-" or "@" has a "'" in the CSV) lose them.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from flask import Flask
from flask.testing import FlaskClient
from scipy.optimize import minimize
from scipy.special import expit

from survey_app.domain import analyses
from survey_app.domain.definitions import load_definition
from survey_app.domain.question_estimates import survey_estimates
from survey_app.privacy import simulate
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.researchers import log_in

pytestmark = pytest.mark.slow

Vector = npt.NDArray[np.float64]
SLUG = "r-recipes"
SURVEY = f"""\
slug: {SLUG}
title: R recipes
questions:
  - key: year
    text: Which year of study are you in?
    type: choice
    options: ["=First", "+Second", "-Third", "@Fourth or later"]
    sensitive: false
  - key: age
    text: How old are you?
    type: number
    min: 17
    max: 40
    sensitive: false
  - key: cheated
    text: Have you cheated on an exam?
    type: yes_no
    epsilon: 2
  - key: substance
    text: Which have you used most?
    type: choice
    options: ["None", "Cannabis", "=Stimulants"]
    mechanism: grr
    epsilon: 2
"""
RESPONSES = 400
YEAR_EFFECTS = (0.0, 0.8, -0.6, 0.5)
AGREE = 1e-5
# A yes/no question (two coins: forced "yes" and "no" alike) and an option against the rest
# (k-ary randomized response: they differ, so their order is checked too).
OUTCOMES = [("cheated", None), ("substance", 2)]


@pytest.fixture
def exported(app: Flask, researcher: str, tmp_path: Path) -> Flask:
    """The survey, owned by ada, with ``RESPONSES`` simulated respondents: a true "yes"
    to cheated follows a logistic model in year and age; every sensitive answer is
    randomized by its own mechanism's simulator (seeded, never for real answers)."""
    path = tmp_path / "r.yaml"
    path.write_text(SURVEY, encoding="utf-8")
    rng = np.random.default_rng(20261126)
    with app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        store_survey(db, load_definition(path), ada[0], "open")
        survey = stored(db)
        by_key = {question.key: question for question in survey.questions}
        year = rng.integers(0, 4, RESPONSES)
        age = rng.integers(18, 30, RESPONSES)
        truth = rng.random(RESPONSES) < expit(-0.8 + np.take(YEAR_EFFECTS, year) + 0.1 * (age - 21))
        cheated = simulate(by_key["cheated"].mechanism, truth, rng)
        substance = simulate(by_key["substance"].mechanism, rng.integers(0, 3, RESPONSES), rng)
        for i in range(RESPONSES):
            reports = {
                "year": int(year[i]),
                "age": int(age[i]),
                "cheated": bool(cheated[i]),
                "substance": int(substance[i]),
            }
            record_response(db, survey, reports, f"r-{i}")
    return app


def stored(db: Any) -> Survey:
    survey = get_survey(db, SLUG)
    assert survey is not None
    return survey


def read_csv_as_r(app: Flask) -> tuple[list[dict[str, str]], dict[str, dict[str, Any]]]:
    """The per-response CSV by R's column names (``r_columns``), and the codebook by key."""
    client: FlaskClient = app.test_client()
    assert log_in(client, "ada").status_code == 302
    text = client.get(f"/research/surveys/{SLUG}/responses.csv").get_data(as_text=True)
    book = client.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    header, *lines = list(csv.reader(io.StringIO(text)))
    names = header[:3] + [name for question in book["questions"] for name in question["r_columns"]]
    rows = [dict(zip(names, line, strict=True)) for line in lines]
    return rows, {question["key"]: question for question in book["questions"]}


def factor_codes(cells: list[str], levels: list[str]) -> list[int | None]:
    """R's ``as.integer(factor(cells, levels = levels)) - 1``: a cell that is no level is NA."""
    return [levels.index(cell) if cell in levels else None for cell in cells]


def model_matrix(rows: list[dict[str, str]], levels: list[str]) -> Vector:
    """R's ``model.matrix(~ factor(year, levels = levels) + age)``: the intercept, a 0/1
    column per level after the first (treatment coding), age."""
    codes = factor_codes([row["year"] for row in rows], levels)
    return np.array(
        [
            [1.0, *(float(code == level) for level in range(1, len(levels))), float(row["age"])]
            for code, row in zip(codes, rows, strict=True)
        ]
    )


def app_fit(app: Flask, outcome: str, option: int | None = None) -> list[float]:
    with app.app_context():
        db = get_db()
        result = analyses.fit_regression(db, stored(db), outcome, ["year", "age"], option)
    assert not result.boundary
    return [float(term.coefficient.estimate or math.nan) for term in result.terms]


# rr 1.4.2, R/rr.R (cran/rr, the version in its DESCRIPTION), ``rrreg``.


def glm_fit_logistic(x: Vector, y: Vector, weights: Vector, start: Vector) -> Vector:
    """R's ``glm(cbind(y, 1 - y) ~ x - 1, family = binomial("logit"), weights = w, start =
    par)``: iteratively reweighted least squares until the deviance changes by less than
    glm.control's epsilon, 1e-8, relative to |deviance| + 0.1."""
    beta, deviance = start, math.inf
    for _ in range(100):
        mu = expit(x @ beta)
        working = weights * mu * (1 - mu)
        beta = beta + np.linalg.solve(x.T @ (working[:, None] * x), x.T @ (weights * (y - mu)))
        mu = expit(x @ beta)
        new = -2 * float(np.sum(weights * (y * np.log(mu) + (1 - y) * np.log(1 - mu))))
        if abs(new - deviance) / (abs(new) + 0.1) < 1e-8:
            return beta
        deviance = new
    raise AssertionError("glm did not converge")


def rr_obs_llik(x: Vector, y: Vector, rr: dict[str, Any], par: Vector) -> float:
    """rr's ``obs.llik``: P(y = 1 | x) = c·logistic(xᵀβ) + d, with c = p and d = p1."""
    c, d, gx = rr["p"], rr["p1"], expit(x @ par)
    return float(np.sum(y * np.log(c * gx + d) + (1 - y) * np.log(1 - c * gx - d)))


def rr_rrreg(
    x1: Vector, y: Vector, rr: dict[str, Any], start: Vector, em_converge: float = 1e-8
) -> Vector:
    """``rrreg(y ~ …, p = rr$p, p0 = rr$p0, p1 = rr$p1, design = "forced-known", start =
    start)``, R/rr.R lines 3-115 of ``rrreg`` and ``rrcd``:

    - ``bscale <- c(1, apply(x1[,-1], 2, sd)); x <- sweep(x1, 2, bscale, "/")``
    - ``rrcd``: stop unless ``round(p + p0 + p1, 10) == 1``; ``c <- p; d <- p1``
    - ``obs.llik <- sum(y * log(c * gx + d) + (1 - y) * log(1 - c * gx - d))``
    - EM: ``w1 <- (c*gx) / (c*gx + d)``, ``w0 <- c*(1-gx) / (1-c*gx - d)``, w by y, then
      ``glm(cbind(y, 1-y) ~ x - 1, family = binomial("logit"), weights = w, start = par)``,
      while ``llik - pllik > em.converge`` (1e-8) and fewer than ``maxIter`` (10,000)
      rounds; ``stop("log-likelihood is not monotonically increasing.")`` if it falls
    - ``bpar <- c(par/bscale)``
    """
    bscale = np.r_[1.0, np.std(x1[:, 1:], axis=0, ddof=1)]
    x = x1 / bscale
    assert round(rr["p"] + rr["p0"] + rr["p1"], 10) == 1
    c, d = rr["p"], rr["p1"]
    par, pllik, counter = start, -math.inf, 0
    llik = rr_obs_llik(x, y, rr, par)
    while llik - pllik > em_converge and counter < 10_000:
        gx = expit(x @ par)
        w = np.where(y == 1, (c * gx) / (c * gx + d), c * (1 - gx) / (1 - c * gx - d))
        par = glm_fit_logistic(x, y, w, par)
        pllik, llik = llik, rr_obs_llik(x, y, rr, par)
        counter += 1
        assert llik >= pllik, "log-likelihood is not monotonically increasing."
    return par / bscale


# RRreg 0.7.6 (danheck/RRreg at fa0eca03), model "FR".


def rrreg_fr_matrix(p: list[float]) -> Vector:
    """``getPW(model = "FR", p)``, R/RRlin_getPW.R lines 85-94: ``PW[i, j]`` =
    P(respond i | true j) = p[i] off the diagonal, 1 - sum(p[-i]) on it."""
    m = len(p)
    pw = np.array([[p[i]] * m for i in range(m)], dtype=float)
    for i in range(m):
        pw[i, i] = 1 - (sum(p) - p[i])
    return pw


def rrreg_rruni_fr(response: list[int], p: list[float]) -> list[float]:
    """``RRuni(response, model = "FR", p = p)``, R/RRuni_models.R lines 136-161:
    ``pTrue <- 1 - sum(p)``; ``pi[i] <- (lambda[i] - p[i]) / pTrue``, lambda[i] the share
    of responses i - 1."""
    n, p_true = len(response), 1 - sum(p)
    return [(response.count(i) / n - p[i]) / p_true for i in range(len(p))]


def rrreg_rrlog_fr(x: Vector, y: Vector, p: list[float]) -> Vector:
    """``RRlog(y ~ …, model = "FR", p = p)``'s estimate: the maximum of ``RRlog_loglik``,
    R/RRlog_fit.R lines 64-117: ``pi <- 1/(1 + exp(-X %*% beta))``, ``p <- getPW(model,
    prand)[2, ]`` (the row of response 1), ``p1 <- pi * p["1"] + (1 - pi) * p["0"]``,
    ``sum(dbinom(y, n.response, p1, log = TRUE))``. RRlog climbs it with optim from an EM
    start; here SciPy's BFGS with the exact gradient, from zero."""
    given_false, given_true = rrreg_fr_matrix(p)[1]

    def minus_loglik(beta: Vector) -> tuple[float, Vector]:
        pi = expit(x @ beta)
        p1 = pi * given_true + (1 - pi) * given_false
        loglik = np.sum(y * np.log(p1) + (1 - y) * np.log(1 - p1))
        slope = (y / p1 - (1 - y) / (1 - p1)) * (given_true - given_false) * pi * (1 - pi)
        return -float(loglik), -(x.T @ slope)

    fit = minimize(minus_loglik, np.zeros(x.shape[1]), jac=True, method="BFGS", tol=1e-12)
    return np.asarray(fit.x, dtype=float)


def complete(
    rows: list[dict[str, str]], key: str, outcome: Callable[[dict[str, str]], float]
) -> tuple[list[dict[str, str]], Vector]:
    """``na.omit``: the rows that answered the outcome ``key`` and every covariate, and
    their 0/1 outcome."""
    kept = [row for row in rows if row["year"] and row["age"] and row[key]]
    return kept, np.array([outcome(row) for row in kept])


def reported_in(question: dict[str, Any], option: int | None) -> Callable[[dict[str, str]], float]:
    """The 0/1 outcome: a yes/no report, or one option against the rest, the option's
    text as the CSV writes it (``as.integer(d$substance == "'=Stimulants")``)."""
    key = question["key"]
    if option is None:
        return lambda row: float(row[key])
    level = question["csv_levels"][option]
    return lambda row: float(row[key] == level)


def test_the_codebooks_levels_keep_every_row_and_the_options_lose_them(exported: Flask) -> None:
    """The failure the issue reports: ``factor(d$year, levels = <the options>)`` turned
    every row of an option starting with "=" into NA."""
    rows, book = read_csv_as_r(exported)
    year = [row["year"] for row in rows]
    assert book["year"]["csv_levels"] == ["'=First", "'+Second", "'-Third", "'@Fourth or later"]
    assert None not in factor_codes(year, book["year"]["csv_levels"])
    assert factor_codes(year, book["year"]["options"]) == [None] * len(rows)


@pytest.mark.parametrize(("outcome", "option"), OUTCOMES)
def test_rr_rrreg_from_zero_fits_what_the_app_fits(
    exported: Flask, outcome: str, option: int | None
) -> None:
    """The documented call, ``start = rep(0, k)``, on the CSV and ``r_rr_package``."""
    rows, book = read_csv_as_r(exported)
    kept, y = complete(rows, outcome, reported_in(book[outcome], option))
    x = model_matrix(kept, book["year"]["csv_levels"])
    rr = book[outcome]["r_rr_package"]
    assert rr["design"] == "forced-known"
    start = np.zeros(x.shape[1])
    estimate = rr_rrreg(x, y, rr, start)
    app = np.array(app_fit(exported, outcome, option))
    # rr's EM stops once a round gains less than em.converge = 1e-8 of log-likelihood,
    # short of the top (2e-5 off here): the app's estimate is higher on rr's own
    # likelihood, and with em.converge = 1e-12 rr climbs to it.
    assert estimate == pytest.approx(app, abs=1e-4)
    assert rr_obs_llik(x, y, rr, app) >= rr_obs_llik(x, y, rr, estimate)
    assert rr_rrreg(x, y, rr, start, em_converge=1e-12) == pytest.approx(app, abs=AGREE)


@pytest.mark.parametrize(("outcome", "option"), OUTCOMES)
def test_rrreg_rrlog_with_the_fr_design_fits_what_the_app_fits(
    exported: Flask, outcome: str, option: int | None
) -> None:
    """``RRlog(y ~ year + age, model = "FR", p = r_rrreg_package$p)``: a yes/no question,
    and one option against the rest (the option's text as the CSV writes it)."""
    rows, book = read_csv_as_r(exported)
    question = book[outcome]
    kept, y = complete(rows, outcome, reported_in(question, option))
    assert question["r_rrreg_package"]["model"] == "FR"
    x = model_matrix(kept, book["year"]["csv_levels"])
    estimate = rrreg_rrlog_fr(x, y, question["r_rrreg_package"]["p"])
    assert estimate == pytest.approx(app_fit(exported, outcome, option), abs=AGREE)


def test_rrreg_rruni_gives_the_dashboards_shares(exported: Flask) -> None:
    """``RRuni(cheated, model = "FR", p = p)`` for yes/no (``pi[2]`` is the share of
    yes), and every option at once from the reported option's code, ``match(d$substance,
    csv_levels) - 1``, with ``p_options``: the dashboard's unbiased shares."""
    rows, book = read_csv_as_r(exported)
    with exported.app_context():
        db = get_db()
        shares = {
            item.question.key: [c.estimate.unclipped for c in item.categories if c.estimate]
            for item in survey_estimates(db, stored(db))
        }
    cheated = [int(row["cheated"]) for row in rows if row["cheated"]]
    p = book["cheated"]["r_rrreg_package"]["p"]
    assert rrreg_rruni_fr(cheated, p)[1] == pytest.approx(shares["cheated"][0], abs=1e-12)
    design = book["substance"]["r_rrreg_package"]
    codes = factor_codes([row["substance"] for row in rows], book["substance"]["csv_levels"])
    assert None not in codes
    estimate = rrreg_rruni_fr([code for code in codes if code is not None], design["p_options"])
    assert estimate == pytest.approx(shares["substance"], abs=1e-12)
