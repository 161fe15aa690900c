"""Central releases: exact tails, accuracy, Report Noisy Max's win rate and ε, noisy by-group
intervals, and the budget ledger."""

from __future__ import annotations

import math
from datetime import datetime
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import numpy.typing as npt
import pytest
from numpy.polynomial import polynomial

from survey_app.privacy import FAIR_COINS, estimate_proportion, simulate_reports
from survey_app.privacy.central import (
    SENSITIVITY,
    BudgetBelowSpentError,
    BudgetChange,
    BudgetExceededError,
    Ledger,
    NoBudgetError,
    accuracy_bound,
    central_epsilon,
    fingerprint,
    noise_gamma,
    noisy_counts,
    noisy_share_interval,
    release_group_estimates,
    report_noisy_max,
    tail_probability,
)
from survey_app.privacy.groups import GroupCount
from tests.support.statistics import Seeded, within_five_se

NOON = datetime(2026, 11, 21, 12, 0)


def pmf(gamma: Fraction, support: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The discrete Laplace pmf (1 - α)/(1 + α)·α^|z|, written out."""
    alpha = math.exp(-float(gamma))
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(support)


# --- sensitivity, tails and accuracy ----------------------------------------------------


def test_sensitivity_per_release_kind() -> None:
    assert dict(SENSITIVITY) == {"count": 1, "histogram": 1, "group_tallies": 2, "noisy_max": 1}
    assert noise_gamma("0.5", SENSITIVITY["group_tallies"]) == Fraction(1, 4)
    assert central_epsilon("0.1") == Fraction(1, 10)
    with pytest.raises(ValueError, match="positive"):
        central_epsilon("lots")


@pytest.mark.parametrize("gamma", [Fraction(1, 10), Fraction(1, 2), Fraction(1), Fraction(3)])
def test_tail_formula_is_the_exact_distribution(gamma: Fraction) -> None:
    support = np.arange(-4_000, 4_001)
    probabilities = pmf(gamma, support)
    assert probabilities.sum() == pytest.approx(1, abs=1e-12)
    for t in (0, 1, 2, 5, 17):
        exact = probabilities[np.abs(support) >= t].sum()
        assert tail_probability(gamma, t) == pytest.approx(exact, rel=1e-9, abs=1e-15)
    # Not the continuous approximation e^(-γt): at t = 1 the discrete tail is 2α/(1 + α).
    alpha = math.exp(-float(gamma))
    assert tail_probability(gamma, 1) == pytest.approx(2 * alpha / (1 + alpha))
    assert tail_probability(gamma, 1) != pytest.approx(alpha)


def test_accuracy_by_hand() -> None:
    # γ = 1: 2α^(m+1)/(1 + α) ≤ 0.05 first at m + 1 = 4; for 10 counts (0.005 each) at 6.
    assert accuracy_bound(Fraction(1)) == 3
    assert accuracy_bound(Fraction(1), k=10) == 5


@pytest.mark.parametrize("gamma", [Fraction(1, 20), Fraction(1, 3), Fraction(2)])
@pytest.mark.parametrize("k", [1, 4, 50])
def test_accuracy_is_the_smallest_bound_that_holds(gamma: Fraction, k: int) -> None:
    m = accuracy_bound(gamma, k)
    assert k * tail_probability(gamma, m + 1) <= 0.05
    assert m == 0 or k * tail_probability(gamma, m) > 0.05


def test_sampled_noise_follows_the_exact_tails() -> None:
    source = Seeded(7)
    gamma = noise_gamma(Fraction(1, 2), 1)
    draws = 4_000
    noise = np.array(noisy_counts([0] * draws, Fraction(1, 2), source=source).values)
    assert abs(noise.mean()) < 5 * math.sqrt(2 * math.exp(-0.5) / (1 - math.exp(-0.5)) ** 2 / draws)
    for t in (1, 2, 4, 8):
        assert within_five_se(int((np.abs(noise) >= t).sum()), draws, tail_probability(gamma, t))


def test_noisy_counts_are_within_their_stated_accuracy() -> None:
    """Seeded replicates of a 5-cell histogram at ε = 0.5: every count within its own bound,
    and all five within the joint bound, in at least 95% of replicates."""
    source = Seeded(2026)
    counts, replicates = [120, 45, 3, 0, 77], 1_000
    single_hits = joint_hits = 0
    for _ in range(replicates):
        release = noisy_counts(counts, "0.5", SENSITIVITY["histogram"], source)
        errors = np.abs(np.array(release.values) - counts)
        single_hits += int((errors <= release.accuracy).sum())
        joint_hits += bool((errors <= release.joint_accuracy).all())
    assert (release.epsilon, release.sensitivity) == (Fraction(1, 2), 1)
    assert release.joint_accuracy > release.accuracy
    floor = 0.95 - 5 * math.sqrt(0.95 * 0.05 / replicates)
    assert single_hits / (replicates * len(counts)) >= floor
    assert joint_hits / replicates >= floor


def test_noisy_counts_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match="whole number"):
        noisy_counts([3, -1], 1)
    with pytest.raises(ValueError, match="sensitivity"):
        noisy_counts([3], 1, sensitivity=0)
    with pytest.raises(ValueError, match="nothing"):
        noisy_counts([], 1)


# --- Report Noisy Max ---------------------------------------------------------------------


def win_probabilities(counts: list[int], gamma: Fraction) -> list[float]:
    """Exact P(option i is released) with discrete Laplace noise and uniform tie-breaking.

    P(i wins) = Σ_v P(X_i = v)·E[1{others ≤ v}/(1 + T)], T the others tied at v, and
    E[u^T·1{others ≤ v}] = Π_j (P(X_j < v) + u·P(X_j = v)), integrated over u in [0, 1]
    (∫ u^T du = 1/(1 + T)). Noise beyond ±200 has probability below 1e-40 at γ ≥ 1/2.
    """
    support = np.arange(-200, 201)
    noise = pmf(gamma, support)
    below = np.concatenate([[0.0], np.cumsum(noise)[:-1]])  # P(Z < z)
    result = []
    for i, ci in enumerate(counts):
        total = 0.0
        for v in range(ci - 200, ci + 201):
            poly = np.array([1.0])
            for j, cj in enumerate(counts):
                if j == i:
                    continue
                z = v - cj
                less = 0.0 if z < -200 else 1.0 if z > 200 else below[z + 200]
                equal = noise[z + 200] if -200 <= z <= 200 else 0.0
                poly = polynomial.polymul(poly, [less, equal])
            integral = polynomial.polyval(1.0, polynomial.polyint(poly))
            total += noise[v - ci + 200] * integral
        result.append(float(total))
    return result


def test_exact_win_probabilities_sum_to_one() -> None:
    assert sum(win_probabilities([12, 10, 7], Fraction(1, 2))) == pytest.approx(1, abs=1e-12)
    assert win_probabilities([5, 5], Fraction(1)) == pytest.approx([0.5, 0.5], abs=1e-12)


def test_noisy_max_picks_the_mode_at_the_predicted_rate() -> None:
    counts, epsilon, draws = [10, 12, 7], Fraction(1, 2), 4_000
    predicted = win_probabilities(counts, epsilon)[1]
    source = Seeded(99)
    wins = sum(report_noisy_max(counts, epsilon, source) == 1 for _ in range(draws))
    assert within_five_se(wins, draws, predicted), (wins / draws, predicted)


def two_count_win_probability(counts: tuple[int, int], gamma: Fraction) -> float:
    """P(option 1 is released) for two counts, by a second path: D = Z₁ - Z₀ is the
    difference of two independent discrete Laplace draws (the pmf convolved with itself);
    option 1 wins when c₁ + Z₁ > c₀ + Z₀, and a tie goes to either with probability ½.
    Noise beyond ±2000 has probability below 1e-80 at γ ≥ 1/10."""
    noise = pmf(gamma, np.arange(-2000, 2001))
    difference = np.convolve(noise, noise)
    values = np.arange(-4000, 4001)
    gap = counts[1] - counts[0]
    return float(difference[values > -gap].sum() + difference[values == -gap].sum() / 2)


def test_noisy_max_picks_between_two_close_counts_at_the_predicted_rate() -> None:
    # A mode figure's regime: ε = 1/10 and noise as wide as the gap between the counts.
    counts, epsilon, draws = (10, 20), Fraction(1, 10), 4_000
    predicted = two_count_win_probability(counts, epsilon)
    assert 0.6 < predicted < 0.8  # the noise matters
    assert predicted == pytest.approx(win_probabilities(list(counts), epsilon)[1], abs=1e-6)
    source = Seeded(7)
    wins = sum(report_noisy_max(counts, epsilon, source) == 1 for _ in range(draws))
    assert within_five_se(wins, draws, predicted), (wins / draws, predicted)


def test_noisy_max_is_epsilon_dp_exactly() -> None:
    # One respondent added or removed moves one count by one: every output's probability
    # changes by a factor of at most e^ε (the proof in report_noisy_max).
    epsilon = Fraction(1, 2)
    base = [10, 12, 7]
    for changed in range(3):
        for step in (1, -1):
            neighbour = list(base)
            neighbour[changed] += step
            for p, q in zip(
                win_probabilities(base, epsilon), win_probabilities(neighbour, epsilon), strict=True
            ):
                assert max(p / q, q / p) <= math.exp(float(epsilon)) * (1 + 1e-9)


def test_noisy_max_returns_an_index_only() -> None:
    assert report_noisy_max([0, 1_000_000], 1, Seeded(1)) == 1
    with pytest.raises(ValueError, match="at least two"):
        report_noisy_max([4], 1)


# --- by-group estimates with noisy sizes ------------------------------------------------------


def test_without_noise_the_interval_is_wilsons() -> None:
    noisy = noisy_share_interval(60, 100, 0.0, 0.75, 0.25)
    wilson = estimate_proportion(60, 100, 0.75, 0.25, method="wilson")
    assert wilson is not None
    assert (noisy.low, noisy.high) == pytest.approx((wilson.low, wilson.high), abs=1e-12)
    assert noisy.point == pytest.approx(wilson.point)


def test_a_swamped_count_gets_the_whole_range() -> None:
    estimate = noisy_share_interval(3, 4, 400.0, 0.75, 0.25)
    assert (estimate.low, estimate.high) == (0.0, 1.0)


def test_noisy_group_intervals_cover_at_their_nominal_rate() -> None:
    """Seeded: true answers randomized by fair coins, each group's (n, reported) noised at
    ε = 0.25 (noise sd ≈ 11 on a group of 400: more variance than the sampling's); the
    interval must cover the true share at 95%, neither less nor (needlessly) more."""
    rng, source = np.random.default_rng(4_040), Seeded(4_041)
    replicates, n, share = 1_000, 400, 0.3
    reported = simulate_reports(rng.random((replicates, n)) < share, FAIR_COINS, rng).sum(axis=1)
    covered = 0
    for count in reported:
        release = release_group_estimates(
            {"g": GroupCount(int(count), n)}, FAIR_COINS, "0.25", source=source
        )
        estimate = release.groups[0].estimate
        assert estimate is not None
        covered += estimate.low <= share <= estimate.high
    assert within_five_se(covered, replicates, 0.95), covered / replicates


def test_the_group_interval_adds_the_noise_variance_to_the_score_test() -> None:
    """A released group's interval, recomputed from its noisy pair by solving
    (ỹ - λñ)² = z²(ñλ(1 - λ) + V(1 + λ²)) with NumPy, V the variance of the pmf summed:
    the same bounds, and half as wide again as the pair's interval without the noise term
    (Wilson's), which would cover far below 95% when the noise is this large."""
    epsilon, z = Fraction(1, 4), NormalDist().inv_cdf(0.975)
    release = release_group_estimates(
        {"g": GroupCount(160, 400)}, FAIR_COINS, epsilon, source=Seeded(8)
    )
    (group,) = release.groups
    assert group.estimate is not None
    support = np.arange(-4_000, 4_001)
    variance = float((support**2 * pmf(epsilon / 2, support)).sum())  # Δ = 2: γ = ε/2
    y, n = group.noisy_reported, group.noisy_n
    assert 0.25 < y / n < 0.75  # inside the design's rates: no boundary rule
    roots = np.roots(
        [n * n + z * z * n - z * z * variance, -2 * y * n - z * z * n, y * y - z * z * variance]
    )
    low, high = sorted((roots.real - 0.25) / 0.5)  # fair coins: λ = 1/4 + π/2
    assert (group.estimate.low, group.estimate.high) == pytest.approx((low, high), abs=1e-9)
    wilson = noisy_share_interval(y, n, 0.0, 0.75, 0.25)
    assert group.estimate.high - group.estimate.low > 1.5 * (wilson.high - wilson.low)


def test_group_release_states_its_sensitivity_and_withholds_on_the_noisy_size() -> None:
    counts = {"1": GroupCount(40, 200), "2": GroupCount(2, 31), "3": GroupCount(0, 0)}
    release = release_group_estimates(counts, FAIR_COINS, 1, source=Seeded(5))
    assert (release.epsilon, release.sensitivity) == (Fraction(1), 2)
    assert release.accuracy == accuracy_bound(Fraction(1, 2))
    assert release.joint_accuracy == accuracy_bound(Fraction(1, 2), 6)
    assert [g.group for g in release.groups] == ["1", "2", "3"]
    for group in release.groups:
        assert (group.estimate is None) == (group.noisy_n < 30)


# --- the ledger ------------------------------------------------------------------------------


def test_ledger_composes_refuses_and_charges_every_release() -> None:
    ledger = Ledger(Fraction(1))
    ledger = ledger.charge("year histogram", "0.3", NOON)
    ledger = ledger.charge("by-group estimates", "0.4", NOON)
    assert ledger.spent == Fraction(7, 10) and ledger.remaining == Fraction(3, 10)
    # The same figures again cost again: a free repeat on unchanged data would tell the
    # public that nobody answered in between. 0.3 fits exactly (0.3 + 0.4 + 0.3 = 1).
    again = ledger.charge("year histogram", "0.3", NOON)
    assert again.remaining == 0 and again.releases[-1].cost == Fraction(3, 10)
    with pytest.raises(BudgetExceededError) as refused:
        again.charge("year histogram", "0.3", NOON)
    # Facts, not words: the page and the command line each say them in their own.
    facts = refused.value
    assert facts.needed == Fraction(3, 10) and facts.remaining == 0
    assert facts.budget == facts.spent == 1
    assert again.spent == 1  # unchanged by the refusal


def test_a_ledger_without_a_budget_takes_only_free_releases() -> None:
    ledger = Ledger().charge("exact estimates", 0, NOON, ["exact-estimates"], covered=False)
    (free,) = ledger.releases
    assert free.cost == 0 and free.figures == ("exact-estimates",) and not free.covered
    assert ledger.spent == 0 and ledger.remaining is None
    with pytest.raises(NoBudgetError) as refused:
        ledger.charge("histogram of year", "0.001", NOON)
    assert refused.value.needed == Fraction(1, 1000)


def test_budget_changes_are_recorded_and_never_go_below_what_is_spent() -> None:
    ledger = Ledger().with_budget("1", NOON).charge("page", "0.6", NOON)
    raised = ledger.with_budget("2", NOON)
    assert raised.remaining == Fraction(7, 5)
    assert raised.budget_changes == (
        BudgetChange(NOON, Fraction(1), None, 0),
        BudgetChange(NOON, Fraction(2), Fraction(1), 1),
    )
    assert [event.kind for event in raised.history] == ["budget", "release", "budget"]
    assert raised.with_budget("2", NOON) == raised  # the same budget: nothing to record
    assert ledger.with_budget("0.6", NOON).remaining == 0  # exactly what is spent
    with pytest.raises(BudgetBelowSpentError) as refused:
        ledger.with_budget("0.5", NOON)
    facts = refused.value
    assert (facts.asked, facts.budget, facts.spent) == (Fraction(1, 2), Fraction(1), Fraction(3, 5))
    with pytest.raises(ValueError, match="positive"):
        Ledger(Fraction(0))


def test_fingerprint_ignores_key_order() -> None:
    assert fingerprint({"a": 1, "b": [2]}) == fingerprint({"b": [2], "a": 1})
    assert len(fingerprint({})) == 16
