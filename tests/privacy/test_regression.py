"""Randomized-response logistic regression: likelihood, recovery, coverage, design matrix."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit

from survey_app.privacy import (
    FAIR_COINS,
    DiscreteLaplace,
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    QuestionType,
    TwoCoinDesign,
    regression,
    simulate,
    simulate_reports,
)
from survey_app.privacy.regression import (
    Coefficient,
    Covariate,
    DesignMatrixError,
    NotConvergedError,
    TooFewRowsError,
    UnsupportedOutcomeError,
    design_from_columns,
    design_from_responses,
    fit_question,
    fit_randomized_logistic,
)

BETA = np.array([-0.8, 0.6, -0.9])  # intercept, a number covariate, a 0/1 covariate
DESIGN = TwoCoinDesign.from_epsilon(2.0)
Z = 1.959963984540054  # the 95% normal quantile: z² is the χ²₁ cutoff
SCALE = np.arange(-2.0, 3.0)  # a centred five-point scale, as in docs/regression.md


def simulated(
    n: int, rng: np.random.Generator, beta: npt.NDArray[np.float64] = BETA
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """A design matrix and true answers drawn from the logistic model with ``beta``."""
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.random(n) < 0.4])
    return x, rng.random(n) < expit(x @ beta)


def z_score(c: Coefficient, true: float) -> float:
    """|β̂ - β|/se for a coefficient of a fit that is not on the boundary."""
    assert c.estimate is not None and c.std_error is not None
    return abs(c.estimate - true) / c.std_error


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
    for c, se in zip(fit.coefficients, np.sqrt(np.diag(covariance)), strict=True):
        assert c.std_error == pytest.approx(se, rel=1e-3)


def test_plain_reports_give_ordinary_logistic_regression() -> None:
    # p0 = 0, t = 1: the reports are the answers, the usual logistic likelihood.
    rng = np.random.default_rng(303)
    x, truth = simulated(2_000, rng)
    fit = fit_randomized_logistic(x, truth, 0.0, 1.0)
    reference = minimize(negative_log_likelihood, np.zeros(3), args=(x, truth, 0.0, 1.0))
    assert [c.estimate for c in fit.coefficients] == pytest.approx(reference.x, abs=1e-4)


@pytest.mark.slow
def test_recovers_known_coefficients_within_five_standard_errors() -> None:
    rng = np.random.default_rng(404)
    x, truth = simulated(40_000, rng)
    fit = fit_randomized_logistic(x, simulate_reports(truth, FAIR_COINS, rng), 0.25, 0.75)
    for c, true in zip(fit.coefficients, BETA, strict=True):
        assert z_score(c, true) < 5, (c, true)
        assert c.std_error is not None and c.std_error < 0.1  # informative, not a vacuous pass


@pytest.mark.slow
def test_profile_and_wald_intervals_cover_at_their_nominal_rate() -> None:
    """1,000 seeded surveys of 2,000, a well-informed fit: each coefficient's 95% profile
    interval (shown) and Wald interval (from the standard error), checked separately. The
    number covariate is a five-point scale, so each survey is fitted from its counts of
    distinct rows, as the dashboard fits them."""
    rng = np.random.default_rng(505)
    replicates, n = 1_000, 2_000
    profile, wald = np.zeros(3), np.zeros(3)
    for _ in range(replicates):
        x = np.column_stack([np.ones(n), rng.choice(SCALE, n), rng.random(n) < 0.4])
        y = simulate_reports(rng.random(n) < expit(x @ BETA), DESIGN, rng)
        rows, weights = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
        fit = fit_randomized_logistic(
            rows[:, :3], rows[:, 3], DESIGN.p_false, DESIGN.p_true, weights=weights
        )
        assert not fit.boundary
        pairs = list(zip(fit.coefficients, BETA, strict=True))
        profile += [c.low <= b <= c.high for c, b in pairs]
        wald += [z_score(c, b) <= Z for c, b in pairs]
    band = 5 * math.sqrt(0.95 * 0.05 / replicates)
    assert np.all(np.abs(profile / replicates - 0.95) <= band), profile
    assert np.all(np.abs(wald / replicates - 0.95) <= band), wald


# --- profile-likelihood intervals, rare outcomes and boundary fits --------------------


def profile_deviance(
    b: float, j: int, x: npt.NDArray[np.float64], y: npt.NDArray[np.bool_], fit: object
) -> float:
    """2·(ℓ(β̂) - max{ℓ : β_j = b}), written out independently: BFGS over the other
    coefficients from several starts (this likelihood need not be concave)."""
    assert isinstance(fit, regression.RegressionFit)
    p0, p1 = fit.p_false, fit.p_true
    others = [k for k in range(x.shape[1]) if k != j]
    estimate = np.array([c.estimate for c in fit.coefficients])

    def constrained(rest: npt.NDArray[np.float64]) -> float:
        return negative_log_likelihood(np.insert(rest, j, b), x, y, p0, p1)

    starts = [estimate[others], np.zeros(len(others))]
    best = min(minimize(constrained, s, method="BFGS").fun for s in starts)
    return 2 * (best - negative_log_likelihood(estimate, x, y, p0, p1))


def rare_survey(seed: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The audit's rare outcome: 300 respondents, logistic(-3 + 0.5·x) (a 5% share) on a
    five-point scale x, ε = 1."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(300), rng.choice(SCALE, 300)])
    truth = rng.random(300) < expit(x @ np.array([-3.0, 0.5]))
    return x, simulate_reports(truth, TwoCoinDesign.from_epsilon(1.0), rng)


def test_profile_bounds_are_where_the_likelihood_ratio_reaches_the_cutoff() -> None:
    """A well-informed fit: at each bound the independently profiled deviance is z², and
    the interval is Wald's to within a tenth of a standard error (the likelihood is nearly
    quadratic there)."""
    rng = np.random.default_rng(909)
    x, truth = simulated(3_000, rng)
    y = simulate_reports(truth, DESIGN, rng)
    fit = fit_randomized_logistic(x, y, DESIGN.p_false, DESIGN.p_true)
    for j, c in enumerate(fit.coefficients):
        assert c.std_error is not None and c.estimate is not None
        for bound in (c.low, c.high):
            assert profile_deviance(bound, j, x, y, fit) == pytest.approx(Z**2, abs=2e-3)
        wald = (c.estimate - Z * c.std_error, c.estimate + Z * c.std_error)
        assert (c.low, c.high) == pytest.approx(wald, abs=0.1 * c.std_error)


def test_a_rare_outcome_gets_the_skewed_profile_interval_not_wald() -> None:
    """The audit's case, one seeded survey: the estimate (-2.64) is finite, but the
    likelihood is nearly flat towards "no one". Wald's symmetric interval would be -4.46 to
    -0.82; yet even a share of 0 at x = 0 (the intercept at the edge, -60) is within the
    cutoff, so the interval is open below, and above it stops where the profiled deviance
    reaches z², at -1.50: nearer the estimate than Wald's bound."""
    x, y = rare_survey(seed=11)
    design = TwoCoinDesign.from_epsilon(1.0)
    fit = fit_randomized_logistic(x, y, design.p_false, design.p_true)
    intercept = fit.coefficients[0]
    assert not fit.boundary and intercept.estimate is not None
    assert intercept.std_error is not None
    assert intercept.low == -math.inf
    assert profile_deviance(-60.0, 0, x, y, fit) < Z**2
    assert profile_deviance(intercept.high, 0, x, y, fit) == pytest.approx(Z**2, abs=2e-3)
    # Skewed: the upper bound is nearer the estimate than Wald's, the lower one further.
    assert intercept.high - intercept.estimate < Z * intercept.std_error


