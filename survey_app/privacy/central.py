"""Central-model releases: noisy counts of plain answers, Report Noisy Max, by-group estimates
with noisy sizes, and the budget ledger that charges them.

The coins protect the *content* of sensitive answers: a figure computed from the randomized
reports is post-processing when a neighbour means one person's answers changed. It is not
free when a neighbour means one person added or removed, the meaning used here: how many
reports there are is a count of who took part, and an interval's width is a function of
it. Counts of *plain* answers (a plain question's histogram, group sizes, counts by group)
are exact facts about who took part as well. So a public page releases counts only with
noise added here, by the curator. Neighbouring data sets: one respondent added or
removed. Each release states its ℓ1-sensitivity Δ:

- one count of respondents: Δ = 1;
- the histogram of one plain question (disjoint cells, one respondent in one cell): Δ = 1
  for the whole histogram;
- by-group tallies of a sensitive question, the pairs (n_g, reported_g) over the groups of
  a plain covariate: one respondent moves n_g by 1 and reported_g by at most 1, Δ = 2;
- Report Noisy Max over a histogram: one count moves by 1 (Δ = 1);
- a sensitive question's (n, report counts): whether a person answered is itself a count
  of who took part, so estimates for a page that promises to hide participation come from
  noisy counts too (``release_sensitive_estimates``, which states its accounting).

Noise is discrete Laplace with γ = ε/Δ, P(Z = z) = (1 - α)/(1 + α)·α^|z|, α = e^-γ, from
``coins.discrete_laplace`` (exact, integer arithmetic, the ``secrets`` source or an
injected one): ε-DP with ε = Δ·γ exactly, since a neighbour shifts the query by at most Δ
in ℓ1 and each unit of shift changes a probability by at most e^γ.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from functools import partial
from statistics import NormalDist
from types import MappingProxyType
from typing import Any, ClassVar, cast

from .coins import SECURE, RandomSource, discrete_laplace, uniform_below
from .estimate import Estimate
from .groups import MIN_GROUP_SIZE, GroupCount
from .means import MeanEstimate
from .mechanisms import DiscreteLaplace, Mechanism, NumericMechanism, ProportionMechanism
from .mechanisms.central_counting import CentralCounting
from .rationals import checked_epsilon

SENSITIVITY = MappingProxyType(
    {
        "count": 1,
        "histogram": 1,
        "group_tallies": 2,
        "noisy_max": 1,
    }
)
ACCURACY_CONFIDENCE = 0.95
NOISY_INTERVAL_METHOD = "score+noise"


def central_epsilon(value: Fraction | float | str) -> Fraction:
    """A central ε as an exact rational; a string is read as a decimal ("0.1" is 1/10)."""
    if isinstance(value, str):
        try:
            value = Fraction(value.strip())
        except ValueError:
            raise ValueError(f"epsilon must be a positive number, got {value!r}") from None
    return checked_epsilon(value)


def decimal_text(value: Fraction) -> str:
    """A central ε or budget as text, the form it is stored and shown in: the exact decimal
    when it has one ("0.25"), else "p/q". ``central_epsilon`` reads either back exactly."""
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def noise_gamma(epsilon: Fraction | float | str, sensitivity: int) -> Fraction:
    """γ = ε/Δ: the discrete Laplace parameter that makes a Δ-sensitive query ε-DP."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, int) or sensitivity < 1:
        raise ValueError("the sensitivity must be a positive integer")
    return central_epsilon(epsilon) / sensitivity


def tail_probability(gamma: Fraction, t: int) -> float:
    """P(|Z| ≥ t) for discrete Laplace noise, exactly: 1 for t ≤ 0, else 2α^t/(1 + α).

    (Σ_{z ≥ t} of the pmf is (1 - α)/(1 + α)·α^t/(1 - α) on each side.) The continuous
    Laplace's e^(-γt) is not this: at small t the discrete tail is lighter.
    """
    if t <= 0:
        return 1.0
    alpha = math.exp(-float(gamma))
    return 2 * math.exp(-float(gamma) * t) / (1 + alpha)


