"""A rating scale's mean score: each mechanism's pair rates against its exact distribution,
the variance sᵀ Cov s against the exact one, a seeded simulation within 5 standard errors,
the plain case against the t interval's standard error, the boundary cases, and (slow) the
interval's coverage at a few points of docs/scale-coverage.md."""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from survey_app.privacy import AnswerSpace, QuestionType, mechanism_for, scale_means
from survey_app.privacy.choosing import choice_mechanism
from survey_app.privacy.means import estimate_mean
from survey_app.privacy.mechanisms import (
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    PlainChoice,
    ScaleMechanism,
    SubsetSelection,
    file_names,
    plain,
    randomized,
)
from survey_app.privacy.scale_means import estimate_mean_score, report_score_variance
from survey_app.privacy.wire import ReportFormat

ROOT = Path(__file__).parents[2]
_spec = importlib.util.spec_from_file_location("scale_coverage", ROOT / "scripts/scale_coverage.py")
assert _spec is not None and _spec.loader is not None
scale_coverage = importlib.util.module_from_spec(_spec)
sys.modules["scale_coverage"] = scale_coverage
_spec.loader.exec_module(scale_coverage)

K = 5
#: Unequal gaps, so a scale read as 0, 1, 2, … gives other numbers.
SCORES = (0, 1, 3, 4, 10)
TRUTH = (0.4, 0.25, 0.15, 0.12, 0.08)
MECHANISMS: list[ScaleMechanism] = [
    GeneralizedRandomizedResponse.from_epsilon(K, Fraction(1)),
    OptimizedUnaryEncoding.from_epsilon(K, Fraction(1)),
    SubsetSelection.from_epsilon(K, Fraction(1), 2),
    SubsetSelection.from_epsilon(K, Fraction(1), 3),
    PlainChoice(K),
]


def _members(mechanism: ScaleMechanism, key: str) -> set[int]:
    """The options one report (as the audit writes it) counts in."""
    report = mechanism.report_format.from_audit_key(key)
    if isinstance(report, int):
        return {report}
    if mechanism.report_format is ReportFormat.BITS:
        return {j for j, bit in enumerate(report) if bit}
    return set(report)


def _exact_reports(mechanism: ScaleMechanism) -> list[tuple[set[int], list[Fraction]]]:
    """Every report's options and its exact chance given each true option."""
    support = mechanism.finite_support()
    assert support is not None
    reports = []
    for key in support:
        report = mechanism.report_format.from_audit_key(key)
        chances = [Fraction(mechanism.probability(report, value)) for value in range(K)]
        reports.append((_members(mechanism, key), chances))
    return reports


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
def test_pair_rates_are_the_mechanisms_exact_chances(mechanism: ScaleMechanism) -> None:
    with_truth, neither = mechanism.pair_rates
    reports = _exact_reports(mechanism)
    for i, j in itertools.combinations(range(K), 2):
        both = [sum(c[v] for m, c in reports if {i, j} <= m) for v in range(K)]
        assert both[i] == both[j] == with_truth
        assert all(both[v] == neither for v in range(K) if v not in (i, j))


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
def test_the_score_variance_is_exact(mechanism: ScaleMechanism) -> None:
    """Var(Σ s_i I_i) for one report, summed over every report exactly, and the formula."""
    shares = [Fraction(x).limit_denominator(100) for x in TRUTH]
    reports = _exact_reports(mechanism)
    chance = [sum(c[v] * shares[v] for v in range(K)) for _, c in reports]
    value = [sum(SCORES[i] for i in m) for m, _ in reports]
    mean = sum(p * x for p, x in zip(chance, value, strict=True))
    exact = sum(p * x * x for p, x in zip(chance, value, strict=True)) - mean * mean
    found = report_score_variance(mechanism, [float(x) for x in shares], SCORES)
    assert found == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.parametrize("mechanism", MECHANISMS[:4], ids=repr)
def test_the_mean_score_is_unbiased_with_the_formulas_variance(
    mechanism: ScaleMechanism,
) -> None:
    """2,000 seeded surveys of 300: the unbiased mean score's average within 5 standard
    errors of the truth, its variance within 5 standard errors of sᵀ Cov s/(n(p - q)²)."""
    rng = np.random.default_rng(19_004)
    n, surveys = 300, 2_000
    values = rng.choice(K, size=(surveys, n), p=TRUTH)
    counts = scale_coverage.option_counts(mechanism, mechanism.simulate(values, rng), K)
    p, q = mechanism.p_true, mechanism.p_false
    estimates = ((counts / n - q) / (p - q)) @ np.array(SCORES)
    truth = float(np.dot(SCORES, TRUTH))
    variance = report_score_variance(mechanism, TRUTH, SCORES) / (n * (p - q) ** 2)
    assert abs(estimates.mean() - truth) <= 5 * math.sqrt(variance / surveys)
    measured = estimates.var(ddof=1)
    assert abs(measured / variance - 1) <= 5 * math.sqrt(2 / (surveys - 1))
    shown = estimate_mean_score(mechanism, [int(c) for c in counts[0]], n, SCORES)
    assert shown is not None and shown.unclipped == pytest.approx(estimates[0])
    assert shown.std_error == pytest.approx(math.sqrt(variance), rel=0.25)