def option_truth(
    x: npt.NDArray[np.float64], rng: np.random.Generator, k: int, option: int
) -> npt.NDArray[np.int64]:
    """True options with P(option | x) = logistic(xᵀβ) and the rest spread uniformly."""
    chosen = rng.random(x.shape[0]) < expit(x @ BETA)
    other = rng.integers(0, k - 1, size=x.shape[0])
    other = other + (other >= option)
    return np.where(chosen, option, other)


@pytest.mark.slow
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
    covariates = [
        Covariate("age", QuestionType.NUMBER),
        Covariate("member", QuestionType.CHOICE, ("no", "yes")),
    ]
    design = design_from_columns(columns, "substance", covariates)
    fit = fit_question(design, mechanism, option=2)
    assert [c.name for c in fit.coefficients] == ["intercept", "age", "member=yes"]
    for c, true in zip(fit.coefficients, BETA, strict=True):
        assert z_score(c, true) < 5, (c, true)


def test_numbers_and_misused_options_are_refused_plainly() -> None:
    design = design_from_columns(
        {"y": [1, 0] * 20, "a": list(range(40))}, "y", [Covariate("a", QuestionType.NUMBER)]
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


def brute_profile(
    b: float, j: int, x: npt.NDArray[np.float64], y: npt.NDArray[np.bool_], p0: float, p1: float
) -> float:
    """max{ℓ : β_j = b} for a two-coefficient model by brute force: the other coefficient
    over a grid from -1000 to 1000 (steep slopes included: there the likelihood can have
    its highest ridge), refined between the grid points around the best."""
    grid = np.geomspace(1e-3, 1e3, 400)
    grid = np.concatenate([-grid[::-1], [0.0], grid])
    k = 1 - j

    def log_likelihood(c: float) -> float:
        beta = np.empty(2)
        beta[j], beta[k] = b, c
        return -negative_log_likelihood(beta, x, y, p0, p1)

    values = [log_likelihood(c) for c in grid]
    i = int(np.argmax(values))
    low, high = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    refined = minimize_scalar(lambda c: -log_likelihood(c), bounds=(low, high), method="bounded")
    return max(values[i], -float(refined.fun))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [31, 39, 58, 64])
