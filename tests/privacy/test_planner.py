"""Sample-size planning: the planned n meets the target with the dashboard's own interval
(and one respondent fewer does not), checked against independent SciPy formulas and the
real estimators; ε for a given n; simulations at the planned n."""

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import beta
from scipy.stats import t as student_t

from survey_app.privacy import (
    FAIR_COINS,
    DiscreteLaplace,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    Mechanism,
    OptimizedUnaryEncoding,
    PlainChoice,
    PlainNumber,
    TwoCoinDesign,
    choice_mechanism,
    epsilon_for_sample_size,
    estimate_choice,
    estimate_mean,
    estimate_prevalence,
    estimate_proportion,
    number_mechanism,
    required_sample_size,
    simulate,
    simulate_reports,
    yes_no_mechanism,
)
from survey_app.privacy.means import estimate_number_mean

Z95 = 1.959963984540054


def clopper_pearson_half_width(n: int, rate: float, slope: float, confidence: float) -> float:
    """Half the Clopper–Pearson interval at a (fractional) count n·rate, in shares: the
    beta quantiles written out, independently of the app's code."""
    alpha, count = 1 - confidence, n * rate
    low = beta.ppf(alpha / 2, count, n - count + 1)
    high = beta.ppf(1 - alpha / 2, count + 1, n - count)
    return float(high - low) / (2 * slope)


def worst_share_half_width(n: int, p_true: float, p_false: float, confidence: float) -> float:
    """At λ̂ = 1/2 moved into [p_false, p_true]: the widest the dashboard can show."""
    rate = min(max(0.5, p_false), p_true)
    return clopper_pearson_half_width(n, rate, p_true - p_false, confidence)


def widest_shown(n: int, p_true: float, p_false: float) -> float:
    """The widest half-width among the intervals the dashboard shows for every count 0..n."""
    shown = (estimate_proportion(c, n, p_true, p_false) for c in range(n + 1))
    return max((e.high - e.low) / 2 for e in shown if e is not None)


def test_fair_coins_five_points_at_95_percent_by_hand() -> None:
    """The normal approximation's 1,537 gives a Clopper–Pearson interval of ±5.06 points
    at λ̂ = 1/2; ±5 takes 1,574."""
    assert required_sample_size(0.05) == 1574
    assert required_sample_size(0.05, 0.95, FAIR_COINS) == 1574
    assert clopper_pearson_half_width(1537, 0.5, 0.5, 0.95) == pytest.approx(0.0506, abs=1e-4)
    assert clopper_pearson_half_width(1574, 0.5, 0.5, 0.95) <= 0.05
    assert clopper_pearson_half_width(1573, 0.5, 0.5, 0.95) > 0.05


SHARE_MECHANISMS = [
    FAIR_COINS,
    TwoCoinDesign.from_epsilon(0.5),
    TwoCoinDesign.from_epsilon(3.0),
    TwoCoinDesign(Fraction(1, 5), Fraction(1, 10)),  # P(yes | yes) = 0.28: λ never reaches 1/2
    GeneralizedRandomizedResponse.from_epsilon(5, Fraction(1)),  # p = 0.40 < 1/2
    OptimizedUnaryEncoding.from_epsilon(5, Fraction(1)),  # p_true = 1/2 exactly
    PlainChoice(3),
]