def test_a_plain_scales_standard_error_is_the_sample_means() -> None:
    counts = [3, 0, 7, 4, 1]
    n = sum(counts)
    shown = estimate_mean_score(PlainChoice(K), counts, n, SCORES)
    total = sum(s * c for s, c in zip(SCORES, counts, strict=True))
    squares = sum(s * s * c for s, c in zip(SCORES, counts, strict=True))
    plain = estimate_mean(n, total, squares, 0.0, 1.0, 0, 10)
    assert shown is not None and plain is not None
    assert (shown.point, shown.std_error) == pytest.approx((plain.point, plain.std_error))
    assert shown.low < shown.point < shown.high and shown.method == "score"


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
def test_the_variance_curve_is_the_variance_at_the_moved_shares(
    mechanism: ScaleMechanism,
) -> None:
    """The score interval's variance at a mean μ: exactly the variance at the shares mixed
    with everyone at the end score on μ's side, in the proportion that makes the mean μ."""
    curve = scale_means._variance_curve(mechanism, TRUTH, SCORES)
    now = float(np.dot(SCORES, TRUTH))
    for mean in (0.0, 0.5, now, 2.77, 9.5, 10.0):
        end = 4 if mean >= now else 0
        weight = (mean - now) / (SCORES[end] - now)
        moved = [(1 - weight) * share + weight * (i == end) for i, share in enumerate(TRUTH)]
        assert float(np.dot(SCORES, moved)) == pytest.approx(mean)
        expected = report_score_variance(mechanism, moved, SCORES)
        assert curve(mean) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_edges_nothing_one_report_everyone_at_the_top_and_beyond_the_range() -> None:
    grr = MECHANISMS[0]
    assert estimate_mean_score(grr, [0] * K, 0, SCORES) is None
    one = estimate_mean_score(grr, [0, 0, 1, 0, 0], 1, SCORES)
    assert one is not None and (one.low, one.high) == (0, 10)
    top = estimate_mean_score(PlainChoice(K), [0, 0, 0, 0, 40], 40, SCORES)
    assert top is not None and top.point == 10 and 0 < top.low < top.high == 10
    oue = MECHANISMS[1]
    beyond = estimate_mean_score(oue, [0, 0, 0, 0, 40], 40, SCORES)
    assert beyond is not None and beyond.unclipped > 10
    assert beyond.point == beyond.high == 10 and 0 <= beyond.low < 10
    with pytest.raises(ValueError):
        estimate_mean_score(grr, [1, 2], 3, SCORES)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "epsilon", "truth", "n"),
    [
        ("plain", None, "mostly never", 30),
        ("plain", None, "polarized", 100),
        ("grr", "4", "mostly never", 30),
        ("oue", "4", "polarized", 30),
        ("subset", "2", "uniform", 100),
        ("oue", "1", "uniform", 300),
    ],
)
def test_the_interval_covers_at_points_of_the_table(
    name: str, epsilon: str | None, truth: str, n: int
) -> None:
    """4,000 seeded surveys each (standard error 0.0034): at least 0.945. The second point,
    a plain scale answered only at its ends, falls to 0.9415 both with the plug-in
    variance (no moved shares) and without the continuity correction."""
    if epsilon is None:
        mechanism: ScaleMechanism = PlainChoice(4)
    else:
        mechanism = cast(ScaleMechanism, choice_mechanism(4, Fraction(epsilon), name))
    shares = scale_coverage.TRUTHS[truth]
    assert scale_coverage.coverage(mechanism, shares, n, 4_000, seed=n) >= 0.945


def test_a_scale_is_answered_by_a_choices_mechanisms() -> None:
    scale, choice = QuestionType.SCALE, QuestionType.CHOICE
    assert scale.has_options and scale.has_scores and not choice.has_scores
    assert randomized(scale) == randomized(choice) and plain(scale) is PlainChoice
    assert file_names(scale) == file_names(choice)
    assert scale.file_mechanisms == choice.file_mechanisms
    for epsilon in ("0.5", "1", "4"):
        space = AnswerSpace(scale, options=8)
        chosen = mechanism_for(space, Fraction(epsilon))
        assert chosen == choice_mechanism(8, Fraction(epsilon))
