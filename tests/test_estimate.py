"""Prevalence estimates: hand-computed values, the clipping rule, and coverage."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from survey_app.privacy import (
    FAIR_COINS,
    INTERVAL_METHODS,
    Estimate,
    TwoCoinDesign,
    estimate_prevalence,
    simulate_reports,
)

Z95 = 1.959963984540054  # the 97.5% normal quantile


def wilson(p_hat: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The textbook Wilson score interval (Wilson 1927), written out."""
    center = (p_hat + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p_hat * (1 - p_hat) / n + z**2 / (4 * n**2))
    return center - half, center + half


def estimate(reported_yes: int, n: int, **kwargs: object) -> Estimate:
    result = estimate_prevalence(reported_yes, n, **kwargs)  # type: ignore[arg-type]
    assert result is not None
    return result


# --- the formulas -------------------------------------------------------------------


def test_point_and_standard_error_by_hand() -> None:
    e = estimate(60, 100)
    # Fair coins: pi = 2 * lambda - 1/2 = 2 * 0.6 - 0.5.
    assert e.point == pytest.approx(0.7, abs=1e-12)
    assert e.unclipped == pytest.approx(0.7, abs=1e-12)
    assert e.std_error == pytest.approx(2 * math.sqrt(0.6 * 0.4 / 100), abs=1e-12)
    assert (e.confidence, e.method) == (0.95, "wilson")


def test_wilson_bounds_by_hand() -> None:
    e = estimate(60, 100)
    lam_low, lam_high = wilson(0.6, 100)
    assert e.low == pytest.approx(2 * lam_low - 0.5, abs=1e-9)
    assert e.high == pytest.approx(2 * lam_high - 0.5, abs=1e-9)
    # The same numbers as literals (Wilson for 60/100 is 0.5020026 to 0.6905987).
    assert e.low == pytest.approx(0.504005174, abs=1e-9)
    assert e.high == pytest.approx(0.881197427, abs=1e-9)


def test_wilson_at_another_level_and_design() -> None:
    design = TwoCoinDesign(truth_probability=0.6, forced_yes_probability=0.3)
    e = estimate(100, 200, design=design, confidence=0.9)
    z90 = 1.6448536269514722
    lam_low, lam_high = wilson(0.5, 200, z90)
    # P(yes | no) = 0.4 * 0.3 = 0.12, slope t = 0.6.
    assert e.unclipped == pytest.approx((0.5 - 0.12) / 0.6, abs=1e-12)
    assert e.std_error == pytest.approx(math.sqrt(0.25 / 200) / 0.6, abs=1e-12)
    assert e.low == pytest.approx((lam_low - 0.12) / 0.6, abs=1e-9)
    assert e.high == pytest.approx((lam_high - 0.12) / 0.6, abs=1e-9)


@pytest.mark.parametrize(
    ("reported_yes", "n", "lam_low", "lam_high"),
    [
        # As R's binom.test(x, n)$conf.int prints them (7 digits).
        (60, 100, 0.4972092, 0.6967052),
        (50, 100, 0.3983211, 0.6016789),
        (300, 1000, 0.2717211, 0.3294617),
    ],
)
def test_clopper_pearson_against_known_values(
    reported_yes: int, n: int, lam_low: float, lam_high: float
) -> None:
    e = estimate(reported_yes, n, method="clopper-pearson")
    assert e.method == "clopper-pearson"
    assert e.low == pytest.approx(2 * lam_low - 0.5, abs=2e-7)
    assert e.high == pytest.approx(2 * lam_high - 0.5, abs=2e-7)
    # And by definition: each bound is where one tail probability is exactly 2.5%.
    lam_low_exact, lam_high_exact = (e.low + 0.5) / 2, (e.high + 0.5) / 2
    assert binom.sf(reported_yes - 1, n, lam_low_exact) == pytest.approx(0.025, abs=1e-9)
    assert binom.cdf(reported_yes, n, lam_high_exact) == pytest.approx(0.025, abs=1e-9)


def test_clopper_pearson_is_wider_than_wilson() -> None:
    w, cp = estimate(60, 100), estimate(60, 100, method="clopper-pearson")
    assert cp.low < w.low < w.high < cp.high


