"""Estimates: prevalence and option shares (hand values, clipping, coverage) and means."""

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binom
from scipy.stats import t as student_t

from survey_app.privacy import (
    DEFAULT_INTERVAL_METHOD,
    FAIR_COINS,
    INTERVAL_METHODS,
    DiscreteLaplace,
    DuchiBinary,
    Estimate,
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    TwoCoinDesign,
    estimate_choice,
    estimate_mean,
    estimate_prevalence,
    estimate_proportion,
    norm_sub,
    simulate,
    simulate_reports,
)
from survey_app.privacy.estimate import widest_half_width
from survey_app.privacy.means import estimate_number_mean, mean_interval

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
    assert e.confidence == 0.95


def test_estimate_prevalence_has_the_one_default_interval() -> None:
    """Clopper–Pearson everywhere by default (Wilson's exact coverage dips to 0.934 at
    n = 30); Wilson stays available by name."""
    assert estimate(60, 100) == estimate_proportion(60, 100, 0.75, 0.25)
    assert estimate(60, 100).method == DEFAULT_INTERVAL_METHOD == "clopper-pearson"
    assert estimate(60, 100, method="wilson").method == "wilson"


def test_wilson_bounds_by_hand() -> None:
    e = estimate(60, 100, method="wilson")
    lam_low, lam_high = wilson(0.6, 100)
    assert e.low == pytest.approx(2 * lam_low - 0.5, abs=1e-9)
    assert e.high == pytest.approx(2 * lam_high - 0.5, abs=1e-9)
    # The same numbers as literals (Wilson for 60/100 is 0.5020026 to 0.6905987).
    assert e.low == pytest.approx(0.504005174, abs=1e-9)
    assert e.high == pytest.approx(0.881197427, abs=1e-9)


def test_wilson_at_another_level_and_design() -> None:
    design = TwoCoinDesign(truth_probability=0.6, forced_yes_probability=0.3)
    e = estimate(100, 200, design=design, confidence=0.9, method="wilson")
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
    w, cp = estimate(60, 100, method="wilson"), estimate(60, 100, method="clopper-pearson")
    assert cp.low < w.low < w.high < cp.high


