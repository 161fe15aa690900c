"""How many respondents a survey needs for a given precision, and what ε a given n allows.

"Precision" is the half-width of the interval the dashboard will actually show, in the
worst case over the truth, computed exactly: Clopper–Pearson for shares
(``estimate.widest_half_width``), the exact binomial interval for Duchi's bits and the t
interval for discrete Laplace and plain numbers (``means.widest_mean_half_width``). The
normal approximation is only the starting guess: it promised ±5 points to 1,537 fair-coin
respondents, whose Clopper–Pearson interval reaches ±5.06.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from fractions import Fraction
from statistics import NormalDist
from typing import cast

from .estimate import widest_half_width
from .means import widest_mean_half_width
from .mechanisms import (
    FAIR_COINS,
    Mechanism,
    NumericMechanism,
    ProportionMechanism,
    TwoCoinDesign,
)

# A tenth of a percentage point: finer than any survey can deliver, and far from the
# floating-point underflow that an arbitrarily small half-width would hit. For numbers the
# same floor applies relative to the answer range (max - min).
MIN_HALF_WIDTH = 0.001
# The ε a survey file may request, in thousandths (0.01 to 10, three decimals).
MIN_EPSILON = Fraction(1, 100)
MAX_EPSILON = Fraction(10)
_EPSILON_STEP = Fraction(1, 1000)


def required_sample_size(
    half_width: float,
    confidence: float = 0.95,
    mechanism: Mechanism = FAIR_COINS,
    *,
    design: TwoCoinDesign | None = None,
) -> int:
    """The fewest respondents whose interval is at most ±``half_width`` whatever the truth.

    ``half_width`` is a share for proportions (yes/no, each option of a choice) and in
    the answer's units for numbers. The answer is exact for the dashboard's interval
    (``worst_case_half_width``): the search starts at the normal approximation,
    n ≈ z²/(4h²(p_true - p_false)²) for shares and z²·V/h² for numbers (V the
    mechanism's ``worst_case_variance``), and moves to the smallest n that meets the
    target; the half-width only shrinks as n grows, so every larger n meets it too.

    This is where privacy is paid for. Randomizing shrinks the signal by the factor
    p_true - p_false (t for the two coins), so n grows by its inverse square over asking
    directly: fair coins (ε = ln 3, t = 1/2) need about 4 times the respondents of a
    direct question for the same precision, and stronger privacy (smaller ε, t ≈ ε/2)
    costs roughly 4/ε² times. ``design`` is the former name of ``mechanism``.
    """
    if design is not None:
        mechanism = design
    _check_target(half_width, confidence, mechanism)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    if mechanism.question_type.estimates_mean:
        variance = cast(NumericMechanism, mechanism).worst_case_variance
    else:
        shares = cast(ProportionMechanism, mechanism)
        variance = 1 / (4 * (shares.p_true - shares.p_false) ** 2)  # at λ = 1/2
    return _smallest_sufficient(
        lambda n: worst_case_half_width(mechanism, n, confidence) <= half_width,
        math.ceil(z * z * variance / half_width**2),
    )


def worst_case_half_width(mechanism: Mechanism, n: int, confidence: float = 0.95) -> float:
    """The half-width of the widest interval the dashboard shows from n respondents
    under ``mechanism``, over every truth: a share, or the answer's units for numbers."""
    if mechanism.question_type.estimates_mean:
        return widest_mean_half_width(cast(NumericMechanism, mechanism), n, confidence)
    shares = cast(ProportionMechanism, mechanism)
    return widest_half_width(n, shares.p_true, shares.p_false, confidence)


def _check_target(half_width: float, confidence: float, mechanism: Mechanism) -> None:
    """Refuse a confidence outside (0, 1) and a half-width beyond the range or below
    ``MIN_HALF_WIDTH`` of it."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if mechanism.question_type.estimates_mean:
        numbers = cast(NumericMechanism, mechanism)
        span = numbers.max - numbers.min
        if not MIN_HALF_WIDTH * span <= half_width <= span:
            raise ValueError(
                f"half_width must lie in [{MIN_HALF_WIDTH} × (max - min), max - min] "
                f"= [{MIN_HALF_WIDTH * span:g}, {span}]"
            )
        return
    if not MIN_HALF_WIDTH <= half_width <= 1:
        raise ValueError(f"half_width must lie in [{MIN_HALF_WIDTH}, 1]")


def _smallest_sufficient(meets: Callable[[int], bool], guess: int) -> int:
    """The smallest n ≥ 1 with ``meets(n)``, where ``meets`` is false below some n and
    true from there on. From a close guess: steps doubling away from it until the answer
    is bracketed, then bisection: a few dozen evaluations even at billions."""
    low, high, step = max(guess, 1) - 1, max(guess, 1), 1
    if meets(high):
        while low >= 1 and meets(low):
            high, step = low, 2 * step
            low = high - step
        low = max(low, 0)  # no respondents: never enough
    else:
        low, high = high, high + step
        while not meets(high):
            low, step = high, 2 * step
            high = low + step
    # Not enough at low (or low = 0), enough at high: the answer lies in (low, high].
    return low + 1 + bisect.bisect_left(range(low + 1, high), True, key=meets)


def epsilon_for_sample_size(
    n: int,
    half_width: float,
    confidence: float,
    make: Callable[[Fraction], Mechanism],
) -> Fraction | None:
    """The smallest ε (in thousandths, 0.01 to 10) at which n respondents reach ±half_width.

    ``make`` builds the question's mechanism at a given ε (e.g.
    ``lambda e: choice_mechanism(4, e)``). For one mechanism the required n falls as ε
    grows, so bisection over the 9,991 candidates finds the smallest sufficient one in 14
    steps. ``auto`` may switch mechanism once along the way, and the required n can jump
    UP there: a number question's auto switches from Duchi to discrete Laplace at large ε
    (Laplace's reports stay close to typical answers), while the planner's worst case, half
    the answers at each end, favours Duchi. So the switch point is found first (by
    bisection on the mechanism's name), and each side is searched on its own, the lower
    side first. None when no ε up to 10 is enough.
    """
    if n < 1:
        raise ValueError("n must be at least 1")

    def build(thousandths: int) -> Mechanism:
        return make(thousandths * _EPSILON_STEP)

    def enough(thousandths: int) -> bool:
        return worst_case_half_width(build(thousandths), n, confidence) <= half_width

    def smallest_enough(low: int, high: int) -> int | None:
        """Bisection on [low, high], where one mechanism's required n only falls."""
        if not enough(high):
            return None
        if enough(low):
            return low
        while high - low > 1:  # invariant: not enough(low), enough(high)
            middle = (low + high) // 2
            if enough(middle):
                high = middle
            else:
                low = middle
        return high

    low = int(MIN_EPSILON / _EPSILON_STEP)
    high = int(MAX_EPSILON / _EPSILON_STEP)
    _check_target(half_width, confidence, build(low))
    first_name, last_name = build(low).name, build(high).name
    if first_name == last_name:
        found = smallest_enough(low, high)
    else:
        switch_low, switch = low, high  # build(switch_low) is first_name, build(switch) not
        while switch - switch_low > 1:
            middle = (switch_low + switch) // 2
            if build(middle).name == first_name:
                switch_low = middle
            else:
                switch = middle
        found = smallest_enough(low, switch - 1)
        if found is None:
            found = smallest_enough(switch, high)
    return None if found is None else found * _EPSILON_STEP
