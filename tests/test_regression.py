"""Randomized-response logistic regression: likelihood, recovery, coverage, design matrix."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from survey_app.privacy import (
    FAIR_COINS,
    DiscreteLaplace,
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    TwoCoinDesign,
    regression,
    simulate,
    simulate_reports,
)
from survey_app.privacy.regression import (
    Covariate,
    DesignMatrixError,
    NotConvergedError,
    SeparationError,
    TooFewRowsError,
    UnsupportedOutcomeError,
    design_from_columns,
    design_from_responses,
    fit_question,
    fit_randomized_logistic,
)

BETA = np.array([-0.8, 0.6, -0.9])  # intercept, a number covariate, a 0/1 covariate
DESIGN = TwoCoinDesign.from_epsilon(2.0)


def simulated(
    n: int, rng: np.random.Generator, beta: npt.NDArray[np.float64] = BETA
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """A design matrix and true answers drawn from the logistic model with ``beta``."""
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.random(n) < 0.4])
    return x, rng.random(n) < expit(x @ beta)


def negative_log_likelihood(
    beta: npt.NDArray[np.float64],
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.bool_],
    p0: float,
    p1: float,
) -> float:
    """The model written out independently: -Σ log P(report | x) with P(yes) = p0 + (p1 - p0)σ."""
    mu = p0 + (p1 - p0) * expit(x @ beta)
    return -float(np.sum(np.where(y, np.log(mu), np.log(1 - mu))))


def test_weighted_rows_fit_exactly_like_the_responses_they_stand_for() -> None:
    """Distinct (covariates, report) rows with their counts: the same β̂, standard errors and
    log-likelihood as every response given one by one."""
    rng = np.random.default_rng(7)
    n = 4_000
    x = np.column_stack([np.ones(n), rng.integers(0, 4, n), rng.random(n) < 0.4])
    y = simulate_reports(rng.random(n) < expit(x @ BETA), DESIGN, rng)
    rows, weights = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
    assert len(rows) <= 16
    p0, p1 = DESIGN.p_false, DESIGN.p_true
    each = fit_randomized_logistic(x, y, p0, p1)
    grouped = fit_randomized_logistic(rows[:, :3], rows[:, 3], p0, p1, weights=weights)
    for one, other in zip(each.coefficients, grouped.coefficients, strict=True):
        assert other.estimate == pytest.approx(one.estimate, abs=1e-8)
        assert other.std_error == pytest.approx(one.std_error, rel=1e-8)
    assert grouped.log_likelihood == pytest.approx(each.log_likelihood, rel=1e-10)
    assert grouped.n == n


def test_the_estimate_maximizes_the_written_out_likelihood() -> None:
    rng = np.random.default_rng(101)
    x, truth = simulated(3_000, rng)
    y = simulate_reports(truth, DESIGN, rng)
    p0, p1 = DESIGN.p_false, DESIGN.p_true
    fit = fit_randomized_logistic(x, y, p0, p1, ["intercept", "age", "member"])
    beta = np.array([c.estimate for c in fit.coefficients])
    reference = minimize(negative_log_likelihood, np.zeros(3), args=(x, y, p0, p1), method="BFGS")
    assert beta == pytest.approx(reference.x, abs=1e-4)
    assert fit.log_likelihood == pytest.approx(-reference.fun, rel=1e-9)
    assert [c.name for c in fit.coefficients] == ["intercept", "age", "member"]


def test_standard_errors_are_the_inverse_observed_information() -> None:
    # The Hessian by central differences of the written-out likelihood, against the fit's.
    rng = np.random.default_rng(202)
    x, truth = simulated(3_000, rng)
    y = simulate_reports(truth, DESIGN, rng)
    p0, p1 = DESIGN.p_false, DESIGN.p_true
    fit = fit_randomized_logistic(x, y, p0, p1)
    beta = np.array([c.estimate for c in fit.coefficients])
    h = 1e-4
    hessian = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            ei, ej = np.eye(3)[i] * h, np.eye(3)[j] * h

            def f(b: npt.NDArray[np.float64]) -> float:
                return negative_log_likelihood(b, x, y, p0, p1)

            hessian[i, j] = (
                f(beta + ei + ej) - f(beta + ei - ej) - f(beta - ei + ej) + f(beta - ei - ej)
            ) / (4 * h * h)
    covariance = np.linalg.inv(hessian)
    assert np.array(fit.covariance) == pytest.approx(covariance, rel=1e-3)
    z = 1.959963984540054
    for c, se in zip(fit.coefficients, np.sqrt(np.diag(covariance)), strict=True):
        assert c.std_error == pytest.approx(se, rel=1e-3)
        assert (c.low, c.high) == pytest.approx(
            (c.estimate - z * c.std_error, c.estimate + z * c.std_error)
        )


def test_plain_reports_give_ordinary_logistic_regression() -> None:
    # p0 = 0, t = 1: the reports are the answers, the usual logistic likelihood.
    rng = np.random.default_rng(303)
    x, truth = simulated(2_000, rng)
    fit = fit_randomized_logistic(x, truth, 0.0, 1.0)
    reference = minimize(negative_log_likelihood, np.zeros(3), args=(x, truth, 0.0, 1.0))
    assert [c.estimate for c in fit.coefficients] == pytest.approx(reference.x, abs=1e-4)


def test_recovers_known_coefficients_within_five_standard_errors() -> None:
    rng = np.random.default_rng(404)
    x, truth = simulated(40_000, rng)
    fit = fit_randomized_logistic(x, simulate_reports(truth, FAIR_COINS, rng), 0.25, 0.75)
    for c, true in zip(fit.coefficients, BETA, strict=True):
        assert abs(c.estimate - true) < 5 * c.std_error, (c, true)
        assert c.std_error < 0.1  # and the fit is informative, not a vacuous pass


def test_wald_intervals_cover_at_their_nominal_rate() -> None:
    """1,000 seeded surveys of 2,000: each coefficient's 95% interval, checked separately."""
    rng = np.random.default_rng(505)
    replicates = 1_000
    covered = np.zeros(3)
    for _ in range(replicates):
        x, truth = simulated(2_000, rng)
        fit = fit_randomized_logistic(
            x, simulate_reports(truth, DESIGN, rng), DESIGN.p_false, DESIGN.p_true
        )
        covered += [c.low <= b <= c.high for c, b in zip(fit.coefficients, BETA, strict=True)]
    band = 5 * math.sqrt(0.95 * 0.05 / replicates)
    assert np.all(np.abs(covered / replicates - 0.95) <= band), covered