def accuracy_bound(gamma: Fraction, k: int = 1, confidence: float = ACCURACY_CONFIDENCE) -> int:
    """The smallest integer m with P(every one of k noisy counts is within ±m) ≥ ``confidence``.

    By the union bound it suffices that k·P(|Z| > m) = k·P(|Z| ≥ m + 1) ≤ 1 - confidence;
    with the exact tail, m + 1 ≥ ln(2/(β(1 + α)))/γ for β = (1 - confidence)/k.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    beta = (1 - confidence) / k
    alpha = math.exp(-float(gamma))
    m = max(0, math.ceil(math.log(2 / (beta * (1 + alpha))) / float(gamma)) - 1)
    # The logarithm is rounded; settle the integer against the tail itself.
    while m > 0 and tail_probability(gamma, m) <= beta:
        m -= 1
    while tail_probability(gamma, m + 1) > beta:
        m += 1
    return m


@dataclass(frozen=True)
class NoisyCounts:
    """Counts released with discrete Laplace noise, and how far off they can be.

    ``accuracy``: each count is within ±accuracy of the truth with probability ≥ 95%.
    ``joint_accuracy``: all of them at once, with probability ≥ 95% (union bound).
    """

    values: tuple[int, ...]
    epsilon: Fraction
    sensitivity: int
    accuracy: int
    joint_accuracy: int


def noisy_counts(
    counts: Sequence[int],
    epsilon: Fraction | float | str,
    sensitivity: int = 1,
    source: RandomSource = SECURE,
) -> NoisyCounts:
    """Each count plus independent discrete Laplace noise with γ = ε/Δ: ε-DP for the whole
    vector when one respondent moves it by at most Δ in ℓ1 (see ``SENSITIVITY``).

    Zero counts are released too: leaving out empty cells would reveal them exactly.
    """
    if not counts:
        raise ValueError("nothing to release")
    gamma = noise_gamma(epsilon, sensitivity)
    return NoisyCounts(
        values=tuple(_count(c) + discrete_laplace(gamma, source) for c in counts),
        epsilon=gamma * sensitivity,
        sensitivity=sensitivity,
        accuracy=accuracy_bound(gamma),
        joint_accuracy=accuracy_bound(gamma, len(counts)),
    )


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"a count must be a whole number ≥ 0, got {value!r}")
    return value


def report_noisy_max(
    counts: Sequence[int], epsilon: Fraction | float | str, source: RandomSource = SECURE
) -> int:
    """The index of the largest count after discrete Laplace noise with γ = ε; only that index.

    ε-DP (Dwork & Roth, Claim 3.9, redone for integer noise). Ties among the noisy maxima
    go to one of them uniformly at random, which is the same as a random priority order
    drawn independently of the data; fix that order. Fix also every noise value but
    option i's, r_{-i}. Then i wins exactly when r_i ≥ r*, for an integer threshold r*
    set by r_{-i}, the counts and the order. A neighbour (one respondent added or
    removed) moves one count by one, so r* moves by at most one: P(r_i ≥ r* - 1) ≤
    e^γ·P(r_i ≥ r*), because every tail of the discrete Laplace satisfies
    P(Z ≥ m - 1) ≤ e^γ·P(Z ≥ m) (the pmf ratio between neighbours is at most e^γ).
    Averaging over r_{-i} and the order keeps the factor: ε = γ.

    Why not the exponential-mechanism form: it needs coins with probabilities
    proportional to e^(ε·c/2) (irrational, sampled exactly only with more machinery) and
    spends ε/2 per unit of count; the discrete Laplace sampler already exists and is exact.
    """
    if len(counts) < 2:
        raise ValueError("Report Noisy Max needs at least two counts")
    gamma = noise_gamma(epsilon, SENSITIVITY["noisy_max"])
    noisy = [_count(c) + discrete_laplace(gamma, source) for c in counts]
    best = max(noisy)
    tied = [i for i, value in enumerate(noisy) if value == best]
    return tied[uniform_below(len(tied), source)]


@dataclass(frozen=True)
class NoisyGroup:
    """One group's released tallies and the estimate computed from them alone.

    ``noisy_n`` and ``noisy_reported`` carry discrete Laplace noise (Δ = 2 for the pair over
    all groups); ``estimate`` is None when ``noisy_n`` is below the minimum group size.
    """

    group: str
    noisy_n: int
    noisy_reported: int
    estimate: Estimate | None


@dataclass(frozen=True)
class NoisyGroupRelease:
    """By-group estimates for a public page; ``accuracy`` and ``joint_accuracy`` are of the
    noisy tallies, one at a time and all 2·groups at once (95%)."""

    groups: tuple[NoisyGroup, ...]
    epsilon: Fraction
    sensitivity: int
    accuracy: int
    joint_accuracy: int


def release_group_estimates(
    counts: Mapping[str, GroupCount],
    mechanism: ProportionMechanism,
    epsilon: Fraction | float | str,
    confidence: float = 0.95,
    min_size: int = MIN_GROUP_SIZE,
    source: RandomSource = SECURE,
) -> NoisyGroupRelease:
    """Noise every group's (n_g, reported_g) with Δ = 2, then estimate from the noisy pair only.

    ``counts`` must hold every group the covariate has (its options), empty ones too:
    which groups appear must not depend on the data. Whether a group's estimate is shown
    is decided on its *noisy* size, since a decision on the true size would leak it. The
    interval accounts for the noise (``noisy_share_interval``).
    """
    if min_size < 1:
        raise ValueError("the minimum group size must be at least 1")
    sensitivity = SENSITIVITY["group_tallies"]
    gamma = noise_gamma(epsilon, sensitivity)
    variance = discrete_laplace_variance(gamma)
    groups = []
    for group, tally in counts.items():
        if not 0 <= tally.reported <= tally.n:
            raise ValueError(f"group {group!r}: the count must lie between 0 and n")
        noisy_n = tally.n + discrete_laplace(gamma, source)
        noisy_reported = tally.reported + discrete_laplace(gamma, source)
        estimate = None
        if noisy_n >= min_size:
            estimate = noisy_share_interval(
                noisy_reported, noisy_n, variance, mechanism.p_true, mechanism.p_false, confidence
            )
        groups.append(NoisyGroup(group, noisy_n, noisy_reported, estimate))
    return NoisyGroupRelease(
        groups=tuple(groups),
        epsilon=gamma * sensitivity,
        sensitivity=sensitivity,
        accuracy=accuracy_bound(gamma),
        joint_accuracy=accuracy_bound(gamma, 2 * len(groups)),
    )


def noisy_share_interval(
    noisy_reported: int,
    noisy_n: int,
    noise_variance: float,
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
) -> Estimate:
    """A share estimate and interval from a noisy count ỹ among a noisy total ñ.

    With ỹ = y + Z₁, ñ = n + Z₂, y ~ Binomial(n, λ) and V the noise variance,
    Var(ỹ - λñ) = nλ(1 - λ) + V(1 + λ²) exactly: the sampling variance and the added noise,
    summed. The interval for λ is every λ the score test keeps,
    (ỹ - λñ)² ≤ z²(ñλ(1 - λ) + V(1 + λ²)), a quadratic inequality; with V = 0 it is Wilson's
    interval. It maps to π through the design's affine map, like ``estimate_proportion``,
    with the same boundary rule: a rate beyond [p_false, p_true] is evaluated at that end,
    which only widens. If the noise swamps the count (the quadratic opens downward) the
    interval is all of [0, 1]. Coverage is checked by a seeded simulation in
    ``tests/privacy/test_central.py``.
    """
    if noisy_n < 1:
        raise ValueError("the noisy total must be at least 1 to estimate a share")
    if not 0 <= p_false < p_true <= 1:
        raise ValueError("need 0 <= p_false < p_true <= 1: a report must carry some signal")
    slope = p_true - p_false
    n = float(noisy_n)
    rate = noisy_reported / n
    boundary_rate = min(max(rate, p_false), p_true)
    # One report's variance λ(1 - λ) = 0 + 1·λ - 1·λ².
    bounds = _score_bounds(
        boundary_rate * n, n, confidence, (0.0, 1.0, -1.0), noise_variance, noise_variance
    )
    low_rate, high_rate = (0.0, 1.0) if bounds is None else bounds
    variance_rate = min(max(rate, 0.0), 1.0)
    std_error = math.sqrt(
        variance_rate * (1 - variance_rate) / n + noise_variance * (1 + variance_rate**2) / n**2
    )
    unclipped = (rate - p_false) / slope
    return Estimate(
        point=min(max(unclipped, 0.0), 1.0),
        unclipped=unclipped,
        std_error=std_error / slope,
        low=max((low_rate - p_false) / slope, 0.0),
        high=min((high_rate - p_false) / slope, 1.0),
        confidence=confidence,
        method=NOISY_INTERVAL_METHOD,
    )


def _score_bounds(
    total: float,
    n: float,
    confidence: float,
    per_report: tuple[float, float, float],
    report_noise: float,
    count_noise: float,
) -> tuple[float, float] | None:
    """Every θ the score test keeps for a noisy total ỹ among a noisy count ñ, or None
    when it keeps every θ (the noise swamps the data: the quadratic opens downward).

    With ỹ = y + Z₁, ñ = n + Z₂ and E y = θn, Var(ỹ - θñ) = n·v(θ) + V₁ + θ²V₂, v(θ) =
    v₀ + v₁θ + v₂θ² one report's variance, V₁ and V₂ the two noises' variances. Keeping
    (ỹ - θñ)² ≤ z²·(ñ·v(θ) + V₁ + θ²V₂) is a quadratic inequality in θ; shares and means
    share it, with v(λ) = λ(1 - λ) for a share and a constant bound for a mean.
    """
    v0, v1, v2 = per_report
    z2 = NormalDist().inv_cdf(0.5 + confidence / 2) ** 2
    a = n * n - z2 * n * v2 - z2 * count_noise
    b = -(2 * total * n + z2 * n * v1)
    c = total * total - z2 * n * v0 - z2 * report_noise
    if a <= 0:
        return None
    half = math.sqrt(max(b * b - 4 * a * c, 0.0)) / (2 * a)
    return -b / (2 * a) - half, -b / (2 * a) + half


def discrete_laplace_variance(gamma: Fraction) -> float:
    """Var Z of discrete Laplace noise at γ, 2α/(1 - α)²: the same noise DiscreteLaplace
    adds to a report, so one formula serves both."""
    return DiscreteLaplace(0, 1, gamma).noise_variance


# --- the sensitive questions' estimates, from noisy counts ------------------------------------


#: An estimate from (ñ, c̃, V_reports, V_n, confidence): one noisy count's category.
_Estimator = Callable[[int, int, float, float, float], Estimate | MeanEstimate]


def _counting(mechanism: Mechanism) -> CentralCounting:
    """How the mechanism's reports are counted for a release (it alone knows)."""
    counting = mechanism.central_counting()
    if counting is None:
        raise ValueError(f"{mechanism.name!r} reports are not randomized: nothing to release here")
    return counting


