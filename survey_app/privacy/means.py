"""The mean of a number question from its stored reports' count, sum and sum of squares.

Only the sums are needed: the dashboard keeps running counters, never the reports one by
one. The interval depends on what a report is.

- Discrete Laplace and plain numbers: each report r maps to value_offset + value_scale·r,
  an unbiased value for the answer, so their mean is unbiased for the mean answer; the
  interval is Student's t from their sample variance, which includes the mechanism's noise.
- Duchi's one bit: with respondents drawn at random, each report is 1 with probability
  λ = (1 - r)/2 + r·(μ - min)/Δ, so the count of 1s (the sum) is exactly Binomial(n, λ).
  That is randomized response on the share of the range (μ - min)/Δ with p_true =
  (1 + r)/2 and p_false = (1 - r)/2, so the mean gets the share's exact Clopper–Pearson
  interval (``estimate.estimate_proportion``, boundary rule included) mapped to
  min + Δ·share. A t interval on the 0/1 reports covered as little as 0.938 at n = 300, ε = 2;
  docs/COVERAGE.md has the exact coverage of the binomial one.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from scipy.special import stdtrit

from .estimate import Interval, estimate_proportion, share_interval, widest_half_width
from .mechanisms import NumericMechanism

# Duchi's count of 1s has an exact interval, used whatever method the shares are shown with.
EXACT_METHOD = "clopper-pearson"
T_METHOD = "t"


@dataclass(frozen=True)
class MeanEstimate:
    """What a researcher can say about the mean answer of a number question.

    ``point`` is the unbiased mean clipped to [min, max] (the mean answer lies there);
    ``unclipped`` is the unbiased one, kept for exports. ``std_error`` is its estimated
    standard error (infinite with one response to a t interval: one report says nothing
    about spread). [``low``, ``high``] is the confidence interval at level ``confidence``,
    inside [min, max] and never of zero width, computed by ``method``: "t" (Student's t)
    or "clopper-pearson" (Duchi's bits, exact).
    """

    point: float
    unclipped: float
    std_error: float
    low: float
    high: float
    confidence: float
    method: str = T_METHOD


def estimate_number_mean(
    mechanism: NumericMechanism,
    n: int,
    total: int,
    total_squares: int,
    confidence: float = 0.95,
) -> MeanEstimate | None:
    """The dashboard's estimate of the mean answer from a question's report sums: the
    exact binomial interval for Duchi's bits, the t interval otherwise (module docstring).
    None when n is 0."""
    rates = mechanism.bit_rates
    if rates is None:
        return estimate_mean(
            n,
            total,
            total_squares,
            mechanism.value_offset,
            mechanism.value_scale,
            mechanism.min,
            mechanism.max,
            confidence,
        )
    share = estimate_proportion(_ones(n, total, total_squares), n, *rates, confidence, EXACT_METHOD)
    if share is None:
        return None
    to_answer = _answer_of_share(mechanism)
    low, high = positive_width(
        to_answer(share.low), to_answer(share.high), mechanism.min, mechanism.max
    )
    return MeanEstimate(
        to_answer(share.point),
        to_answer(share.unclipped),
        (mechanism.max - mechanism.min) * share.std_error,
        low,
        high,
        confidence,
        EXACT_METHOD,
    )


def mean_interval(
    mechanism: NumericMechanism,
    n: int,
    total: int,
    total_squares: int,
    confidence: float = 0.95,
) -> Interval:
    """``estimate_number_mean``'s point and interval from n ≥ 1 reports, before the
    interval is clipped to [min, max]: what two groups' difference is made of
    (``groups.mean_difference``). Without spread (one report to a t interval, or all
    equal) the interval is unbounded."""
    rates = mechanism.bit_rates
    if rates is not None:
        share = share_interval(_ones(n, total, total_squares), n, *rates, confidence, EXACT_METHOD)
        to_answer = _answer_of_share(mechanism)
        return Interval(*(to_answer(value) for value in share))
    n, total, total_squares = _checked_sums(n, total, total_squares, confidence)
    if n == 0:
        raise ValueError("no responses: nothing to estimate")
    _, _, interval = _t_interval(
        n,
        total,
        total_squares,
        mechanism.value_offset,
        mechanism.value_scale,
        (mechanism.min, mechanism.max),
        confidence,
    )
    return interval


def mean_interval_method(mechanism: NumericMechanism) -> str:
    """The name of the interval the mean of this mechanism's reports gets."""
    return T_METHOD if mechanism.bit_rates is None else EXACT_METHOD


def widest_mean_half_width(mechanism: NumericMechanism, n: int, confidence: float) -> float:
    """The half-width (in the answer's units) the mean's interval reaches from n reports in
    the worst case over the answers: for Duchi the widest interval the exact one can give
    (``estimate.widest_half_width``), for a t interval t·√(V/n), V the variance of one
    unbiased report for the most spread-out answers (``worst_case_variance``)."""
    rates = mechanism.bit_rates
    if rates is not None:
        span = mechanism.max - mechanism.min
        return span * widest_half_width(n, *rates, confidence, EXACT_METHOD)
    if n < 2:
        return math.inf  # no sample variance, so no t interval
    quantile = float(stdtrit(n - 1, 1 - (1 - confidence) / 2))
    return quantile * math.sqrt(mechanism.worst_case_variance / n)


def estimate_mean(
    n: int,
    total: int,
    total_squares: int,
    value_offset: float,
    value_scale: float,
    low_bound: int,
    high_bound: int,
    confidence: float = 0.95,
) -> MeanEstimate | None:
    """Estimate the mean answer from n reports with sum ``total`` and ``total_squares``,
    each report standing for value_offset + value_scale·report: the t interval.

    The interval is mean ± t_{n-1}·s/√n with s the sample standard deviation of the
    unbiased values, then kept inside [low_bound, high_bound] by the same rule as
    proportions: clipped where it overlaps the range; where the unbiased mean lies
    outside, the interval is [bound, bound ± t·s/√n] as if the mean sat on that bound,
    which only widens it, so coverage cannot fall.

    n = 0: None (nothing to estimate). n = 1, or reports all equal (no spread seen): the
    interval is the whole range [low_bound, high_bound]: the data say nothing about how
    far the mean could be, and a zero-width interval would pretend certainty.
    """
    n, total, total_squares = _checked_sums(n, total, total_squares, confidence)
    low_bound, high_bound = operator.index(low_bound), operator.index(high_bound)
    if not low_bound < high_bound:
        raise ValueError("low_bound must be below high_bound")
    if not (math.isfinite(value_offset) and math.isfinite(value_scale)) or value_scale == 0:
        raise ValueError("value_offset and value_scale must be finite, value_scale nonzero")
    if n == 0:
        return None
    unclipped, std_error, (point, low, high) = _t_interval(
        n, total, total_squares, value_offset, value_scale, (low_bound, high_bound), confidence
    )
    low, high = positive_width(max(low, low_bound), min(high, high_bound), low_bound, high_bound)
    return MeanEstimate(point, unclipped, std_error, low, high, confidence)


def _t_interval(
    n: int,
    total: int,
    total_squares: int,
    value_offset: float,
    value_scale: float,
    bounds: tuple[int, int],
    confidence: float,
) -> tuple[float, float, Interval]:
    """The unbiased mean, its standard error, and the point shown with the t interval
    around it before clipping (n ≥ 1).

    The boundary rule of shares: an unbiased mean outside [min, max] is shown on the
    bound it passed, and the interval is bound ± t·s/√n, as if the mean sat there (once
    clipped, [bound, bound + t·s/√n]), which only widens it. Without spread the
    half-width is infinite: with one report the standard error is unknown (infinite),
    with all reports equal it is 0, and neither bounds the mean.
    """
    unclipped = value_offset + value_scale * (total / n)
    point = min(max(unclipped, float(bounds[0])), float(bounds[1]))
    spread = n * total_squares - total * total
    if n == 1 or spread == 0:
        std_error = math.inf if n == 1 else 0.0
        return unclipped, std_error, Interval(point, -math.inf, math.inf)
    # Sample variance of the reports, exactly from integers, then in the answer's units.
    report_variance = Fraction(spread, n * (n - 1))
    std_error = abs(value_scale) * math.sqrt(report_variance / n)
    half = float(stdtrit(n - 1, 1 - (1 - confidence) / 2)) * std_error
    return unclipped, std_error, Interval(point, point - half, point + half)


def _checked_sums(
    n: int, total: int, total_squares: int, confidence: float
) -> tuple[int, int, int]:
    """The sums as integers, after refusing sums that no n integer reports could have."""
    n, total, total_squares = (
        operator.index(n),
        operator.index(total),
        operator.index(total_squares),
    )
    if n < 0:
        raise ValueError("n must not be negative")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    # Cauchy-Schwarz: n·Σr² ≥ (Σr)²; sums that break it did not come from n integers.
    if n * total_squares - total * total < 0 or (n == 0 and (total or total_squares)):
        raise ValueError("total and total_squares cannot come from n reports")
    return n, total, total_squares


def _ones(n: int, total: int, total_squares: int) -> int:
    """The count of 1s among n one-bit reports (their sum), refusing sums of other reports."""
    if operator.index(total) != operator.index(total_squares):
        raise ValueError("one-bit reports are 0 or 1, so their sum equals their sum of squares")
    return total


def _answer_of_share(mechanism: NumericMechanism) -> Callable[[float], float]:
    """share ↦ min + Δ·share: a share of the range in the answer's units."""
    return lambda share: mechanism.min + (mechanism.max - mechanism.min) * share


def positive_width(low: float, high: float, low_bound: int, high_bound: int) -> tuple[float, float]:
    """Keep the promise of a positive width when the interval is narrower than float
    resolution at this magnitude, by one step inward from the range's end it touches."""
    low, high = float(low), float(high)
    if low < high:
        return low, high
    if high < high_bound:
        return low, math.nextafter(low, math.inf)
    return math.nextafter(high, -math.inf), high
