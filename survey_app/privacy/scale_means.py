"""A rating scale's mean score from its options' report counts, with its interval.

A scale is a choice whose k options carry scores s_0 < … < s_(k-1); its distribution is
estimated exactly as a choice's (``shares``). The mean score μ = Σ s_i π_i is estimated by
μ̂ = Σ s_i π̂_i, unbiased since each π̂_i is. One report counts in category i with
indicator I_i, and π̂_i = (c_i/n - q)/(p - q), so

    Var(μ̂) = sᵀ Cov(I) s / (n (p - q)²),

Cov(I) the covariance of one report's indicators. Its diagonal is λ_i(1 - λ_i) and its
other cells E[I_i I_j] - λ_i λ_j, with λ_i = q + (p - q)π_i and E[I_i I_j] from the
mechanism (``pair_rates``: a report in both i and j with chance a when the truth is one of
them, b when it is neither): a(π_i + π_j) + b(1 - π_i - π_j). For GRR and a plain scale
(p = 1, q = 0) a = b = 0, the multinomial covariance; unary encoding and subset selection
put one report in several categories, hence the pair rates. The tallies keep only each
category's count, so Cov(I) is evaluated at shares on the simplex, with the factor
n/(n - 1) of a sample variance (``std_error``: at the estimate projected by norm-sub).

The interval is a score interval, as Wilson's is for a share: every μ in [s_min, s_max]
with |μ̂ - μ| ≤ t_(n-1)·SE(μ), SE(μ) the standard error when the mean is μ, evaluated at
the estimated shares moved towards the score at that end, (1 - w)·π̃ + w·e_end with w
giving mean μ. Few reports on a high score make both μ̂ and the plug-in standard error
small; a mean further up is only reached with more weight there, and so with more spread.
The plug-in t interval μ̂ ± t·SE(μ̂) covered 0.91 at n = 30 where most answer the lowest
score (shares 0.7/0.2/0.07/0.03, plain or at ε = 4); the score interval's lowest over the
table in docs/scale-coverage.md is given there. An estimate outside the range is shown on
the bound it passed and the interval is found from there (the boundary rule of
``means``), so the interval always lies in [s_min, s_max] and has positive width.

The counts are whole numbers, so μ̂ moves in steps of g/(n(p - q)), g the greatest common
divisor of the gaps between scores; |μ̂ - μ| is taken less half a step, the usual
continuity correction. Without it a plain scale answered only at its two ends (a share in
disguise, with Wilson's dips) covered 0.942 at n = 100; with it 0.964, while the other
cells moved by a few thousandths at most.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from scipy.special import stdtrit

from .means import MeanEstimate, positive_width
from .mechanisms import ScaleMechanism
from .shares import norm_sub

SCORE_METHOD = "score"
#: Bisection steps for each end of the interval: 2⁻⁶⁰ of the range, past float resolution.
_STEPS = 60


def estimate_mean_score(
    mechanism: ScaleMechanism,
    counts: Sequence[int],
    n: int,
    scores: Sequence[int],
    confidence: float = 0.95,
) -> MeanEstimate | None:
    """The mean score from each option's report count among n reports (a plain scale's
    counts are its answers); None when n is 0."""
    if len(scores) != len(counts) or len(scores) < 2:
        raise ValueError("a scale needs one score per option, and at least 2 options")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if n == 0:
        return None
    p, q = mechanism.p_true, mechanism.p_false
    shares = [(c / n - q) / (p - q) for c in counts]
    unclipped = _mean(shares, scores)
    low_bound, high_bound = min(scores), max(scores)
    point = min(max(unclipped, float(low_bound)), float(high_bound))
    if n == 1:  # one report says nothing about spread
        whole = float(low_bound), float(high_bound)
        return MeanEstimate(point, unclipped, math.inf, *whole, confidence, SCORE_METHOD)
    projected = norm_sub(shares)
    variance = _variance_curve(mechanism, projected, scores)

    def std_error(mean: float) -> float:
        return math.sqrt(variance(mean) / (n - 1)) / (p - q)

    quantile = float(stdtrit(n - 1, 1 - (1 - confidence) / 2))
    steps = math.gcd(*(b - a for a, b in itertools.pairwise(scores)))
    correction = steps / (2 * n * (p - q))
    low = _end(point, float(low_bound), quantile, std_error, correction)
    high = _end(point, float(high_bound), quantile, std_error, correction)
    low, high = positive_width(low, high, low_bound, high_bound)
    shown_error = std_error(_mean(projected, scores))
    return MeanEstimate(point, unclipped, shown_error, low, high, confidence, SCORE_METHOD)


def report_score_variance(
    mechanism: ScaleMechanism, shares: Sequence[float], scores: Sequence[int]
) -> float:
    """sᵀ Cov(I) s for one report when the true shares are ``shares`` (on the simplex):
    Var(Σ s_i I_i), exactly."""
    with_truth, neither = (float(rate) for rate in mechanism.pair_rates)
    p, q = mechanism.p_true, mechanism.p_false
    rates = [q + (p - q) * share for share in shares]
    total = 0.0
    for i, (s_i, rate_i, share_i) in enumerate(zip(scores, rates, shares, strict=True)):
        total += s_i * s_i * rate_i * (1 - rate_i)
        for j in range(i + 1, len(scores)):
            both = with_truth * (share_i + shares[j]) + neither * (1 - share_i - shares[j])
            total += 2 * s_i * scores[j] * (both - rate_i * rates[j])
    return max(total, 0.0)


def _variance_curve(
    mechanism: ScaleMechanism, shares: Sequence[float], scores: Sequence[int]
) -> Callable[[float], float]:
    """One report's Var(Σ s_i I_i) as a function of the mean score μ, the shares moved from
    ``shares`` towards the end score on μ's side, (1 - w)·shares + w·e_end.

    A report's chances are linear in the true shares, so along that mixture its second
    moment E[(Σ s_i I_i)²] is linear in w, and so in μ; its mean is q·Σs + (p - q)·μ. Three
    exact variances (at ``shares`` and at each end) then give every μ's.
    """
    p, q = mechanism.p_true, mechanism.p_false
    offset = q * sum(scores)

    def second_moment(at: Sequence[float]) -> float:
        mean = offset + (p - q) * _mean(at, scores)
        return report_score_variance(mechanism, at, scores) + mean * mean

    now, here = _mean(shares, scores), second_moment(shares)
    last = len(scores) - 1
    ends = {
        index: (float(scores[index]), second_moment([float(i == index) for i in range(last + 1)]))
        for index in (0, last)
    }

    def variance(mean: float) -> float:
        end, moment = ends[last if mean >= now else 0]
        weight = 0.0 if end == now else (mean - now) / (end - now)
        reported = offset + (p - q) * mean
        return max(here + weight * (moment - here) - reported * reported, 0.0)

    return variance


def _mean(shares: Sequence[float], scores: Sequence[int]) -> float:
    return sum(s * share for s, share in zip(scores, shares, strict=True))


def _end(
    point: float,
    bound: float,
    quantile: float,
    std_error: Callable[[float], float],
    correction: float,
) -> float:
    """How far from ``point`` towards ``bound`` the interval reaches: the bound itself when
    it is within t·SE (plus the continuity correction) of the point, else where
    |point - μ| - correction = t·SE(μ), by bisection."""

    def outside(mean: float) -> bool:
        return abs(mean - point) - correction > quantile * std_error(mean)

    if not outside(bound):
        return bound
    inside, beyond = point, bound
    for _ in range(_STEPS):
        middle = (inside + beyond) / 2
        if outside(middle):
            beyond = middle
        else:
            inside = middle
    return inside