def _estimator(mechanism: Mechanism) -> _Estimator:
    """How a count's estimate follows from the noisy counts, by what the count estimates:
    a share; a mean from one-bit reports (the share of the range their 1s estimate,
    ``bit_rates``); or a mean from reports on the answer's scale, summed around the centre."""
    centre = _counting(mechanism).centre
    if not mechanism.question_type.estimates_mean:
        return partial(_share, cast(ProportionMechanism, mechanism))
    numeric = cast(NumericMechanism, mechanism)
    rates = numeric.bit_rates
    if rates is not None:
        return partial(_bit_mean, numeric, rates)
    return partial(_sum_mean, numeric, centre)


def _share(
    mechanism: ProportionMechanism,
    noisy_n: int,
    noisy_count: int,
    report_noise: float,
    count_noise: float,
    confidence: float,
) -> Estimate:
    # w = 1: the count and the reports carry the same noise (count_noise == report_noise).
    return noisy_share_interval(
        noisy_count, noisy_n, report_noise, mechanism.p_true, mechanism.p_false, confidence
    )


def _bit_mean(
    mechanism: NumericMechanism,
    rates: tuple[float, float],
    noisy_n: int,
    noisy_ones: int,
    report_noise: float,
    count_noise: float,
    confidence: float,
) -> MeanEstimate:
    """A one-bit report is 1 with probability p_false + (p_true - p_false)·π for an answer
    at π = (x - min)/(max - min) of the range (Duchi's bit: p_true, p_false = (1 ± r)/2):
    a share's two probabilities, so the share's interval mapped onto [min, max]. Answers
    differ between respondents, so the count of 1s is a sum of unequal Bernoullis, whose
    variance is at most the binomial's the interval assumes."""
    share = noisy_share_interval(noisy_ones, noisy_n, report_noise, *rates, confidence)
    width = mechanism.max - mechanism.min

    def answer(value: float) -> float:
        return mechanism.min + width * value

    return MeanEstimate(
        point=answer(share.point),
        unclipped=answer(share.unclipped),
        std_error=width * share.std_error,
        low=answer(share.low),
        high=answer(share.high),
        confidence=confidence,
    )


