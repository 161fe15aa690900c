"""Sample-size planning: hand-computed sizes and a simulation at the planned n."""

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

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
    number_mechanism,
    required_sample_size,
    simulate,
    simulate_reports,
    yes_no_mechanism,
)

Z95 = 1.959963984540054


def test_fair_coins_five_points_at_95_percent_by_hand() -> None:
    # ceil(1.959964^2 / (4 * (0.05 * 0.5)^2)) = ceil(1536.58) = 1537
    assert required_sample_size(0.05) == 1537
    assert required_sample_size(0.05, 0.95, FAIR_COINS) == 1537


@pytest.mark.parametrize(
    ("half_width", "confidence", "z"),
    [(0.02, 0.95, Z95), (0.1, 0.9, 1.6448536269514722), (0.03, 0.99, 2.5758293035489004)],
)
@pytest.mark.parametrize("epsilon", [0.5, 1.0, math.log(3), 3.0])
def test_formula(half_width: float, confidence: float, z: float, epsilon: float) -> None:
    design = TwoCoinDesign.from_epsilon(epsilon)
    t = (math.exp(epsilon) - 1) / (math.exp(epsilon) + 1)
    expected = math.ceil(z**2 / (4 * (half_width * t) ** 2))
    assert required_sample_size(half_width, confidence, design) == expected


@pytest.mark.parametrize("half_width", [0.01, 0.03, 0.05, 0.1, 0.25])
def test_planned_n_is_the_smallest_that_suffices(half_width: float) -> None:
    n = required_sample_size(half_width)
    # Worst case lambda = 1/2: half-width z * (1/2) / sqrt(n) / t, with t = 1/2.
    assert Z95 / math.sqrt(n) <= half_width < Z95 / math.sqrt(n - 1)


@pytest.mark.parametrize("half_width", [0.01, 0.03, 0.05, 0.1])
def test_fair_coins_cost_four_times_a_direct_question(half_width: float) -> None:
    direct = Z95**2 / (4 * half_width**2)  # the same formula with t = 1
    assert required_sample_size(half_width) == math.ceil(4 * direct)


def test_stronger_privacy_needs_more_respondents() -> None:
    sizes = [required_sample_size(0.05, design=TwoCoinDesign.from_epsilon(e)) for e in (3, 1, 0.5)]
    assert sizes == sorted(sizes) and len(set(sizes)) == 3


def test_wide_targets_still_need_someone() -> None:
    assert required_sample_size(1.0) == 4  # ceil(1.96^2 / (4 * 0.25)) = ceil(3.84)


@pytest.mark.parametrize("half_width", [0.0, -0.05, 1.01, math.nan, math.inf])
def test_bad_half_width_raises(half_width: float) -> None:
    with pytest.raises(ValueError, match="half_width"):
        required_sample_size(half_width)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95.0, math.nan])
def test_bad_confidence_raises(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        required_sample_size(0.05, confidence)


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


# --- every mechanism --------------------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism",
    [
        GeneralizedRandomizedResponse.from_epsilon(5, Fraction(1)),
        OptimizedUnaryEncoding.from_epsilon(5, Fraction(1)),
        PlainChoice(4),
        yes_no_mechanism(Fraction("0.5")),
    ],
    ids=lambda m: type(m).__name__,
)
def test_proportion_formula(mechanism: Mechanism) -> None:
    p, q = mechanism.p_true, mechanism.p_false  # type: ignore[attr-defined]
    expected = math.ceil(Z95**2 / (4 * 0.05**2 * (p - q) ** 2))
    assert required_sample_size(0.05, 0.95, mechanism) == pytest.approx(expected, abs=1)
    assert required_sample_size(0.05, mechanism=mechanism) == required_sample_size(
        0.05, 0.95, mechanism
    )


def test_plain_choice_costs_what_a_direct_question_costs() -> None:
    assert required_sample_size(0.05, 0.95, PlainChoice(3)) == math.ceil(Z95**2 / (4 * 0.05**2))


@pytest.mark.parametrize(
    "mechanism",
    [
        DiscreteLaplace.from_epsilon(0, 50, Fraction(1)),
        DuchiBinary.from_epsilon(0, 50, Fraction(1)),
        PlainNumber(0, 50),
    ],
    ids=lambda m: type(m).__name__,
)
@pytest.mark.parametrize("half_width", [0.5, 2.0, 10.0])
def test_numeric_formula(mechanism: Mechanism, half_width: float) -> None:
    variance = mechanism.worst_case_variance  # type: ignore[attr-defined]
    expected = max(math.ceil(Z95**2 * variance / half_width**2), 2)
    assert required_sample_size(half_width, 0.95, mechanism) == expected


def test_numeric_half_width_is_in_answer_units() -> None:
    laplace = DiscreteLaplace.from_epsilon(0, 50, Fraction(1))
    with pytest.raises(ValueError, match="half_width"):
        required_sample_size(0.04, 0.95, laplace)  # below 0.001 × 50
    with pytest.raises(ValueError, match="half_width"):
        required_sample_size(51, 0.95, laplace)
    assert required_sample_size(50, 0.95, laplace) >= 2


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
    # Fair coins need 1537 for ±5 points: ln 3 = 1.0986..., so 1537 allows ε = 1.099.
    assert epsilon_for_sample_size(1537, 0.05, 0.95, yes_no_mechanism) == Fraction("1.099")
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


@pytest.mark.parametrize("n", [900, 1_000, 1_300, 1_400, 5_000])
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
