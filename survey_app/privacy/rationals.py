"""Exact rationals for mechanism parameters: their text form and the private rounding rule.

A coin with an irrational probability (tanh(ε/2), e^ε/(e^ε + k - 1), ...) cannot be flipped
exactly, so every mechanism samples an exact rational instead: the nearest float's dyadic
value, nudged towards more privacy until the ε it really delivers is at most the ε asked
for. The ε shown, stored and exported is then computed from that rational, never from the
formula it approximates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, localcontext
from fractions import Fraction

_FRACTION_TEXT = re.compile(r"(0|[1-9][0-9]*)/([1-9][0-9]*)")
# A float's dyadic value has at most ~750 digits; anything longer is not a parameter we wrote.
_MAX_TEXT_LENGTH = 2_000
# How far to walk from the float the formula gives before declaring the request impossible.
_MAX_STEPS = 1_000


def fraction_text(value: Fraction) -> str:
    """The stored and transmitted form: "numerator/denominator" in lowest terms, e.g. "1/2".

    Written out even for integers ("10/1") so every reader parses one format.
    """
    return f"{value.numerator}/{value.denominator}"


def parse_fraction(value: object, what: str) -> Fraction:
    """Read a rational written by ``fraction_text`` (or already a Fraction).

    A finite float is accepted too, as its exact dyadic value: rows stored before parameters
    became text hold REAL probabilities, and a float is an exact rational.
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, str):
        match = _FRACTION_TEXT.fullmatch(value) if len(value) <= _MAX_TEXT_LENGTH else None
        if match is None:
            raise ValueError(f"{what} must be written as 'numerator/denominator', got {value!r}")
        return Fraction(int(match[1]), int(match[2]))
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a fraction, got {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float) and math.isfinite(value):
        return Fraction(value)
    raise ValueError(f"{what} must be a fraction, got {value!r}")


def parse_integer(value: object, what: str) -> int:
    """An integer parameter or answer: a real int, never a bool, float or numeric string."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    return value


def checked_epsilon(epsilon: Fraction | float) -> Fraction:
    """A requested ε as an exact rational; it must be positive and finite."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (Fraction, int, float)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if isinstance(epsilon, float) and not math.isfinite(epsilon):
        raise ValueError("epsilon must be a positive finite number")
    exact = Fraction(epsilon)
    if exact <= 0:
        raise ValueError("epsilon must be a positive finite number")
    return exact


def epsilon_of_ratio(ratio: Fraction) -> float:
    """ε = ln(ratio) for the worst likelihood ratio between two answers' report chances."""
    try:
        return math.log(float(ratio))
    except OverflowError:  # ratio beyond float range: logs of the integers separately
        return math.log(ratio.numerator) - math.log(ratio.denominator)


def within_epsilon(ratio: Fraction, epsilon: Fraction) -> bool:
    """Whether a worst likelihood ratio keeps ln(ratio) ≤ ε, both as shown and exactly.

    Two checks, both needed: the float ε shown to people must not exceed the requested
    decimal, and the true ln(ratio) must not either (decided with 60-digit decimals and a
    margin of 1e-50, far beyond any rounding there).
    """
    if epsilon_of_ratio(ratio) > float(epsilon):
        return False
    with localcontext() as context:
        context.prec = 60
        bound = (Decimal(epsilon.numerator) / Decimal(epsilon.denominator)).exp()
        value = Decimal(ratio.numerator) / Decimal(ratio.denominator)
        return value <= bound * (1 - Decimal(10) ** -50)


def private_probability(
    start: float,
    toward: float,
    worst_ratio: Callable[[Fraction], Fraction | None],
    epsilon: Fraction,
) -> Fraction:
    """The exact probability to sample: ``start`` as a dyadic rational, stepped float by float
    towards ``toward`` (the more private direction) until its ε is at most ``epsilon``.

    ``worst_ratio(p)`` is the mechanism's worst likelihood ratio with probability ``p``, or
    None when ``p`` is not a valid setting (e.g. a float that rounded to exactly 1).
    """
    candidate = start
    for _ in range(_MAX_STEPS):
        exact = Fraction(candidate)
        ratio = worst_ratio(exact)
        if ratio is not None and within_epsilon(ratio, epsilon):
            return exact
        candidate = math.nextafter(candidate, toward)
    raise ValueError(f"no exact probability near {start!r} achieves epsilon {float(epsilon)}")


def decimal_ceiling(value: Fraction | float, places: int) -> Decimal:
    """The smallest decimal with ``places`` decimals at or above ``value``, exactly.

    For privacy figures read by people, which must never understate: 0.015 stays 0.015,
    1/3 becomes 0.334. A float is taken as the exact dyadic rational it is. The result is
    built from its digits, so no decimal context rounds it again.
    """
    steps = math.ceil(Fraction(value) * 10**places)
    return Decimal(f"{steps}E-{places}")


def required_parameter(parameters: Mapping[str, object], key: str) -> object:
    """One key of a stored ``parameters()`` dict, with an error naming it when missing."""
    if key not in parameters:
        raise ValueError(f"mechanism parameters lack {key!r}")
    return parameters[key]


def check_mechanism_name(parameters: Mapping[str, object], name: str) -> None:
    """Refuse parameters written by another mechanism: they would be read with wrong meaning."""
    if parameters.get("mechanism") != name:
        raise ValueError(f"expected mechanism {name!r}, got {parameters.get('mechanism')!r}")