def _sum_mean(
    mechanism: NumericMechanism,
    centre: int,
    noisy_n: int,
    noisy_sum: int,
    report_noise: float,
    count_noise: float,
    confidence: float,
) -> MeanEstimate:
    """The mean answer from a noisy clipped sum S̃ of reports less ``centre`` among ñ
    reports. In report units the mean report is centre + S̃/ñ, and every mean the score
    test keeps, (S̃ - θñ)² ≤ z²(ñσ² + V_S + θ²V_n) with θ = mean - centre and σ² the
    largest variance one report can have (``worst_case_variance``, in answer units, over
    value_scale²: the answers' widest spread plus the mechanism's noise; clipping, a
    contraction, only lowers it). Each end maps to the answer's scale as every report
    does, value_offset + value_scale·report (the identity for discrete Laplace, whose
    reports are answers plus noise). As for shares, a mean beyond [min, max] is evaluated
    at that end, which only widens, and the interval is kept inside [min, max]. Clipped
    reports are taken as unbiased (``DiscreteLaplace.central_counting`` says why that is
    safe).
    """
    offset, scale = mechanism.value_offset, mechanism.value_scale

    def answer(report: float) -> float:
        return offset + scale * (centre + report)

    n = float(noisy_n)
    lowest = (mechanism.min - offset) / scale - centre
    highest = (mechanism.max - offset) / scale - centre
    rate = min(max(noisy_sum / n, lowest), highest)
    variance = mechanism.worst_case_variance / (scale * scale)
    bounds = _score_bounds(rate * n, n, confidence, (variance, 0.0, 0.0), report_noise, count_noise)
    low, high = (lowest, highest) if bounds is None else bounds
    std_error = scale * math.sqrt(
        variance / n + (report_noise + rate * rate * count_noise) / (n * n)
    )
    unclipped = answer(noisy_sum / n)
    return MeanEstimate(
        point=min(max(unclipped, mechanism.min), mechanism.max),
        unclipped=unclipped,
        std_error=std_error,
        low=max(answer(low), mechanism.min),
        high=min(answer(high), mechanism.max),
        confidence=confidence,
    )


