"""The mean of a number question from its stored reports' sum and sum of squares.

Each report r maps to value_offset + value_scale·r, an unbiased value for the answer, so
their mean is unbiased for the mean answer; the t-interval uses their sample variance,
which includes the mechanism's noise. Only the sums are needed: the dashboard keeps
running counters, never the reports one by one.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from fractions import Fraction

from scipy.special import stdtrit


@dataclass(frozen=True)
class MeanEstimate:
    """What a researcher can say about the mean answer of a number question.

    ``point`` is the unbiased mean clipped to [min, max] (the mean answer lies there);
    ``unclipped`` is the unbiased one, kept for exports. ``std_error`` is its estimated
    standard error (infinite with one response: one report says nothing about spread).
    [``low``, ``high``] is the confidence interval at level ``confidence``, inside
    [min, max] and never of zero width.
    """

    point: float
    unclipped: float
    std_error: float
    low: float
    high: float
    confidence: float


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
    """Estimate the mean answer from n reports with sum ``total`` and ``total_squares``.

    The interval is mean ± t_{n-1}·s/√n with s the sample standard deviation of the
    unbiased values, then kept inside [low_bound, high_bound] by the same rule as
    proportions: clipped where it overlaps the range; where the unbiased mean lies
    outside, the interval is [bound, bound ± t·s/√n] as if the mean sat on that bound,
    which only widens it, so coverage cannot fall.

    n = 0: None (nothing to estimate). n = 1, or reports all equal (no spread seen): the
    interval is the whole range [low_bound, high_bound]: the data say nothing about how
    far the mean could be, and a zero-width interval would pretend certainty.
    """
    n = operator.index(n)
    total = operator.index(total)
    total_squares = operator.index(total_squares)
    low_bound, high_bound = operator.index(low_bound), operator.index(high_bound)
    if n < 0:
        raise ValueError("n must not be negative")
    if not low_bound < high_bound:
        raise ValueError("low_bound must be below high_bound")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if not (math.isfinite(value_offset) and math.isfinite(value_scale)) or value_scale == 0:
        raise ValueError("value_offset and value_scale must be finite, value_scale nonzero")
    # Cauchy-Schwarz: n·Σr² ≥ (Σr)²; sums that break it did not come from n integers.
    spread = n * total_squares - total * total
    if spread < 0 or (n == 0 and (total or total_squares)):
        raise ValueError("total and total_squares cannot come from n reports")
    if n == 0:
        return None

    unclipped = value_offset + value_scale * (total / n)
    point = min(max(unclipped, float(low_bound)), float(high_bound))
    if n == 1 or spread == 0:
        std_error = math.inf if n == 1 else 0.0
        return MeanEstimate(
            point, unclipped, std_error, float(low_bound), float(high_bound), confidence
        )

    # Sample variance of the reports, exactly from integers, then in the answer's units.
    report_variance = Fraction(spread, n * (n - 1))
    std_error = abs(value_scale) * math.sqrt(report_variance / n)
    half = float(stdtrit(n - 1, 1 - (1 - confidence) / 2)) * std_error
    if unclipped < low_bound:
        low, high = float(low_bound), min(low_bound + half, float(high_bound))
    elif unclipped > high_bound:
        low, high = max(high_bound - half, float(low_bound)), float(high_bound)
    else:
        low, high = max(unclipped - half, float(low_bound)), min(unclipped + half, high_bound)
    if not low < high:  # half below float resolution at this magnitude
        if high < high_bound:
            high = math.nextafter(low, math.inf)
        else:
            low = math.nextafter(high, -math.inf)
    return MeanEstimate(point, unclipped, std_error, float(low), float(high), confidence)