def test_higher_confidence_gives_a_wider_interval() -> None:
    narrow, wide = estimate(60, 100, confidence=0.9), estimate(60, 100, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_estimate_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        estimate(60, 100).point = 0.5  # type: ignore[misc]


# --- clipping: never a zero-width interval ---------------------------------------------


def test_interval_wholly_below_zero_keeps_its_upper_side() -> None:
    e = estimate(10, 100)  # lambda_hat = 0.1, far below P(yes | no) = 0.25
    assert 2 * wilson(0.1, 100)[1] - 0.5 < 0  # the mapped interval is wholly below 0
    assert e.unclipped == pytest.approx(-0.3)
    assert e.point == 0.0
    assert e.low == 0.0 < e.high
    # The upper bound as if lambda_hat sat on the boundary, 0.25.
    assert e.high == pytest.approx(2 * wilson(0.25, 100)[1] - 0.5, abs=1e-12)
    assert e.high == pytest.approx(0.186089271, abs=1e-9)


def test_interval_wholly_above_one_keeps_its_lower_side() -> None:
    e = estimate(90, 100)
    assert 2 * wilson(0.9, 100)[0] - 0.5 > 1
    assert e.unclipped == pytest.approx(1.3)
    assert e.point == 1.0
    assert e.low < e.high == 1.0
    assert e.low == pytest.approx(2 * wilson(0.75, 100)[0] - 0.5, abs=1e-12)


def test_clopper_pearson_boundary_rule() -> None:
    from scipy.stats import beta

    below = estimate(0, 1000, method="clopper-pearson")
    above = estimate(1000, 1000, method="clopper-pearson")
    # The upper bound at a fractional count of 250 = 0.25 * 1000, written out.
    u = 2 * beta.ppf(0.975, 250 + 1, 1000 - 250) - 0.5
    assert below.low == 0.0 < below.high == pytest.approx(u, abs=1e-12)
    assert above.high == 1.0 > above.low == pytest.approx(1 - u, abs=1e-12)


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_interval_partly_below_zero_is_no_sliver(method: str) -> None:
    # 17/100 sits below 0.25 but its mapped interval reaches just above 0 (about 0.01):
    # it reports the boundary interval, not a near-certain sliver narrower than the one
    # 10/100 gets.
    boundary = estimate(0, 100, method=method)
    for reported_yes in range(25):
        e = estimate(reported_yes, 100, method=method)
        assert (e.low, e.high) == (boundary.low, boundary.high)
    assert estimate(25, 100, method=method).high >= boundary.high


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("n", [1, 2, 5])
def test_tiny_samples_still_give_proper_intervals(method: str, n: int) -> None:
    for reported_yes in range(n + 1):
        e = estimate(reported_yes, n, method=method)
        assert 0.0 <= e.low < e.high <= 1.0
        assert e.low <= e.point <= e.high


@settings(derandomize=True, deadline=None, max_examples=300)
@given(
    n=st.integers(min_value=1, max_value=10**7),
    share=st.floats(min_value=0, max_value=1),
    t=st.floats(min_value=0.01, max_value=0.99),
    f=st.floats(min_value=0.01, max_value=0.99),
    confidence=st.floats(min_value=0.5, max_value=0.999),
    method=st.sampled_from(INTERVAL_METHODS),
)
def test_interval_is_proper_and_monotone(
    n: int, share: float, t: float, f: float, confidence: float, method: str
) -> None:
    design = TwoCoinDesign(truth_probability=t, forced_yes_probability=f)
    reported_yes = min(round(share * n), n - 1)
    e = estimate(reported_yes, n, design=design, confidence=confidence, method=method)
    assert 0.0 <= e.low < e.high <= 1.0
    assert e.point == min(max(e.unclipped, 0.0), 1.0)
    assert e.low <= e.point <= e.high
    after = estimate(reported_yes + 1, n, design=design, confidence=confidence, method=method)
    assert e.low <= after.low and e.high <= after.high


# --- no data, bad data --------------------------------------------------------------


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_no_responses_no_estimate(method: str) -> None:
    assert estimate_prevalence(0, 0, method=method) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"reported_yes": -1, "n": 10},
        {"reported_yes": 11, "n": 10},
        {"reported_yes": 1, "n": 0},
        {"reported_yes": 0, "n": -1},
        {"reported_yes": 5, "n": 10, "confidence": 0.0},
        {"reported_yes": 5, "n": 10, "confidence": 1.0},
        {"reported_yes": 5, "n": 10, "confidence": 95},
        {"reported_yes": 5, "n": 10, "confidence": math.nan},
        {"reported_yes": 5, "n": 10, "method": "wald"},
        {"reported_yes": 0, "n": 0, "method": "wald"},
    ],
)
def test_bad_inputs_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        estimate_prevalence(**kwargs)  # type: ignore[arg-type]