def test_rare_fits_match_a_brute_force_profile(seed: int) -> None:
    """Seeded rare surveys (ε = 1, n = 300) where the likelihood's shape matters. Seeds 31
    and 64: from the overall share Newton settles on a lesser peak; the highest is a steep
    slope making the share 0 on most of the scale, which the profiles find (``_profiled``
    refits from there). Seed 39: stepping out from the last fit alone, Newton hops to a
    lesser ridge; drawn on as a straight line, the path stays on its own (``_Profile``).
    Seed 58: the path follows a steep slope of one sign while the other sign's is higher
    out at the edge, found only from the mirrored start (``_Profile.off_path``). The fit's
    maximum is the brute-force one, every finite bound is where the brute-force deviance
    reaches z², and at an infinite bound's edge the brute-force deviance is below z²."""
    x, y = rare_survey(seed)
    rows, weights = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
    x, y = np.repeat(rows[:, :2], weights, axis=0), np.repeat(rows[:, 2], weights) == 1
    design = TwoCoinDesign.from_epsilon(1.0)
    p0, p1 = design.p_false, design.p_true
    fit = fit_randomized_logistic(x, y, p0, p1)
    coarse = max(brute_profile(b, 0, x, y, p0, p1) for b in np.arange(-60.0, 10.0, 1.0))
    assert coarse <= fit.log_likelihood + 1e-6
    for j, c in enumerate(fit.coefficients):
        edge = regression.PROFILE_REACH / np.ptp(x[:, j]) if j else regression.PROFILE_REACH
        for bound, side in ((c.low, -1), (c.high, 1)):
            at = side * edge if math.isinf(bound) else bound
            deviance = 2 * (fit.log_likelihood - brute_profile(at, j, x, y, p0, p1))
            if math.isinf(bound):
                assert deviance < Z**2, (j, side)
            else:
                assert deviance == pytest.approx(Z**2, abs=1e-3), (j, side)


