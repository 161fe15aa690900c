"""How many respondents a survey needs for a given precision, and what ε a given n allows."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from statistics import NormalDist

from .choice import GeneralizedRandomizedResponse, OptimizedUnaryEncoding, PlainChoice
from .mechanism import FAIR_COINS, Mechanism, TwoCoinDesign
from .number import DiscreteLaplace, DuchiBinary, PlainNumber

# A tenth of a percentage point: finer than any survey can deliver, and far from the
# floating-point underflow that an arbitrarily small half-width would hit. For numbers the
# same floor applies relative to the answer range (max - min).
MIN_HALF_WIDTH = 0.001
# The ε a survey file may request, in thousandths (0.01 to 10, three decimals).
MIN_EPSILON = Fraction(1, 100)
MAX_EPSILON = Fraction(10)
_EPSILON_STEP = Fraction(1, 1000)
NUMERIC_MECHANISMS = (DiscreteLaplace, DuchiBinary, PlainNumber)
PROPORTION_MECHANISMS = (GeneralizedRandomizedResponse, OptimizedUnaryEncoding, PlainChoice)


def required_sample_size(
    half_width: float,
    confidence: float = 0.95,
    mechanism: Mechanism = FAIR_COINS,
    *,
    design: TwoCoinDesign | None = None,
) -> int:
    """Respondents needed so the interval is at most ±``half_width`` whatever the truth.

    Proportions (yes/no, each option of a choice): the normal approximation in the worst
    case, a reported rate of 1/2, so the standard error of the estimate is at most
    1/(2 (p_true - p_false) √n), hence n = ⌈z² / (4 h² (p_true - p_false)²)⌉ with h a share.

    Numbers: n = ⌈z²·V / h²⌉ with V the mechanism's ``worst_case_variance`` of one unbiased
    report and h in the answer's units.

    This is where privacy is paid for. Randomizing shrinks the signal by the factor
    p_true - p_false (t for the two coins), so n grows by its inverse square over asking
    directly: fair coins (ε = ln 3, t = 1/2) need 4 times the respondents of a direct
    question for the same precision, and stronger privacy (smaller ε, t ≈ ε/2) costs
    roughly 4/ε² times. ``design`` is the former name of ``mechanism``.
    """
    if design is not None:
        mechanism = design
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    if isinstance(mechanism, NUMERIC_MECHANISMS):
        span = mechanism.max - mechanism.min
        if not MIN_HALF_WIDTH * span <= half_width <= span:
            raise ValueError(
                f"half_width must lie in [{MIN_HALF_WIDTH} × (max - min), max - min] "
                f"= [{MIN_HALF_WIDTH * span:g}, {span}]"
            )
        # At least 2: a t-interval needs a sample variance.
        return max(math.ceil(z * z * mechanism.worst_case_variance / half_width**2), 2)
    if not MIN_HALF_WIDTH <= half_width <= 1:
        raise ValueError(f"half_width must lie in [{MIN_HALF_WIDTH}, 1]")
    if isinstance(mechanism, TwoCoinDesign):
        slope = float(mechanism.truth_probability)  # exactly p_true - p_false
    elif isinstance(mechanism, PROPORTION_MECHANISMS):
        slope = mechanism.p_true - mechanism.p_false
    else:
        raise ValueError(f"no sample-size rule for {mechanism!r}")
    return math.ceil(z * z / (4 * (half_width * slope) ** 2))


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
        return required_sample_size(half_width, confidence, build(thousandths)) <= n

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