def test_fractional_counts_are_refused() -> None:
    with pytest.raises(TypeError):
        estimate_prevalence(5.5, 10)  # type: ignore[arg-type]


# --- coverage ---------------------------------------------------------------------------

PREVALENCES = (0.0, 0.01, 0.1, 0.5, 0.9, 1.0)
SAMPLE_SIZES = (30, 100, 1000)
NOMINAL = 0.95
# Floors: Wilson hovers around nominal (its exact minimum on this grid is 0.943);
# Clopper-Pearson is built to never fall below it.
FLOOR = {"wilson": 0.93, "clopper-pearson": NOMINAL}


def intervals_by_count(n: int, method: str, design: TwoCoinDesign) -> np.ndarray:
    """Row k: the (low, high) interval reported for k "yes" among n."""
    return np.array(
        [
            (e.low, e.high)
            for e in (estimate(k, n, method=method, design=design) for k in range(n + 1))
        ]
    )


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("design", [FAIR_COINS, TwoCoinDesign(0.6, 0.3)], ids=["fair", "t.6f.3"])
@pytest.mark.parametrize("n", SAMPLE_SIZES)
def test_exact_coverage(n: int, design: TwoCoinDesign, method: str) -> None:
    """Sum the binomial probabilities of every count whose interval covers the truth."""
    intervals = intervals_by_count(n, method, design)
    counts = np.arange(n + 1)
    for prevalence in PREVALENCES:
        rate = design.p_yes_given_no + design.truth_probability * prevalence
        covers = (intervals[:, 0] <= prevalence) & (prevalence <= intervals[:, 1])
        coverage = binom.pmf(counts, n, rate)[covers].sum()
        assert coverage >= FLOOR[method], (prevalence, coverage)


@pytest.mark.parametrize("n", SAMPLE_SIZES)
def test_unclipped_estimate_is_unbiased(n: int) -> None:
    unclipped = np.array([estimate(k, n).unclipped for k in range(n + 1)])
    for prevalence in PREVALENCES:
        pmf = binom.pmf(np.arange(n + 1), n, 0.25 + 0.5 * prevalence)
        assert pmf @ unclipped == pytest.approx(prevalence, abs=1e-9)


@pytest.mark.parametrize("n", SAMPLE_SIZES)
def test_simulated_coverage(n: int) -> None:
    """End to end: random true answers, randomized by the mechanism, then estimated."""
    rng = np.random.default_rng(20_250_000 + n)
    draws = 4_000
    intervals = {m: intervals_by_count(n, m, FAIR_COINS) for m in INTERVAL_METHODS}
    # A share of 4,000 draws wobbles by about 0.0035 (one standard error): Wilson keeps
    # its 0.93 floor; Clopper-Pearson may dip 5 standard errors below nominal, no more.
    simulated_floor = {
        "wilson": FLOOR["wilson"],
        "clopper-pearson": NOMINAL - 5 * math.sqrt(NOMINAL * (1 - NOMINAL) / draws),
    }
    for prevalence in PREVALENCES:
        true_answers = rng.random((draws, n)) < prevalence
        reported_yes = simulate_reports(true_answers, FAIR_COINS, rng).sum(axis=1)
        for method, table in intervals.items():
            low, high = table[reported_yes, 0], table[reported_yes, 1]
            coverage = np.mean((low <= prevalence) & (prevalence <= high))
            assert coverage >= simulated_floor[method], (method, prevalence, coverage)