@dataclass(frozen=True)
class NoisyQuestion:
    """One sensitive question's released counts and the estimates computed from them alone.

    ``noisy_n``: how many answered it, plus noise; ``noisy_reports``: its report counts
    plus noise (a choice's options or bits, a yes/no question's or Duchi's reported 1s, a
    discrete Laplace number's one clipped sum around the centre). ``estimates``: one per
    report count, none when ``noisy_n`` is below 1 (nothing to divide by).
    ``n_accuracy`` and ``report_accuracy``: ±m holding with 95% probability for the noisy
    n and for each noisy report count.
    """

    noisy_n: int
    noisy_reports: tuple[int, ...]
    epsilon: Fraction
    count_gamma: Fraction
    report_gamma: Fraction
    report_sensitivity: int
    count_weight: int
    n_accuracy: int
    report_accuracy: int
    estimates: tuple[Estimate | MeanEstimate, ...]


def tally_reports(mechanism: Mechanism, reports: Mapping[Any, int]) -> tuple[int, ...]:
    """(n, c_1, …, c_m): how many reports there are and the counts a release noises, from
    how many times each report was stored (a skip is no report)."""
    counting = _counting(mechanism)
    counts = [0] * counting.categories
    for report, times in reports.items():
        for index, amount in enumerate(counting.contribution(report)):
            counts[index] += _count(times) * amount
    return (sum(reports.values()), *counts)