def option_truth(
    x: npt.NDArray[np.float64], rng: np.random.Generator, k: int, option: int
) -> npt.NDArray[np.int64]:
    """True options with P(option | x) = logistic(xᵀβ) and the rest spread uniformly."""
    chosen = rng.random(x.shape[0]) < expit(x @ BETA)
    other = rng.integers(0, k - 1, size=x.shape[0])
    other = other + (other >= option)
    return np.where(chosen, option, other)


@pytest.mark.parametrize(
    "mechanism",
    [
        GeneralizedRandomizedResponse.from_epsilon(4, 2.0),
        OptimizedUnaryEncoding.from_epsilon(4, 2.0),
    ],
)
def test_one_option_versus_the_rest(
    mechanism: GeneralizedRandomizedResponse | OptimizedUnaryEncoding,
) -> None:
    rng = np.random.default_rng(606)
    x, _ = simulated(30_000, rng)
    reports = simulate(mechanism, option_truth(x, rng, 4, option=2), rng)
    stored = (
        [int(r) for r in reports]
        if reports.ndim == 1
        else ["".join(map(str, bits)) for bits in reports]
    )
    columns = {"substance": stored, "age": list(x[:, 1]), "member": [int(v) for v in x[:, 2]]}
    covariates = [Covariate("age", "number"), Covariate("member", "choice", ("no", "yes"))]
    design = design_from_columns(columns, "substance", covariates)
    fit = fit_question(design, mechanism, option=2)
    assert [c.name for c in fit.coefficients] == ["intercept", "age", "member=yes"]
    for c, true in zip(fit.coefficients, BETA, strict=True):
        assert abs(c.estimate - true) < 5 * c.std_error, (c, true)


def test_numbers_and_misused_options_are_refused_plainly() -> None:
    design = design_from_columns(
        {"y": [1, 0] * 20, "a": list(range(40))}, "y", [Covariate("a", "number")]
    )
    with pytest.raises(UnsupportedOutcomeError, match="yes/no questions and for the options"):
        fit_question(design, DiscreteLaplace.from_epsilon(0, 10, 1.0))  # type: ignore[arg-type]
    with pytest.raises(UnsupportedOutcomeError, match="no options"):
        fit_question(design, FAIR_COINS, option=1)
    with pytest.raises(UnsupportedOutcomeError, match="between 0 and 3"):
        fit_question(design, GeneralizedRandomizedResponse.from_epsilon(4, 1.0))


# --- errors ---------------------------------------------------------------------------