@pytest.mark.parametrize("mechanism", SHARE_MECHANISMS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize(("half_width", "confidence"), [(0.05, 0.95), (0.1, 0.9), (0.03, 0.99)])
def test_planned_n_meets_the_target_and_one_fewer_does_not(
    mechanism: Mechanism, half_width: float, confidence: float
) -> None:
    p, q = mechanism.p_true, mechanism.p_false  # type: ignore[attr-defined]
    n = required_sample_size(half_width, confidence, mechanism)
    assert worst_share_half_width(n, p, q, confidence) <= half_width
    assert worst_share_half_width(n - 1, p, q, confidence) > half_width


@pytest.mark.parametrize("half_width", [0.05, 0.1, 0.25])
def test_every_interval_shown_at_the_planned_n_meets_the_target(half_width: float) -> None:
    """The dashboard's real intervals, every count from 0 to n: none is wider."""
    for mechanism in (FAIR_COINS, GeneralizedRandomizedResponse.from_epsilon(5, Fraction(1))):
        n = required_sample_size(half_width, 0.95, mechanism)
        assert widest_shown(n, mechanism.p_true, mechanism.p_false) <= half_width


@pytest.mark.parametrize("half_width", [0.01, 0.03, 0.05, 0.1])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, math.log(3), 3.0])
def test_the_normal_approximation_is_where_the_search_starts(
    half_width: float, epsilon: float
) -> None:
    """At λ̂ = 1/2 the exact interval is wider than z·√(1/(4n)), by about 1/(2n): the
    answer lies a little above the approximation, never below."""
    design = TwoCoinDesign.from_epsilon(epsilon)
    t = (math.exp(epsilon) - 1) / (math.exp(epsilon) + 1)
    approximation = Z95**2 / (4 * (half_width * t) ** 2)
    n = required_sample_size(half_width, 0.95, design)
    assert approximation <= n <= 1.1 * approximation + 10


def test_fair_coins_cost_about_four_times_a_direct_question() -> None:
    """1/slope² = 4, a little less: the exact interval's extra width (about 1/(2n))
    weighs more at the direct question's smaller n."""
    ratios = [
        required_sample_size(half_width) / required_sample_size(half_width, 0.95, PlainChoice(2))
        for half_width in (0.1, 0.05, 0.03, 0.01)
    ]
    assert ratios == sorted(ratios) and 3.85 <= ratios[0] and ratios[-1] <= 4


def test_stronger_privacy_needs_more_respondents() -> None:
    sizes = [required_sample_size(0.05, design=TwoCoinDesign.from_epsilon(e)) for e in (3, 1, 0.5)]
    assert sizes == sorted(sizes) and len(set(sizes)) == 3


def test_wide_targets_need_one_respondent() -> None:
    # One report at λ̂ = 1/2: λ's interval is nearly all of [0, 1], ±0.9992 in π, inside ±1.
    assert required_sample_size(1.0) == 1
    assert required_sample_size(0.9) == 4  # ±0.92 with 3 respondents, ±0.86 with 4


@pytest.mark.parametrize("half_width", [0.0, -0.05, 1.01, math.nan, math.inf])
def test_bad_half_width_raises(half_width: float) -> None:
    with pytest.raises(ValueError, match="half_width"):
        required_sample_size(half_width)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95.0, math.nan])
def test_bad_confidence_raises(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        required_sample_size(0.05, confidence)


@pytest.mark.slow
@pytest.mark.parametrize("prevalence", [0.0, 0.1, 0.5, 0.9])
def test_simulated_surveys_at_the_planned_n_meet_the_target(prevalence: float) -> None:
    target = 0.05
    n = required_sample_size(target)
    rng = np.random.default_rng(7_000 + round(prevalence * 100))
    surveys = 2_000
    true_answers = rng.random((surveys, n)) < prevalence
    reported_yes = simulate_reports(true_answers, FAIR_COINS, rng).sum(axis=1)
    errors_within_target = 0
    for count in reported_yes:
        e = estimate_prevalence(int(count), n)
        assert e is not None
        # Every realized interval is within the planned half-width, whatever the draw.
        assert Z95 * e.std_error <= target
        assert (e.high - e.low) / 2 <= target
        errors_within_target += abs(e.point - prevalence) <= target
    # And the estimate lands within the target about 95% of the time (more often away
    # from 1/2); 0.92 is over 5 standard errors (0.005 each for 2,000 surveys) below that.
    assert errors_within_target / surveys >= 0.92


# --- numbers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism",
    [
        DiscreteLaplace.from_epsilon(0, 50, Fraction(1)),
        DiscreteLaplace.from_epsilon(0, 50, Fraction(4)),
        PlainNumber(0, 50),
    ],
    ids=lambda m: f"{m.name}-{m.epsilon:g}",
)
@pytest.mark.parametrize("half_width", [0.5, 2.0, 10.0])
def test_t_interval_numbers_meet_the_target_and_one_fewer_does_not(
    mechanism: DiscreteLaplace | PlainNumber, half_width: float
) -> None:
    """t_{n-1}·√(V/n) at the worst-case variance V of one unbiased report."""

    def half(n: int) -> float:
        return float(student_t.ppf(0.975, n - 1)) * math.sqrt(mechanism.worst_case_variance / n)

    n = required_sample_size(half_width, 0.95, mechanism)
    assert n >= 2 and half(n) <= half_width
    assert n == 2 or half(n - 1) > half_width