def question_noise(
    mechanism: Mechanism, epsilon: Fraction | float | str
) -> tuple[Fraction, Fraction]:
    """(γ_n, γ_c): the noise on n and on each report count that makes the question's
    release ε-DP. One respondent moves n by 1 and the counts by at most Δ (ℓ1), so with
    γ_c = ε/(w + Δ) and γ_n = w·γ_c the privacy loss is at most γ_n + Δ·γ_c = ε."""
    counting = _counting(mechanism)
    per_count = central_epsilon(epsilon) / (counting.count_weight + counting.report_sensitivity)
    return counting.count_weight * per_count, per_count


def release_question(
    mechanism: Mechanism,
    tally: Sequence[int],
    epsilon: Fraction | float | str,
    confidence: float = 0.95,
    source: RandomSource = SECURE,
) -> NoisyQuestion:
    """A question's ``tally_reports`` with noise (``question_noise``), and its estimates."""
    count_gamma, report_gamma = question_noise(mechanism, epsilon)
    counting = _counting(mechanism)
    n, *counts = tally
    noisy_n = _count(n) + discrete_laplace(count_gamma, source)
    noisy_reports = tuple(count + discrete_laplace(report_gamma, source) for count in counts)
    return NoisyQuestion(
        noisy_n=noisy_n,
        noisy_reports=noisy_reports,
        epsilon=central_epsilon(epsilon),
        count_gamma=count_gamma,
        report_gamma=report_gamma,
        report_sensitivity=counting.report_sensitivity,
        count_weight=counting.count_weight,
        n_accuracy=accuracy_bound(count_gamma),
        report_accuracy=accuracy_bound(report_gamma),
        estimates=noisy_estimates(
            mechanism, noisy_n, noisy_reports, (count_gamma, report_gamma), confidence
        ),
    )


def noisy_estimates(
    mechanism: Mechanism,
    noisy_n: int,
    noisy_reports: Sequence[int],
    gammas: tuple[Fraction, Fraction],
    confidence: float = 0.95,
) -> tuple[Estimate | MeanEstimate, ...]:
    """Estimates from the noisy counts alone, with intervals that count the noise's
    variance (``_score_bounds``); none when ``noisy_n`` < 1. Nothing exact goes in, so
    whatever comes out is post-processing of the noisy release."""
    if noisy_n < 1:
        return ()
    count_gamma, report_gamma = gammas
    count_noise = discrete_laplace_variance(count_gamma)
    report_noise = discrete_laplace_variance(report_gamma)
    if mechanism.question_type.is_multiple:
        return _ticked_estimates(
            cast(ProportionMechanism, mechanism), noisy_reports, report_noise, confidence
        )
    estimate = _estimator(mechanism)
    return tuple(
        estimate(noisy_n, count, report_noise, count_noise, confidence) for count in noisy_reports
    )


