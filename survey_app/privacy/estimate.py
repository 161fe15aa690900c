"""Share estimates from randomized reports (Warner 1965), for yes/no and per option.

The server only ever sees reported answers. A member of a category (a true "yes", a
chosen option) is reported in it with probability p1 and a non-member with probability
p0, so the reported rate λ estimates p0 + (p1 - p0)·π, where π is the true share.
Inverting that affine map turns the reported rate, and any interval for it, into one for
π. Two-coin: p1 = t + (1 - t) f, p0 = (1 - t) f.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

from scipy.special import betaincinv

from .mechanisms import FAIR_COINS, TwoCoinDesign

INTERVAL_METHODS = ("wilson", "clopper-pearson")
# Exact: its coverage never falls below the nominal level, at any n and any truth.
DEFAULT_INTERVAL_METHOD = "clopper-pearson"


@dataclass(frozen=True)
class Estimate:
    """What a researcher can honestly say about one question's prevalence.

    ``point`` is the maximum-likelihood estimate of π (the unbiased estimate clipped to
    [0, 1]); ``unclipped`` is the unbiased one, which can stray outside [0, 1] when the
    truth is near an end and is worth showing next to it. ``std_error`` is the estimated
    standard error of ``unclipped``. [``low``, ``high``] is the confidence interval for
    π at level ``confidence``, computed by ``method``; it always has positive width.
    """

    point: float
    unclipped: float
    std_error: float
    low: float
    high: float
    confidence: float
    method: str


class Interval(NamedTuple):
    """A point estimate and its confidence interval *before* the interval's ends are kept
    inside the parameter's range ([0, 1] for a share, [min, max] for a mean). ``point`` is
    the one shown, in the range; ``low`` and ``high`` may stray outside it. Two groups'
    differences combine on this scale (``groups.py``): clipped ends would collapse a
    group's distance from its point to the range's end it sits on."""

    point: float
    low: float
    high: float


def estimate_prevalence(
    reported_yes: int,
    n: int,
    design: TwoCoinDesign = FAIR_COINS,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> Estimate | None:
    """Estimate the true share of "yes" from ``reported_yes`` randomized "yes" among ``n``.

    The two-coin case of ``estimate_proportion``: p_true = P(yes | yes) = t + (1 - t) f,
    p_false = P(yes | no) = (1 - t) f. Its interval defaults to Clopper–Pearson, as
    everywhere (Wilson's exact coverage dips to 0.934 at n = 30: docs/COVERAGE.md).
    """
    return estimate_proportion(
        reported_yes, n, design.p_yes_given_yes, design.p_yes_given_no, confidence, method
    )


def estimate_proportion(
    count: int,
    n: int,
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> Estimate | None:
    """Estimate a true share π from ``count`` reports of a category among ``n``.

    The count is Binomial(n, λ) with λ = p_false + (p_true - p_false)·π: ``p_true`` is the
    chance a member of the category is reported in it, ``p_false`` the chance a
    non-member is (yes/no: P(yes | yes) and P(yes | no); GRR: p and q; OUE: 1/2 and q).

    Returns None when ``n`` is 0: with no responses there is nothing to estimate, and
    callers show empty cells rather than a made-up number.

    ``method`` chooses the interval for the reported rate λ: "wilson" (the score
    interval, close to nominal coverage) or "clopper-pearson" (exact, never below
    nominal coverage, somewhat wider). The interval is mapped to π through the same
    affine map as the point estimate; since that map is increasing, the interval for π
    covers the truth whenever the interval for λ covers p_false + (p_true - p_false)·π
    (the boundary rule of ``_share_interval`` only ever widens it).
    """
    count, n = _checked(count, n, p_true, p_false, confidence, method)
    if n == 0:
        return None

    slope = p_true - p_false  # how much λ moves per unit of π
    rate = count / n
    unclipped = (rate - p_false) / slope
    std_error = math.sqrt(rate * (1 - rate) / n) / slope
    point, low, high = _share_interval(rate, n, p_true, p_false, confidence, method)
    low, high = max(low, 0.0), min(high, 1.0)
    if not low < high:
        # Only reachable when λ's interval is narrower than float resolution (an
        # astronomical n); keep the promise of a positive width all the same.
        if high < 1:
            high = math.nextafter(low, 1.0)
        else:
            low = math.nextafter(high, 0.0)

    return Estimate(
        point=point,
        unclipped=unclipped,
        std_error=std_error,
        low=low,
        high=high,
        confidence=confidence,
        method=method,
    )


def share_interval(
    count: int,
    n: int,
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> Interval:
    """``estimate_proportion``'s point and interval from ``count`` reports among n ≥ 1,
    before the interval is clipped to [0, 1]: what two groups' difference is made of
    (``groups.group_difference``). It covers a share in [0, 1] exactly when the shown
    interval does."""
    count, n = _checked(count, n, p_true, p_false, confidence, method)
    if n == 0:
        raise ValueError("no responses: nothing to estimate")
    return _share_interval(count / n, n, p_true, p_false, confidence, method)


def _share_interval(
    rate: float, n: int, p_true: float, p_false: float, confidence: float, method: str
) -> Interval:
    """The maximum-likelihood share and the interval for λ mapped to π, by the boundary
    rule below; the interval's ends unclipped.

    Never a zero-width interval pretending certainty (DESIGN.md). A reported rate below
    p0 = P(report | not in the category) is more "no"-looking than even π = 0 produces on
    average: chance, not proof that the share is 0. Clipping its interval can leave
    [0, 0] (mapped interval wholly below 0) or a sliver like [0, 0.01]. Instead λ's
    interval is computed as if λ̂ sat on the feasible boundary, λ̂ = p0, the rate π = 0
    produces on average (same n, same method). Its upper bound u lies above 0 for any
    n >= 1 (an interval holds its own λ̂ strictly inside), and since λ's upper bound grows
    with λ̂, every λ̂ < p0 reports the same [0, u] once clipped, no narrower than what a
    typical draw at π = 0 gives: a more extreme draw never buys a more confident answer,
    and the reported bounds stay monotone in the count. Only widening, so coverage cannot
    fall. The case λ̂ > p1 is the mirror image. The point, λ̂ moved to that boundary and
    mapped, is the estimate clipped to [0, 1]: the maximum-likelihood estimate.
    """
    slope = p_true - p_false
    boundary_rate = min(max(rate, p_false), p_true)
    rate_low, rate_high = _rate_interval(boundary_rate, n, confidence, method)
    return Interval(
        (boundary_rate - p_false) / slope,
        (rate_low - p_false) / slope,
        (rate_high - p_false) / slope,
    )


def widest_half_width(
    n: int,
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> float:
    """Half the width of the widest interval ``estimate_proportion`` can report from n
    responses, whatever the truth and the draw: what the planner must keep within target.

    λ's interval is widest at λ̂ = 1/2 and narrows away from it (for Clopper–Pearson
    and Wilson, also at the fractional counts the boundary rule uses), and the boundary
    rule never evaluates λ̂ outside [p_false, p_true]: so the widest sits at 1/2 moved
    into that range. Mapping to π divides by the slope; clipping to [0, 1] only narrows.
    """
    _checked(0, n, p_true, p_false, confidence, method)
    if n == 0:
        raise ValueError("no responses: no interval")
    rate_low, rate_high = _rate_interval(min(max(0.5, p_false), p_true), n, confidence, method)
    return (rate_high - rate_low) / (2 * (p_true - p_false))


def _checked(
    count: int, n: int, p_true: float, p_false: float, confidence: float, method: str
) -> tuple[int, int]:
    """The count and n as integers, after refusing what no survey could produce."""
    count = operator.index(count)
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must not be negative")
    if not 0 <= count <= n:
        raise ValueError("the count must lie between 0 and n")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {', '.join(INTERVAL_METHODS)}")
    if not 0 <= p_false < p_true <= 1:
        raise ValueError("need 0 <= p_false < p_true <= 1: a report must carry some signal")
    return count, n


def _rate_interval(rate: float, n: int, confidence: float, method: str) -> tuple[float, float]:
    """Confidence interval for the reported-yes rate λ, given its estimate ``rate``.

    ``rate`` need not be a multiple of 1/n: the boundary rule above evaluates the interval
    at λ̂ = p0 or p1, and both formulas extend smoothly to a fractional count.
    """
    alpha = 1 - confidence
    if method == "wilson":
        z = NormalDist().inv_cdf(1 - alpha / 2)
        z2_n = z * z / n
        center = (rate + z2_n / 2) / (1 + z2_n)
        half = z / (1 + z2_n) * math.sqrt(rate * (1 - rate) / n + z2_n / (4 * n))
        return max(center - half, 0.0), min(center + half, 1.0)
    # Clopper-Pearson: invert the two one-sided binomial tests through the beta quantiles
    # (betaincinv is the beta quantile; scipy.stats would cost each worker ~50 MB more).
    count = rate * n
    low = 0.0 if count <= 0 else float(betaincinv(count, n - count + 1, alpha / 2))
    high = 1.0 if count >= n else float(betaincinv(count + 1, n - count, 1 - alpha / 2))
    return low, high