def test_too_few_rows() -> None:
    rng = np.random.default_rng(1)
    x, truth = simulated(29, rng)
    with pytest.raises(TooFewRowsError, match="29 responses are too few for 3 coefficients"):
        fit_randomized_logistic(x, truth, 0.25, 0.75)


def test_separation_is_named() -> None:
    # In the group with x = 1 fewer report "yes" than even π = 0 produces on average:
    # the share there is estimated at 0 and its coefficient runs to -∞.
    group = np.repeat([0.0, 1.0], 500)
    x = np.column_stack([np.ones(1_000), group])
    y = np.concatenate([np.arange(500) < 300, np.arange(500) < 100])  # 60% and 20% < p0 = 25%
    with pytest.raises(SeparationError, match="0% or 100%"):
        fit_randomized_logistic(x, y, 0.25, 0.75)


def test_collinear_columns() -> None:
    rng = np.random.default_rng(2)
    x, truth = simulated(500, rng)
    with pytest.raises(DesignMatrixError, match="cannot be told apart"):
        fit_randomized_logistic(np.column_stack([x, 2 * x[:, 1]]), truth, 0.25, 0.75)


def test_non_convergence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regression, "MAX_ITERATIONS", 1)
    rng = np.random.default_rng(3)
    x, truth = simulated(2_000, rng)
    with pytest.raises(NotConvergedError, match="did not settle within 1 steps"):
        fit_randomized_logistic(x, simulate_reports(truth, FAIR_COINS, rng), 0.25, 0.75)


def test_bad_reports_and_parameters() -> None:
    x = np.column_stack([np.ones(40), np.arange(40.0)])
    with pytest.raises(ValueError, match="0 or 1"):
        fit_randomized_logistic(x, np.full(40, 2), 0.25, 0.75)
    with pytest.raises(ValueError, match="signal"):
        fit_randomized_logistic(x, np.zeros(40), 0.5, 0.5)


# --- the design matrix ------------------------------------------------------------------


YEAR = Covariate("year", "choice", ("1", "2", "3", "4+"))
AGE = Covariate("age", "number")


def test_design_from_responses_codes_treatment_dummies() -> None:
    responses: list[dict[str, object]] = [
        {"cheated": 1, "year": 0, "age": 19},
        {"cheated": 0, "year": 2, "age": 21},
        {"cheated": 1, "year": 3, "age": 25},
        {"cheated": None, "year": 1, "age": 20},  # skipped outcome: dropped
        {"cheated": 0, "age": 22},  # skipped covariate: dropped
        {"cheated": 0, "year": 0, "age": 23},
    ]
    design = design_from_responses(responses, "cheated", [YEAR, AGE])
    # Option "2" (index 1) is only in a dropped row: no column for it.
    assert design.names == ("intercept", "year=3", "year=4+", "age")
    assert design.matrix.tolist() == [
        [1, 0, 0, 19],
        [1, 1, 0, 21],
        [1, 0, 1, 25],
        [1, 0, 0, 23],
    ]
    assert design.outcome == (1, 0, 1, 0)
    assert design.dropped == 2


def test_reference_is_the_first_option_anyone_chose() -> None:
    design = design_from_columns({"y": [1, 0, 1], "year": [2, 3, 2]}, "y", [YEAR])
    assert design.names == ("intercept", "year=4+")


@pytest.mark.parametrize(
    ("columns", "covariates", "message"),
    [
        (
            {"y": [1, 0], "s": [1, 0]},
            [Covariate("s", "choice", ("a", "b"), sensitive=True)],
            "'s' is a sensitive question",
        ),
        ({"y": [1, 0], "age": [20, 20]}, [AGE], "'age' has the same value for every respondent"),
        ({"y": [1, 0], "year": [1, 1]}, [YEAR], "every respondent gave the same answer to 'year'"),
        ({"y": [1, 0], "year": [0, 4]}, [YEAR], "not option indices 0..3"),
        ({"y": [1, 0], "age": ["20", "21"]}, [AGE], "'age' has values that are not numbers"),
        ({"y": [1, 0]}, [AGE], "no values for 'age'"),
        ({"y": [1, 0], "age": [1]}, [AGE], "one value per response"),
        ({"y": [1, 0]}, [Covariate("y", "number")], "'y' is the outcome"),
        ({"y": [1, 0]}, [], "at least one covariate"),
    ],
)
def test_design_errors_are_plain(
    columns: dict[str, list[object]], covariates: list[Covariate], message: str
) -> None:
    with pytest.raises(DesignMatrixError, match=message):
        design_from_columns(columns, "y", covariates)