def _ticked_estimates(
    mechanism: ProportionMechanism,
    noisy_reports: Sequence[int],
    noise: float,
    confidence: float,
) -> tuple[Estimate, ...]:
    """Tick all that apply: option j's share from its two noisy counts alone, the reports
    about j saying "not ticked" and "ticked" (``central_counting``'s cells 2j and 2j + 1):
    ỹ = c̃_j1 among ñ_j = c̃_j0 + c̃_j1, a yes/no question answered n_j times with the
    mechanism's p and 1 - p. ñ_j shares ỹ's noise, so Var(ỹ - λñ_j) = n_jλ(1 - λ) +
    V((1 - λ)² + λ²), at most the V(1 + λ²) ``noisy_share_interval`` allows for: its
    interval is conservative here. An ñ_j below 1 is taken as 1, where the noise swamps
    the count and the interval is all of [0, 1]."""
    pairs = zip(noisy_reports[::2], noisy_reports[1::2], strict=True)
    return tuple(
        noisy_share_interval(
            ticked,
            max(not_ticked + ticked, 1),
            noise,
            mechanism.p_true,
            mechanism.p_false,
            confidence,
        )
        for not_ticked, ticked in pairs
    )


def release_sensitive_estimates(
    tallies: Sequence[tuple[Mechanism, Sequence[int]]],
    epsilon: Fraction | float | str,
    confidence: float = 0.95,
    source: RandomSource = SECURE,
) -> tuple[NoisyQuestion, ...]:
    """Every sensitive question's (n, report counts) with noise, and the estimates from them.

    The accounting. Neighbours: one respondent added or removed; they may answer every
    question. For question q they move n_q by 1 and the report counts by at most Δ_q in
    ℓ1 (nothing if they skipped it): Δ_q = 1 for a yes/no question, a GRR choice (one
    option) and Duchi's bit; k for OUE (a report may set all k bits); for a discrete
    Laplace number, M = H + B, its largest clipped report around the centre. The figure's
    ε is split equally, ε_q = ε/Q over its Q questions, and question q's noise
    (``question_noise``) makes it ε_q-DP, so by basic composition the Q releases together
    are ε-DP. For a share, w = 1 and every count gets γ = ε_q/(1 + Δ_q): ε_q/2, or
    ε_q/(1 + k) for OUE. For a mean, n's error weighs up to H times a sum's, so n gets
    H times the γ of the sum; with one γ for both, n would carry the sum's noise, in the
    thousands for a 0-50 question, and vanish under it. Estimates and intervals are then
    computed from the noisy values alone (post-processing).
    """
    if not tallies:
        return ()
    share = central_epsilon(epsilon) / len(tallies)
    return tuple(
        release_question(mechanism, tally, share, confidence, source)
        for mechanism, tally in tallies
    )


