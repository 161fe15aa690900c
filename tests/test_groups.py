"""Estimates by group: per-group estimates, the minimum size, and a difference with its interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from survey_app.privacy import (
    FAIR_COINS,
    GeneralizedRandomizedResponse,
    PlainChoice,
    TwoCoinDesign,
    estimate_proportion,
    simulate_reports,
)
from survey_app.privacy.groups import (
    MIN_GROUP_SIZE,
    GroupCount,
    GroupTooSmallError,
    count_by_group,
    estimate_by_group,
    group_difference,
)

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
