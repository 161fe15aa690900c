"""How many respondents a survey needs for a given precision."""

from __future__ import annotations

import math
from statistics import NormalDist

from .mechanism import FAIR_COINS, TwoCoinDesign

# A tenth of a percentage point: finer than any survey can deliver, and far from the
# floating-point underflow that an arbitrarily small half-width would hit.
MIN_HALF_WIDTH = 0.001


def required_sample_size(
    half_width: float, confidence: float = 0.95, design: TwoCoinDesign = FAIR_COINS
) -> int:
    """Respondents needed so the interval for the prevalence is at most ±``half_width``.

    Uses the normal approximation in the worst case, a reported-yes rate of 1/2, so the
    answer holds whatever the truth turns out to be: the standard error of the estimate
    is sqrt(λ(1 - λ)/n)/t <= 1/(2 t sqrt(n)), hence n = ceil(z² / (4 (half_width·t)²)).

    This is where privacy is paid for. Randomizing shrinks the signal by the factor t
    (only a share t of answers carries the truth), so n grows by 1/t² over asking
    directly: fair coins (ε = ln 3, t = 1/2) need 4 times the respondents of a direct
    question for the same precision, and stronger privacy (smaller ε, t ≈ ε/2) costs
    roughly 4/ε² times.
    """
    if not MIN_HALF_WIDTH <= half_width <= 1:
        raise ValueError(f"half_width must lie in [{MIN_HALF_WIDTH}, 1]")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    return math.ceil(z * z / (4 * (half_width * design.truth_probability) ** 2))