@pytest.mark.parametrize("epsilon", [Fraction(1, 2), Fraction(1), Fraction(2)])
@pytest.mark.parametrize("half_width", [2.0, 5.0])
def test_duchi_meets_the_target_with_its_exact_interval(
    epsilon: Fraction, half_width: float
) -> None:
    """Duchi's bit is a share of the range under two coins t = r, f = 1/2: the widest
    exact interval is at λ̂ = 1/2, and every interval the dashboard shows at the planned
    n (each count of 1s) is within the target."""
    duchi = DuchiBinary.from_epsilon(0, 20, epsilon)
    r = float(duchi.lean)
    n = required_sample_size(half_width, 0.95, duchi)
    assert 20 * clopper_pearson_half_width(n, 0.5, r, 0.95) <= half_width
    assert 20 * clopper_pearson_half_width(n - 1, 0.5, r, 0.95) > half_width
    shown = (estimate_number_mean(duchi, n, ones, ones) for ones in range(n + 1))
    assert max((e.high - e.low) / 2 for e in shown if e is not None) <= half_width


def test_numeric_half_width_is_in_answer_units() -> None:
    laplace = DiscreteLaplace.from_epsilon(0, 50, Fraction(1))
    with pytest.raises(ValueError, match="half_width"):
        required_sample_size(0.04, 0.95, laplace)  # below 0.001 × 50
    with pytest.raises(ValueError, match="half_width"):
        required_sample_size(51, 0.95, laplace)
    assert required_sample_size(50, 0.95, laplace) >= 2


def test_the_tiniest_target_is_still_found_quickly() -> None:
    """A tenth of a point at ε = 0.01 needs tens of billions: the search brackets the
    answer by doubling steps, so this takes a few dozen interval evaluations."""
    design = yes_no_mechanism(Fraction(1, 100))
    n = required_sample_size(0.001, 0.95, design)
    p, q = design.p_true, design.p_false
    assert n > 10**10
    assert (
        worst_share_half_width(n, p, q, 0.95) <= 0.001 < worst_share_half_width(n - 1, p, q, 0.95)
    )


MAKERS: dict[str, Callable[[Fraction], Mechanism]] = {
    "yes_no": yes_no_mechanism,
    "choice": lambda e: choice_mechanism(6, e),
    "number": lambda e: number_mechanism(0, 20, e),
}


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("n", [500, 2_000, 20_000])
def test_epsilon_for_sample_size_round_trips(kind: str, n: int) -> None:
    make = MAKERS[kind]
    half_width = 0.05 if kind != "number" else 1.0
    epsilon = epsilon_for_sample_size(n, half_width, 0.95, make)
    assert epsilon is not None
    assert epsilon.denominator in (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000)
    assert Fraction(1, 100) <= epsilon <= 10
    assert required_sample_size(half_width, 0.95, make(epsilon)) <= n
    if epsilon > Fraction(1, 100):  # the smallest: a thousandth less is not enough
        assert required_sample_size(half_width, 0.95, make(epsilon - Fraction(1, 1000))) > n


