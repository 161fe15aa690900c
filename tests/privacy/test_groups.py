"""Estimates by group: per-group estimates, the minimum size, and a difference with its interval."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from survey_app.privacy import (
    FAIR_COINS,
    DiscreteLaplace,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    PlainChoice,
    TwoCoinDesign,
    estimate_proportion,
    simulate,
    simulate_reports,
)
from survey_app.privacy.estimate import Interval, share_interval
from survey_app.privacy.groups import (
    MIN_GROUP_SIZE,
    GroupCount,
    GroupSums,
    GroupTooSmallError,
    count_by_group,
    difference_interval,
    estimate_by_group,
    group_difference,
    mean_difference,
    means_by_group,
)
from survey_app.privacy.means import estimate_number_mean

Z95 = 1.959963984540054
PLAIN = PlainChoice(2)  # p_true = 1, p_false = 0: the ordinary proportion, for literature values


def test_each_group_is_estimate_proportion_of_its_own_tallies() -> None:
    counts = {"first year": GroupCount(40, 100), "second year": GroupCount(70, 120)}
    rows = estimate_by_group(counts, FAIR_COINS, method="wilson")
    assert [row.groups for row in rows] == [("first year",), ("second year",)]
    for row, tally in zip(rows, counts.values(), strict=True):
        assert row.n == tally.n and not row.pooled and not row.withheld
        assert row.estimate == estimate_proportion(
            tally.reported, tally.n, 0.75, 0.25, 0.95, "wilson"
        )


def test_choice_option_by_group_uses_the_mechanisms_p_and_q() -> None:
    grr = GeneralizedRandomizedResponse.from_epsilon(4, 1.0)
    (row,) = estimate_by_group({"a": GroupCount(50, 200)}, grr)
    assert row.estimate == estimate_proportion(50, 200, grr.p_true, grr.p_false)


def test_the_minimum_size_and_its_reason() -> None:
    # The documented reason: at fair coins the worst-case 95% half-width is 1.96/√n,
    # about ±0.36 at the minimum and wider for anything smaller.
    slope = FAIR_COINS.p_true - FAIR_COINS.p_false
    assert Z95 * 0.5 / math.sqrt(MIN_GROUP_SIZE) / slope == pytest.approx(0.358, abs=1e-3)
    at, below = MIN_GROUP_SIZE, MIN_GROUP_SIZE - 1
    rows = estimate_by_group({"big": GroupCount(10, at), "small": GroupCount(3, below)}, FAIR_COINS)
    assert rows[0].estimate is not None and rows[0].n == at
    assert rows[1].groups == ("small",) and rows[1].withheld and rows[1].n is None


def test_small_groups_pool_when_the_pool_is_big_enough() -> None:
    counts = {
        "big": GroupCount(30, 100),
        "a": GroupCount(5, 20),
        "b": GroupCount(4, 15),
    }
    rows = estimate_by_group(counts, FAIR_COINS)
    assert [row.groups for row in rows] == [("big",), ("a", "b")]
    pool = rows[1]
    assert pool.pooled and pool.n == 35
    assert pool.estimate == estimate_proportion(9, 35, 0.75, 0.25)


def test_a_pool_too_small_or_of_one_group_is_withheld() -> None:
    rows = estimate_by_group(
        {"a": GroupCount(1, 5), "b": GroupCount(2, 6), "c": GroupCount(0, 0)}, FAIR_COINS
    )
    assert [(row.groups, row.withheld) for row in rows] == [
        (("a",), True),
        (("b",), True),
        (("c",), True),
    ]
    # One small group next to a big one: a pool of one is the group alone, so withheld.
    rows = estimate_by_group({"big": GroupCount(5, 50), "a": GroupCount(5, 29)}, FAIR_COINS)
    assert rows[1].withheld


def test_count_by_group_tallies_and_skips_missing_groups() -> None:
    pairs = [("x", True), ("x", False), ("y", True), (None, True), ("x", True)]
    assert count_by_group(pairs) == {"x": GroupCount(2, 3), "y": GroupCount(1, 1)}


def test_difference_matches_newcombes_method_10() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, table II, example (a): 56/70 - 48/80,
    # method 10 (the hybrid score interval): 0.0524 to 0.3339.
    counts = {"a": GroupCount(56, 70), "b": GroupCount(48, 80)}
    difference = group_difference(counts, "a", "b", PLAIN, method="wilson")
    assert difference.point == pytest.approx(0.2, abs=1e-12)
    assert difference.low == pytest.approx(0.0524, abs=5e-5)
    assert difference.high == pytest.approx(0.3339, abs=5e-5)
    assert difference.method == "mover-wilson"


def test_difference_maps_through_the_design() -> None:
    # Randomized reports: each group's interval is the affine image of its λ interval,
    # so the difference's interval is Newcombe's for λ_a - λ_b divided by the slope t.
    # Both λ intervals lie inside [p0, p1] = [1/4, 3/4], so nothing is clipped.
    design = TwoCoinDesign(truth_probability=0.5, forced_yes_probability=0.5)
    counts = {"a": GroupCount(45, 80), "b": GroupCount(30, 80)}
    difference = group_difference(counts, "a", "b", design, method="wilson")
    plain = group_difference(counts, "a", "b", PLAIN, method="wilson")
    assert difference.point == pytest.approx(plain.point / 0.5, abs=1e-12)
    assert difference.low == pytest.approx(plain.low / 0.5, abs=1e-9)
    assert difference.high == pytest.approx(plain.high / 0.5, abs=1e-9)


def test_difference_refuses_small_unknown_or_identical_groups() -> None:
    counts = {"a": GroupCount(10, 40), "b": GroupCount(3, MIN_GROUP_SIZE - 1)}
    with pytest.raises(GroupTooSmallError, match="fewer than 30"):
        group_difference(counts, "a", "b", FAIR_COINS)
    with pytest.raises(ValueError, match="no group 'c'"):
        group_difference(counts, "a", "c", FAIR_COINS)
    with pytest.raises(ValueError, match="two different groups"):
        group_difference(counts, "a", "a", FAIR_COINS)


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_difference_interval_covers_at_its_nominal_rate(method: str) -> None:
    """Seeded: true answers drawn, randomized by fair coins, the difference estimated."""
    rng = np.random.default_rng(11_011)
    replicates, sizes, shares = 1_000, (150, 120), (0.30, 0.10)
    truth = shares[0] - shares[1]
    reported = [
        simulate_reports(rng.random((replicates, n)) < share, FAIR_COINS, rng).sum(axis=1)
        for n, share in zip(sizes, shares, strict=True)
    ]
    covered = 0
    for a, b in zip(*reported, strict=True):
        counts = {"a": GroupCount(int(a), sizes[0]), "b": GroupCount(int(b), sizes[1])}
        difference = group_difference(counts, "a", "b", FAIR_COINS, method=method)
        covered += difference.low <= truth <= difference.high
    band = 5 * math.sqrt(0.95 * 0.05 / replicates)
    assert abs(covered / replicates - 0.95) <= band, covered


# --- the difference's coverage, exactly --------------------------------------------------


def exact_coverage(
    difference: Callable[[int, int], tuple[float, float]],
    sizes: tuple[int, int],
    rates: tuple[float, float],
    truth: float,
) -> float:
    """Σ P(x₁)·P(x₂)·[low ≤ truth ≤ high] over both binomial counts, through the real
    difference for every pair. Counts with probability below 1e-12 are skipped: the sum
    is then a lower bound, short by at most (n₁ + n₂ + 2)·1e-12."""
    (n1, n2), (rate1, rate2) = sizes, rates
    first, second = binom.pmf(range(n1 + 1), n1, rate1), binom.pmf(range(n2 + 1), n2, rate2)
    total = 0.0
    for x1 in np.flatnonzero(first >= 1e-12):
        for x2 in np.flatnonzero(second >= 1e-12):
            low, high = difference(int(x1), int(x2))
            total += first[x1] * second[x2] * (low <= truth <= high)
    return float(total)


@pytest.mark.parametrize(("shares", "reported"), [((1.0, 0.95), 0.912), ((0.02, 0.10), 0.927)])
def test_difference_of_shares_covers_exactly_where_the_clipped_points_failed(
    shares: tuple[float, float], reported: float
) -> None:
    """Groups of 30 and 300, fair coins, Clopper–Pearson in each: MOVER on the clipped
    estimates covered ``reported``; on the unclipped ones it covers more than 0.945
    (0.9719 and 0.9704; docs/COVERAGE.md has the grid)."""
    sizes = (30, 300)

    def difference(x1: int, x2: int) -> tuple[float, float]:
        counts = {"a": GroupCount(x1, sizes[0]), "b": GroupCount(x2, sizes[1])}
        d = group_difference(counts, "a", "b", FAIR_COINS)
        return d.low, d.high

    rates = (0.25 + 0.5 * shares[0], 0.25 + 0.5 * shares[1])
    assert exact_coverage(difference, sizes, rates, shares[0] - shares[1]) >= 0.945


def test_difference_of_duchi_means_covers_exactly() -> None:
    """Duchi's bit at ε = 2 on 0..10, groups of 30 and 300 with true means 10 and 9.5:
    each group's count of 1s is Binomial(n, (1 - r)/2 + r·s), s the mean's share."""
    duchi = DuchiBinary.from_epsilon(0, 10, Fraction(2))
    r, sizes, shares = float(duchi.lean), (30, 300), (1.0, 0.95)

    def difference(x1: int, x2: int) -> tuple[float, float]:
        sums = {"a": GroupSums(sizes[0], x1, x1), "b": GroupSums(sizes[1], x2, x2)}
        d = mean_difference(sums, "a", "b", duchi)
        return d.low, d.high

    rates = ((1 - r) / 2 + r * shares[0], (1 - r) / 2 + r * shares[1])
    assert exact_coverage(difference, sizes, rates, 10 * (shares[0] - shares[1])) >= 0.945


def test_difference_of_laplace_means_covers_at_the_range_s_end() -> None:
    """Seeded: groups of 30 and 300 at ε = 4 on 0..10, every answer 10 in the first and
    95% in the second. MOVER on the clipped intervals covered about 0.88 here; on the
    intervals before clipping it covers at least 0.95, less 5 standard errors."""
    laplace = DiscreteLaplace.from_epsilon(0, 10, Fraction(4))
    rng = np.random.default_rng(30_300)
    replicates, sizes, shares = 2_000, (30, 300), (1.0, 0.95)
    sums = []
    for n, share in zip(sizes, shares, strict=True):
        reports = simulate(laplace, np.where(rng.random((replicates, n)) < share, 10, 0), rng)
        counts = np.asarray(reports, dtype=np.int64)
        sums.append((counts.sum(axis=1), np.square(counts).sum(axis=1)))
    covered = 0
    for r in range(replicates):
        groups = {
            "a": GroupSums(sizes[0], int(sums[0][0][r]), int(sums[0][1][r])),
            "b": GroupSums(sizes[1], int(sums[1][0][r]), int(sums[1][1][r])),
        }
        difference = mean_difference(groups, "a", "b", laplace)
        assert difference.method == "mover-t"
        covered += difference.low <= 0.5 <= difference.high
    assert covered / replicates >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / replicates)


def test_difference_interval_on_arrays_is_group_difference_on_every_pair() -> None:
    """scripts/coverage_table.py evaluates ``difference_interval`` on all pairs at once."""
    design, sizes = TwoCoinDesign.from_epsilon(1.0), (30, 40)

    def column(n: int, axis: int) -> Interval:
        rows = [share_interval(x, n, design.p_true, design.p_false) for x in range(n + 1)]
        shape = (-1, 1) if axis == 0 else (1, -1)
        arrays = [np.array(c).reshape(shape) for c in zip(*rows, strict=True)]
        return Interval(*arrays)  # type: ignore[arg-type]  # arrays, as the script passes

    point, low, high = difference_interval(column(sizes[0], 0), column(sizes[1], 1), 1.0)
    assert isinstance(point, np.ndarray)
    for x1 in range(sizes[0] + 1):
        for x2 in range(sizes[1] + 1):
            counts = {"a": GroupCount(x1, sizes[0]), "b": GroupCount(x2, sizes[1])}
            d = group_difference(counts, "a", "b", design)
            assert (d.point, d.low, d.high) == (point[x1, x2], low[x1, x2], high[x1, x2])


@pytest.mark.parametrize("design", [FAIR_COINS, PLAIN], ids=["fair", "plain"])
def test_difference_holds_its_point_within_the_possible_differences(
    design: TwoCoinDesign | PlainChoice,
) -> None:
    """The point shown is the difference of the groups' shown points, strictly inside a
    positive-width interval within [-1, 1], even when both groups' counts lie beyond what
    any share produces on average (0 of 30 and 60 of 60 under fair coins)."""
    for x1 in range(0, 31, 3):
        for x2 in range(0, 61, 5):
            counts = {"a": GroupCount(x1, 30), "b": GroupCount(x2, 60)}
            d = group_difference(counts, "a", "b", design)
            a, b = (
                estimate_proportion(c.reported, c.n, design.p_true, design.p_false)
                for c in counts.values()
            )
            assert a is not None and b is not None
            assert d.point == a.point - b.point
            assert -1 <= d.low <= d.point <= d.high <= 1 and d.low < d.high


def test_means_by_group_are_the_dashboard_s_means() -> None:
    duchi = DuchiBinary.from_epsilon(0, 10, Fraction(1))
    sums = {"a": GroupSums(40, 25, 25), "b": GroupSums(10, 3, 3), "c": GroupSums(25, 9, 9)}
    rows = means_by_group(sums, duchi, 0.9)
    assert [row.groups for row in rows] == [("a",), ("b", "c")]
    assert rows[0].estimate == estimate_number_mean(duchi, 40, 25, 25, 0.9)
    assert rows[1].estimate == estimate_number_mean(duchi, 35, 12, 12, 0.9)


def test_mean_difference_without_spread_spans_every_difference() -> None:
    """All reports equal to a t interval: nothing bounds a group's mean, so the difference
    may be anything the range allows."""
    laplace = DiscreteLaplace.from_epsilon(0, 10, Fraction(1))
    sums = {"a": GroupSums(30, 90, 270), "b": GroupSums(30, 100, 500)}
    d = mean_difference(sums, "a", "b", laplace)
    assert (d.low, d.high) == (-10.0, 10.0) and d.low <= d.point <= d.high
