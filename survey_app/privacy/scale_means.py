"""A rating scale's mean score from its options' report counts, with its interval.

A scale is a choice whose k options carry scores s_0 < … < s_(k-1); its distribution is
estimated exactly as a choice's (``shares``). The mean score Σ s_i π_i is estimated by
Σ s_i π̂_i, unbiased since each π̂_i is. One report counts in category i with indicator
I_i, and π̂_i = (c_i/n - q)/(p - q), so

    Var(Σ s_i π̂_i) = sᵀ Cov(I) s / (n (p - q)²),

Cov(I) the covariance of one report's indicators. Its diagonal is λ_i(1 - λ_i) and its
other cells E[I_i I_j] - λ_i λ_j, with λ_i = q + (p - q)π_i and E[I_i I_j] from the
mechanism (``pair_rates``: a report in both i and j with chance a when the truth is one of
them, b when it is neither): a(π_i + π_j) + b(1 - π_i - π_j). For GRR a = b = 0, the
multinomial covariance; unary encoding and subset selection put one report in several
categories, hence the pair rates. The tallies keep only each category's count, so Cov(I)
is evaluated at the estimated shares projected onto the simplex (norm-sub), with the
factor n/(n - 1) of a sample variance. That is a real distribution's covariance, so never
negative; the empirical rates c_i/n in λ (GRR's sample variance exactly) covered less
where few reports land on the high scores (0.909 against 0.968 for unary encoding at
ε = 4, n = 30, shares 0.7/0.2/0.07/0.03; docs/scale-coverage.md).

The interval is t_(n-1) times the standard error, with the boundary rule of means
(``means``): an unbiased mean outside [s_min, s_max] is shown on the bound it passed and
the interval drawn around that bound, then clipped to the range. A plain scale's mean is
the plain mean of the scores and its t interval (``means.estimate_mean``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.special import stdtrit

from .means import MeanEstimate, estimate_mean, positive_width
from .mechanisms import ProportionMechanism
from .shares import norm_sub


def estimate_mean_score(
    mechanism: ProportionMechanism,
    counts: Sequence[int],
    n: int,
    scores: Sequence[int],
    confidence: float = 0.95,
) -> MeanEstimate | None:
    """The mean score from each option's report count among n reports; None when n is 0."""
    if len(scores) != len(counts) or len(scores) < 2:
        raise ValueError("a scale needs one score per option, and at least 2 options")
    if n == 0:
        return None
    if not mechanism.randomized:
        total = sum(s * c for s, c in zip(scores, counts, strict=True))
        squares = sum(s * s * c for s, c in zip(scores, counts, strict=True))
        return estimate_mean(n, total, squares, 0.0, 1.0, min(scores), max(scores), confidence)
    p, q = mechanism.p_true, mechanism.p_false
    shares = [(c / n - q) / (p - q) for c in counts]
    unclipped = sum(s * share for s, share in zip(scores, shares, strict=True))
    variance = report_score_variance(mechanism, norm_sub(shares), scores)
    std_error = math.inf if n == 1 else math.sqrt(variance / (n - 1)) / (p - q)
    return _bounded(unclipped, std_error, n, (min(scores), max(scores)), confidence)


def report_score_variance(
    mechanism: ProportionMechanism, shares: Sequence[float], scores: Sequence[int]
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


def _bounded(
    unclipped: float, std_error: float, n: int, bounds: tuple[int, int], confidence: float
) -> MeanEstimate:
    """The point kept in the range, the t interval around it, clipped; without spread
    (one report, or none seen) the whole range."""
    low_bound, high_bound = bounds
    point = min(max(unclipped, float(low_bound)), float(high_bound))
    if std_error == 0 or not math.isfinite(std_error):
        return MeanEstimate(
            point, unclipped, std_error, float(low_bound), float(high_bound), confidence
        )
    half = float(stdtrit(n - 1, 1 - (1 - confidence) / 2)) * std_error
    low, high = positive_width(
        max(point - half, low_bound), min(point + half, high_bound), low_bound, high_bound
    )
    return MeanEstimate(point, unclipped, std_error, low, high, confidence)