def test_epsilon_for_sample_size_ends() -> None:
    assert epsilon_for_sample_size(10, 0.01, 0.95, yes_no_mechanism) is None
    assert epsilon_for_sample_size(10**9, 0.05, 0.95, yes_no_mechanism) == Fraction(1, 100)
    # Fair coins need 1574 for ±5 points: ln 3 = 1.0986..., so 1574 allows ε = 1.099;
    # the normal approximation's 1537 needs a little more, ε = 1.115.
    assert epsilon_for_sample_size(1574, 0.05, 0.95, yes_no_mechanism) == Fraction("1.099")
    assert epsilon_for_sample_size(1537, 0.05, 0.95, yes_no_mechanism) == Fraction("1.115")
    with pytest.raises(ValueError):
        epsilon_for_sample_size(0, 0.05, 0.95, yes_no_mechanism)


def test_simulated_choice_surveys_at_the_planned_n_meet_the_target() -> None:
    target = 0.05
    grr = GeneralizedRandomizedResponse.from_epsilon(3, Fraction(2))
    n = required_sample_size(target, 0.95, grr)
    rng = np.random.default_rng(1_234)
    shares = (0.5, 0.35, 0.15)
    surveys = 1_000
    reports = simulate(grr, rng.choice(3, size=(surveys, n), p=shares), rng)
    within = 0
    for row in reports:
        counts = [int((row == j).sum()) for j in range(3)]
        choice = estimate_choice(counts, n, grr.p_true, grr.p_false, method="wilson")
        assert choice is not None
        assert all(Z95 * e.std_error <= target for e in choice.options)
        within += abs(choice.options[0].point - shares[0]) <= target
    assert within / surveys >= 0.92


@pytest.mark.parametrize("name", ["laplace", "duchi"])
def test_simulated_number_surveys_at_the_planned_n_meet_the_target(name: str) -> None:
    target = 2.0
    mechanism = number_mechanism(0, 20, Fraction(1), name)
    n = required_sample_size(target, 0.95, mechanism)
    rng = np.random.default_rng(4_321)
    surveys = 1_000
    # The worst spread: half the answers at each end.
    answers = 20 * rng.integers(0, 2, size=(surveys, n))
    reports = simulate(mechanism, answers, rng).astype(np.int64)
    within = 0
    for total, squares in zip(reports.sum(axis=1), (reports * reports).sum(axis=1), strict=True):
        e = estimate_mean(
            n, int(total), int(squares), mechanism.value_offset, mechanism.value_scale, 0, 20
        )
        assert e is not None
        within += abs(e.unclipped - 10) <= target
    assert within / surveys >= 0.92


@pytest.mark.parametrize(
    "n",
    # 900: no sufficient ε below the switch, so the scan runs far (about 300 piecewise
    # designs at 30-40 ms each): seconds, so slow.
    [pytest.param(900, marks=pytest.mark.slow), 1_000, 1_300, 1_400, 5_000],
)
def test_epsilon_for_sample_size_across_auto_switching_mechanism(n: int) -> None:
    """Auto for numbers switches from Duchi to Laplace near ε = 2.3, where the planner's
    worst-case n jumps up: the answer is still the smallest sufficient thousandth (checked
    against a full scan of the hundredths and the thousandths just below)."""

    def make(epsilon: Fraction) -> Mechanism:
        return number_mechanism(0, 50, epsilon)

    def needed(thousandths: int) -> int:
        return required_sample_size(2.0, 0.95, make(Fraction(thousandths, 1000)))

    epsilon = epsilon_for_sample_size(n, 2.0, 0.95, make)
    first_hundredth = next((m for m in range(10, 10_001, 10) if needed(m) <= n), None)
    if first_hundredth is None:
        assert epsilon is None
        return
    expected = next(m for m in range(max(first_hundredth - 9, 10), 10_001) if needed(m) <= n)
    assert epsilon == Fraction(expected, 1000)
