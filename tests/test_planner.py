"""Sample-size planning: hand-computed sizes and a simulation at the planned n."""

import math

import numpy as np
import pytest

from survey_app.privacy import (
    FAIR_COINS,
    TwoCoinDesign,
    estimate_prevalence,
    required_sample_size,
    simulate_reports,
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