def test_higher_confidence_gives_a_wider_interval() -> None:
    narrow, wide = estimate(60, 100, confidence=0.9), estimate(60, 100, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_estimate_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        estimate(60, 100).point = 0.5  # type: ignore[misc]


# --- clipping: never a zero-width interval ---------------------------------------------


def test_interval_wholly_below_zero_keeps_its_upper_side() -> None:
    e = estimate(10, 100, method="wilson")  # lambda_hat = 0.1, far below P(yes | no) = 0.25
    assert 2 * wilson(0.1, 100)[1] - 0.5 < 0  # the mapped interval is wholly below 0
    assert e.unclipped == pytest.approx(-0.3)
    assert e.point == 0.0
    assert e.low == 0.0 < e.high
    # The upper bound as if lambda_hat sat on the boundary, 0.25.
    assert e.high == pytest.approx(2 * wilson(0.25, 100)[1] - 0.5, abs=1e-12)
    assert e.high == pytest.approx(0.186089271, abs=1e-9)


def test_interval_wholly_above_one_keeps_its_lower_side() -> None:
    e = estimate(90, 100, method="wilson")
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- any proportion mechanism: estimate_proportion --------------------------------------


def test_default_interval_method_is_exact() -> None:
    assert DEFAULT_INTERVAL_METHOD == "clopper-pearson"
    e = estimate_proportion(60, 100, 0.75, 0.25)
    assert e is not None and e.method == "clopper-pearson"


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_prevalence_is_proportion_with_the_two_coin_rates(method: str) -> None:
    design = TwoCoinDesign(0.6, 0.3)
    for count in (0, 13, 50, 100):
        assert estimate_prevalence(count, 100, design, 0.9, method) == estimate_proportion(
            count, 100, design.p_true, design.p_false, 0.9, method
        )


@pytest.mark.parametrize(("p_true", "p_false"), [(0.5, 0.5), (0.3, 0.6), (1.2, 0.1), (0.5, -0.1)])
def test_proportion_needs_a_signal(p_true: float, p_false: float) -> None:
    with pytest.raises(ValueError, match="p_false"):
        estimate_proportion(5, 10, p_true, p_false)


def _choice(
    counts: list[int], n: int, mechanism: GeneralizedRandomizedResponse | OptimizedUnaryEncoding
):  # type: ignore[no-untyped-def]
    choice = estimate_choice(counts, n, mechanism.p_true, mechanism.p_false)
    assert choice is not None
    return choice


CHOICE_MECHANISMS: list[GeneralizedRandomizedResponse | OptimizedUnaryEncoding] = [
    GeneralizedRandomizedResponse.from_epsilon(5, Fraction(1)),
    OptimizedUnaryEncoding.from_epsilon(5, Fraction(1)),
]


@pytest.mark.parametrize("mechanism", CHOICE_MECHANISMS, ids=lambda m: m.name)
@pytest.mark.parametrize("n", [30, 500])
def test_option_share_estimate_is_unbiased(
    mechanism: GeneralizedRandomizedResponse | OptimizedUnaryEncoding, n: int
) -> None:
    """Exactly: the expectation of the unclipped estimate over Binomial(n, λ) is π."""
    p, q = mechanism.p_true, mechanism.p_false
    unclipped = np.array(
        [estimate_proportion(c, n, p, q).unclipped for c in range(n + 1)]  # type: ignore[union-attr]
    )
    for share in (0.0, 0.05, 0.3, 1.0):
        pmf = binom.pmf(np.arange(n + 1), n, q + (p - q) * share)
        assert pmf @ unclipped == pytest.approx(share, abs=1e-9)


def simulated_counts(
    mechanism: GeneralizedRandomizedResponse | OptimizedUnaryEncoding,
    shares: tuple[float, ...],
    n: int,
    surveys: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Report counts per option (rows: surveys), from true answers drawn with ``shares``."""
    answers = rng.choice(len(shares), size=(surveys, n), p=shares)
    reports = simulate(mechanism, answers, rng)
    if isinstance(mechanism, OptimizedUnaryEncoding):
        return reports.sum(axis=1)
    return np.stack([(reports == j).sum(axis=1) for j in range(len(shares))], axis=1)


SHARES = (0.5, 0.3, 0.15, 0.05, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", CHOICE_MECHANISMS, ids=lambda m: m.name)
def test_simulated_choice_estimates_are_unbiased(
    mechanism: GeneralizedRandomizedResponse | OptimizedUnaryEncoding,
) -> None:
    rng = np.random.default_rng(8_080)
    n, surveys = 400, 1_000
    counts = simulated_counts(mechanism, SHARES, n, surveys, rng)
    estimates = np.array(
        [[e.unclipped for e in _choice(row, n, mechanism).options] for row in counts]
    )
    for j, share in enumerate(SHARES):
        mean, se = estimates[:, j].mean(), estimates[:, j].std(ddof=1) / math.sqrt(surveys)
        assert abs(mean - share) <= 5 * se, (j, mean, share)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", CHOICE_MECHANISMS, ids=lambda m: m.name)
def test_simultaneous_intervals_cover_all_options_together(
    mechanism: GeneralizedRandomizedResponse | OptimizedUnaryEncoding,
) -> None:
    """'With 95% probability every option is within these bounds': the union bound holds
    in simulation, where k separate 95% intervals together fall short."""
    rng = np.random.default_rng(9_191)
    n, surveys = 300, 2_000
    counts = simulated_counts(mechanism, SHARES, n, surveys, rng)
    joint_cover = single_cover = 0
    for row in counts:
        choice = estimate_choice(row, n, mechanism.p_true, mechanism.p_false, 0.95)
        assert choice is not None
        joint_cover += all(
            e.low <= s <= e.high for e, s in zip(choice.simultaneous, SHARES, strict=True)
        )
        single_cover += all(
            e.low <= s <= e.high for e, s in zip(choice.options, SHARES, strict=True)
        )
    floor = 0.95 - 5 * math.sqrt(0.95 * 0.05 / surveys)
    assert joint_cover / surveys >= floor
    assert single_cover < joint_cover


def test_simultaneous_intervals_are_wider_at_level_one_minus_alpha_over_k() -> None:
    grr = CHOICE_MECHANISMS[0]
    choice = estimate_choice([40, 25, 20, 10, 5], 100, grr.p_true, grr.p_false, 0.9)
    assert choice is not None and choice.confidence == 0.9
    for single, joint in zip(choice.options, choice.simultaneous, strict=True):
        assert joint.confidence == pytest.approx(1 - 0.1 / 5)
        assert joint.low <= single.low and single.high <= joint.high
        assert (joint.low, joint.high) != (single.low, single.high)
        assert joint.unclipped == single.unclipped


def test_choice_display_is_on_the_simplex_and_keeps_the_unbiased_values() -> None:
    oue = CHOICE_MECHANISMS[1]
    choice = estimate_choice([60, 30, 30, 2, 0], 100, oue.p_true, oue.p_false)
    assert choice is not None
    unbiased = [e.unclipped for e in choice.options]
    assert sum(unbiased) != pytest.approx(1)  # OUE's unbiased shares need not sum to 1
    assert min(unbiased) < 0
    assert sum(choice.display) == pytest.approx(1, abs=1e-12)
    assert min(choice.display) >= 0
    assert choice.display == pytest.approx(norm_sub(unbiased))


@pytest.mark.parametrize(
    ("estimates", "expected"),
    [
        # δ = (0.5 + 0.4 + 0.3 - 1)/3 = 1/15 taken off the three positive ones.
        ((0.5, 0.4, 0.3, -0.1), (0.5 - 1 / 15, 0.4 - 1 / 15, 0.3 - 1 / 15, 0.0)),
        # Already shares: unchanged.
        ((0.2, 0.3, 0.5), (0.2, 0.3, 0.5)),
        # Summing below 1: the common amount is added instead.
        ((0.1, 0.2, 0.3), (0.1 + 0.4 / 3, 0.2 + 0.4 / 3, 0.3 + 0.4 / 3)),
        # One large estimate takes everything once the rest would go negative.
        ((1.4, 0.1, -0.2), (1.0, 0.0, 0.0)),
        ((-0.2, -0.3), (0.55, 0.45)),
    ],
)
def test_norm_sub_by_hand(estimates: tuple[float, ...], expected: tuple[float, ...]) -> None:
    assert norm_sub(estimates) == pytest.approx(expected, abs=1e-12)


def test_choice_without_responses_and_bad_counts() -> None:
    assert estimate_choice([0, 0, 0], 0, 0.6, 0.2) is None
    with pytest.raises(ValueError):
        estimate_choice([5], 10, 0.6, 0.2)
    with pytest.raises(ValueError):
        estimate_choice([5, 11], 10, 0.6, 0.2)


# --- means of number questions -----------------------------------------------------------


def test_mean_by_hand() -> None:
    # Reports 2, 4, 4, 6: mean 4, sample variance 8/3; Duchi-like affine map 1 + 2r.
    reports = [2, 4, 4, 6]
    e = estimate_mean(4, sum(reports), sum(r * r for r in reports), 1.0, 2.0, -100, 100)
    assert e is not None
    se = 2 * math.sqrt(8 / 3 / 4)
    half = student_t.ppf(0.975, 3) * se
    assert e.unclipped == e.point == 9.0
    assert e.std_error == pytest.approx(se, rel=1e-12)
    assert (e.low, e.high) == pytest.approx((9 - half, 9 + half), rel=1e-12)
    assert e.confidence == 0.95


def test_mean_of_no_one_one_and_identical_reports() -> None:
    assert estimate_mean(0, 0, 0, 0.0, 1.0, 0, 10) is None
    one = estimate_mean(1, 7, 49, 0.0, 1.0, 0, 10)
    assert one is not None
    assert (one.point, one.low, one.high, one.std_error) == (7.0, 0.0, 10.0, math.inf)
    same = estimate_mean(5, 15, 45, 0.0, 1.0, 0, 10)
    assert same is not None and (same.low, same.high) == (0.0, 10.0) and same.point == 3.0


def test_mean_outside_the_range_keeps_a_proper_interval() -> None:
    # Laplace reports can average below min: the point is clipped, the interval is
    # [min, min + t·s/√n] as if the mean sat on the bound, never zero width.
    reports = [-9, -7, -8, -6]
    e = estimate_mean(4, sum(reports), sum(r * r for r in reports), 0.0, 1.0, 0, 10)
    assert e is not None
    assert e.unclipped == -7.5 and e.point == 0.0
    assert e.low == 0.0 < e.high == pytest.approx(student_t.ppf(0.975, 3) * e.std_error)
    high = estimate_mean(4, 4 * 13, 4 * 169 + 2, 0.0, 1.0, 0, 10)
    assert high is not None and high.point == 10.0 and high.low < high.high == 10.0


@pytest.mark.parametrize(
    "args",
    [
        (-1, 0, 0, 0.0, 1.0, 0, 10, 0.95),
        (2, 10, 10, 0.0, 1.0, 0, 10, 0.95),  # 2·10 < 10²: not from 2 reports
        (2, 1, 1, 0.0, 1.0, 10, 0, 0.95),
        (2, 1, 1, 0.0, 0.0, 0, 10, 0.95),
        (2, 1, 1, 0.0, 1.0, 0, 10, 1.0),
        (0, 3, 9, 0.0, 1.0, 0, 10, 0.95),
    ],
)
def test_mean_bad_inputs_raise(args: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError):
        estimate_mean(*args)


NUMBER_MECHANISMS = [
    DiscreteLaplace.from_epsilon(0, 10, Fraction(1)),
    DuchiBinary.from_epsilon(0, 10, Fraction(1)),
]


@pytest.mark.parametrize("mechanism", NUMBER_MECHANISMS, ids=lambda m: m.name)
def test_mean_interval_coverage_and_unbiasedness(mechanism: DiscreteLaplace | DuchiBinary) -> None:
    rng = np.random.default_rng(6_060)
    n, surveys = 200, 2_000
    answers = rng.binomial(10, 0.25, size=(surveys, n))  # true mean 2.5, skewed to the low end
    reports = simulate(mechanism, answers, rng).astype(np.int64)
    totals, squares = reports.sum(axis=1), (reports * reports).sum(axis=1)
    covered, unclipped = 0, []
    for total, square in zip(totals, squares, strict=True):
        e = estimate_number_mean(mechanism, n, int(total), int(square))
        assert e is not None and 0 <= e.low < e.high <= 10
        covered += e.low <= 2.5 <= e.high
        unclipped.append(e.unclipped)
    assert covered / surveys >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / surveys)
    mean, se = np.mean(unclipped), np.std(unclipped, ddof=1) / math.sqrt(surveys)
    assert abs(mean - 2.5) <= 5 * se


# --- Duchi's bit: an exact interval on the count of 1s ------------------------------------


def test_duchi_mean_is_the_share_of_the_range_under_two_coins() -> None:
    """P(1 | x) = (1 - r)/2 + r·(x - min)/Δ: randomized response on the share of the range
    with p_true = (1 + r)/2, p_false = (1 - r)/2, so the mean's interval is that share's
    Clopper–Pearson interval mapped to min + Δ·share, whatever the shares' method."""
    duchi = DuchiBinary.from_epsilon(-5, 15, Fraction(2))
    r = float(duchi.lean)
    for ones in (0, 3, 57, 100, 137, 200):
        e = estimate_number_mean(duchi, 200, ones, ones, 0.9)
        share = estimate_proportion(ones, 200, (1 + r) / 2, (1 - r) / 2, 0.9, "clopper-pearson")
        assert e is not None and share is not None
        assert e.method == "clopper-pearson" and e.confidence == 0.9
        expected = (share.point, share.unclipped, share.low, share.high, share.std_error)
        shown = (e.point + 5, e.unclipped + 5, e.low + 5, e.high + 5, e.std_error)
        assert shown == pytest.approx(tuple(20 * v for v in expected), abs=1e-12)
        assert -5 <= e.low < e.high <= 15
    # By hand: 137 ones in 200; λ's bounds are where one binomial tail is exactly 5%.
    e = estimate_number_mean(duchi, 200, 137, 137, 0.9)
    assert e is not None
    lam_low, lam_high = ((e.low + 5) / 20 * r + (1 - r) / 2, (e.high + 5) / 20 * r + (1 - r) / 2)
    assert binom.sf(136, 200, lam_low) == pytest.approx(0.05, abs=1e-9)
    assert binom.cdf(137, 200, lam_high) == pytest.approx(0.05, abs=1e-9)


def test_duchi_mean_refuses_reports_other_than_bits() -> None:
    duchi = DuchiBinary.from_epsilon(0, 10, Fraction(1))
    with pytest.raises(ValueError, match="0 or 1"):
        estimate_number_mean(duchi, 10, 5, 7)
    with pytest.raises(ValueError):
        estimate_number_mean(duchi, 10, 11, 11)
    assert estimate_number_mean(duchi, 0, 0, 0) is None


def duchi_exact_coverage(n: int, epsilon: Fraction, points: int = 4001) -> float:
    """The lowest coverage of the dashboard's Duchi interval over the true mean, exactly:
    the count of 1s is Binomial(n, (1 - r)/2 + r·s), s the mean's share of the range, and
    the interval depends on the count alone. A grid of s plus, at every interval end, the
    points just inside and outside it (where the coverage jumps)."""
    duchi = DuchiBinary.from_epsilon(0, 10, epsilon)
    r = float(duchi.lean)
    bounds = []
    for ones in range(n + 1):
        e = estimate_number_mean(duchi, n, ones, ones)
        assert e is not None
        bounds.append((e.low / 10, e.high / 10))
    low, high = np.array(bounds).T
    ends = np.concatenate([low, high])
    shares = np.concatenate([np.linspace(0, 1, points), ends - 1e-12, ends + 1e-12])
    shares = shares[(shares >= 0) & (shares <= 1)]
    pmf = binom.pmf(np.arange(n + 1)[:, None], n, (1 - r) / 2 + r * shares[None, :])
    covered = (low[:, None] <= shares) & (shares <= high[:, None])
    return float((pmf * covered).sum(axis=0).min())


def test_duchi_mean_interval_covers_exactly() -> None:
    """n = 300, ε = 2: the t interval on the 0/1 reports dipped to 0.938; the
    exact one never falls below 0.95 (docs/COVERAGE.md has n 30 to 1000, ε 0.5 to 4)."""
    assert duchi_exact_coverage(300, Fraction(2)) >= 0.95 - 1e-9


def test_duchi_mean_interval_before_clipping() -> None:
    """For a difference of two groups: the shown point and the interval the boundary rule
    gives, its ends not yet clipped to the range."""
    duchi = DuchiBinary.from_epsilon(0, 10, Fraction(1))
    shown = estimate_number_mean(duchi, 50, 2, 2)  # far fewer 1s than a mean of 0 gives
    raw = mean_interval(duchi, 50, 2, 2)
    assert shown is not None
    assert raw.point == shown.point == 0.0
    assert raw.low < 0.0 == shown.low and raw.high == pytest.approx(shown.high, abs=1e-12)


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize(
    ("p_true", "p_false"), [(0.75, 0.25), (0.28, 0.02), (0.5, 0.1), (1.0, 0.0)]
)
@pytest.mark.parametrize("n", [1, 2, 7, 30, 301])
def test_widest_half_width_bounds_every_interval_shown(
    method: str, p_true: float, p_false: float, n: int
) -> None:
    """λ's interval is widest at λ̂ = 1/2 and narrows away from it, also at fractional
    counts (checked on a fine grid); moved into [p_false, p_true] by the boundary rule,
    that is the widest half-width any count can show."""
    widest = widest_half_width(n, p_true, p_false, 0.95, method)
    shown = [estimate_proportion(c, n, p_true, p_false, 0.95, method) for c in range(n + 1)]
    assert max((e.high - e.low) / 2 for e in shown if e is not None) <= widest + 1e-12
    if method == "clopper-pearson":
        counts = np.linspace(1e-9, n - 1e-9, 2001)
        widths = beta.ppf(0.975, counts + 1, n - counts) - beta.ppf(0.025, counts, n - counts + 1)
        middle = len(counts) // 2
        assert np.all(np.diff(widths[: middle + 1]) >= -1e-12)
        assert np.all(np.diff(widths[middle:]) <= 1e-12)