def binomial_deviance(share: float, yes: int, n: int, p0: float, t: float) -> float:
    """2·(ℓ at the share's MLE - ℓ at ``share``) for one group of n respondents, ``yes``
    of whom reported yes: the MLE is the moment estimate clipped to [0, 1]."""

    def log_likelihood(pi: float) -> float:
        mu = p0 + t * pi
        return yes * math.log(mu) + (n - yes) * math.log(1 - mu)

    best = min(max((yes / n - p0) / t, 0.0), 1.0)
    return 2 * (log_likelihood(best) - log_likelihood(share))


def test_a_share_estimated_at_zero_is_a_boundary_fit_with_one_sided_intervals() -> None:
    """In the group with x = 1 fewer report "yes" (20%) than even a share of 0 produces on
    average (p0 = 25%): its share is estimated at 0, as a single share's estimate would be
    clipped, so the slope's estimate is -∞ and its interval is open below. It is reported,
    not refused. With one two-level covariate the model is saturated, so each bound has a
    closed form: the intercept is group 0's log odds, its interval group 0's likelihood-
    ratio interval; the slope's deviance at b is the least over the intercept of both
    groups' deviances."""
    group = np.repeat([0.0, 1.0], 500)
    x = np.column_stack([np.ones(1_000), group])
    y = np.concatenate([np.arange(500) < 300, np.arange(500) < 100])  # 60% and 20% < p0 = 25%
    fit = fit_randomized_logistic(x, y, 0.25, 0.75)
    intercept, slope = fit.coefficients
    assert fit.boundary and fit.covariance is None
    assert intercept.std_error is None and slope.std_error is None

    def group_0(b: float) -> float:
        return binomial_deviance(float(expit(b)), 300, 500, 0.25, 0.5)

    assert intercept.estimate == pytest.approx(math.log(0.7 / 0.3), abs=1e-6)  # (0.6-0.25)/0.5
    assert group_0(intercept.low) == pytest.approx(Z**2, abs=1e-4)
    assert group_0(intercept.high) == pytest.approx(Z**2, abs=1e-4)

    def slope_deviance(b: float) -> float:
        return float(
            minimize_scalar(
                lambda b0: (
                    group_0(b0) + binomial_deviance(float(expit(b0 + b)), 100, 500, 0.25, 0.5)
                ),
                bounds=(-5.0, 5.0),
                method="bounded",
                options={"xatol": 1e-10},
            ).fun
        )

    assert slope.estimate == -math.inf and slope.low == -math.inf
    assert slope_deviance(slope.high) == pytest.approx(Z**2, abs=1e-4)
    assert slope.high < -2  # group 1's share is bounded well below group 0's


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


YEAR = Covariate("year", QuestionType.CHOICE, ("1", "2", "3", "4+"))
AGE = Covariate("age", QuestionType.NUMBER)


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
            [Covariate("s", QuestionType.CHOICE, ("a", "b"), sensitive=True)],
            "'s' is a sensitive question",
        ),
        ({"y": [1, 0], "age": [20, 20]}, [AGE], "'age' has the same value for every respondent"),
        ({"y": [1, 0], "year": [1, 1]}, [YEAR], "every respondent gave the same answer to 'year'"),
        ({"y": [1, 0], "year": [0, 4]}, [YEAR], "not option indices 0..3"),
        ({"y": [1, 0], "age": ["20", "21"]}, [AGE], "'age' has values that are not numbers"),
        ({"y": [1, 0]}, [AGE], "no values for 'age'"),
        ({"y": [1, 0], "age": [1]}, [AGE], "one value per response"),
        ({"y": [1, 0]}, [Covariate("y", QuestionType.NUMBER)], "'y' is the outcome"),
        ({"y": [1, 0]}, [], "at least one covariate"),
    ],
)
def test_design_errors_are_plain(
    columns: dict[str, list[object]], covariates: list[Covariate], message: str
) -> None:
    with pytest.raises(DesignMatrixError, match=message):
        design_from_columns(columns, "y", covariates)