def fingerprint(value: object) -> str:
    """16 hex digits of SHA-256 over canonical JSON: names a snapshot's data or choices."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- the budget ledger ------------------------------------------------------------------------


class LedgerError(ValueError):
    """A release or a budget the ledger refuses; the ledger is unchanged.

    It carries the figures (what was asked, the budget, what is spent), never a sentence:
    the publish page and the command line each put them in their own words.
    """


class NoBudgetError(LedgerError):
    """A release that costs ε (``needed``) on a ledger with no budget set."""

    def __init__(self, needed: Fraction) -> None:
        super().__init__(needed)
        self.needed = needed


class BudgetExceededError(LedgerError):
    """A release needing ``needed`` when ``spent`` of ``budget`` is already spent."""

    def __init__(self, needed: Fraction, budget: Fraction, spent: Fraction) -> None:
        super().__init__(needed, budget, spent)
        self.needed = needed
        self.budget = budget
        self.spent = spent

    @property
    def remaining(self) -> Fraction:
        return self.budget - self.spent


class BudgetBelowSpentError(LedgerError):
    """A new budget (``asked``) below what releases have already ``spent``; ``budget`` is
    the one that stays (None: none was set)."""

    def __init__(self, asked: Fraction, budget: Fraction | None, spent: Fraction) -> None:
        super().__init__(asked, budget, spent)
        self.asked = asked
        self.budget = budget
        self.spent = spent


@dataclass(frozen=True)
class Release:
    """One entry of the ledger: what was published, when, at what ε, and what it cost.

    ``what`` names the figures for a terminal; ``figures`` are their ids, for pages that
    name them in the reader's language. ``covered``: whether the central ε covers every
    figure (False when some were computed from exact counts: free, and outside the
    guarantee). ``number``: the release's number once stored (None before). ``cost`` is
    ``epsilon``; releases stored before every release drew fresh noise may show 0 for a
    snapshot shown again.
    """

    what: str
    epsilon: Fraction
    at: datetime
    cost: Fraction
    figures: tuple[str, ...] = ()
    covered: bool = True
    number: int | None = None
    kind: ClassVar[str] = "release"


@dataclass(frozen=True)
class BudgetChange:
    """The budget set to ``budget`` at ``at`` (``previous``: None if it was the first),
    after the first ``releases_before`` releases. A public page lists every change: a
    budget raised after the fact is no cap a reader can count on, so they see each raise."""

    at: datetime
    budget: Fraction
    previous: Fraction | None
    releases_before: int
    kind: ClassVar[str] = "budget"


@dataclass(frozen=True)
class Ledger:
    """A survey's central budget (None: never set), every release charged against it and
    every change of the budget, oldest first; basic composition in exact fractions.

    Every release costs its ε, the same figures on the same data too: whether the data
    changed since the last release is a fact about who took part, so a rule "no new
    responses, no new cost" (showing the old figures again) would publish it exactly.
    The rule, spent ≤ budget, is ``within_budget``; ``charge`` and ``with_budget`` refuse
    whatever would break it and return a new ledger, never changing this one.
    """

    budget: Fraction | None = None
    releases: tuple[Release, ...] = ()
    budget_changes: tuple[BudgetChange, ...] = ()

    def __post_init__(self) -> None:
        if self.budget is not None and (not isinstance(self.budget, Fraction) or self.budget <= 0):
            raise ValueError("the central budget must be a positive Fraction (or None)")

    @property
    def spent(self) -> Fraction:
        return sum((r.cost for r in self.releases), Fraction(0))

    @property
    def remaining(self) -> Fraction | None:
        return None if self.budget is None else self.budget - self.spent

    @property
    def within_budget(self) -> bool:
        """The rule: releases spend at most the budget (nothing at all without one)."""
        return self.spent <= (self.budget or Fraction(0))

    @property
    def history(self) -> tuple[Release | BudgetChange, ...]:
        """Releases and budget changes in the order they happened (times are to the
        second, so each change says how many releases came before it)."""
        events: list[Release | BudgetChange] = []
        for count, release in enumerate((*self.releases, None)):
            events += [c for c in self.budget_changes if c.releases_before == count]
            if release is not None:
                events.append(release)
        return tuple(events)

    def charge(
        self,
        what: str,
        epsilon: Fraction | float | str,
        at: datetime,
        figures: Sequence[str] = (),
        covered: bool = True,
    ) -> Ledger:
        """The ledger with this release added at a cost of ``epsilon``, or ``NoBudgetError``
        / ``BudgetExceededError``. ε = 0 (a number) is a release of free figures only:
        it costs nothing and needs no budget, and is listed all the same."""
        cost = Fraction(0) if epsilon == 0 else central_epsilon(epsilon)
        release = Release(what, cost, at, cost, tuple(figures), covered)
        charged = replace(self, releases=(*self.releases, release))
        if not charged.within_budget:
            if self.budget is None:
                raise NoBudgetError(cost)
            raise BudgetExceededError(cost, self.budget, self.spent)
        return charged

    def with_budget(self, budget: Fraction | float | str, at: datetime) -> Ledger:
        """The ledger under a new budget, the change recorded, or ``BudgetBelowSpentError``
        if it would not cover what is already spent. The same budget again changes nothing."""
        new = central_epsilon(budget)
        if new == self.budget:
            return self
        change = BudgetChange(at, new, self.budget, len(self.releases))
        changed = replace(self, budget=new, budget_changes=(*self.budget_changes, change))
        if not changed.within_budget:
            raise BudgetBelowSpentError(new, self.budget, self.spent)
        return changed
