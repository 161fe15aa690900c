"""Mechanisms for integer answers in [min, max]: discrete Laplace and Duchi et al.'s one bit.

Both make value_offset + value_scale·report unbiased for the true answer, so a survey's
mean is estimated from the sum and the sum of squares of the stored reports
(``means.estimate_mean``). Discrete Laplace adds integer noise and is better at large ε;
Duchi, Jordan & Wainwright's mechanism sends a single biased bit and is better at small ε.
``choosing.number_mechanism`` picks between them.

Each also says which reports an honest device draws (``report_range``) and how far one
report in that range can move the mean of n (``report_influence``): the server refuses a
report outside it, so one forged report moves a mean by a known amount, not without bound
(Cao, Jia & Gong 2021 show the attack that leaves open).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction
from functools import cache
from typing import ClassVar

from .coins import SECURE, RandomSource, bernoulli, discrete_laplace
from .rationals import (
    check_mechanism_name,
    checked_epsilon,
    epsilon_of_ratio,
    fraction_text,
    parse_fraction,
    parse_integer,
    private_probability,
    required_parameter,
)


def _check_range(low: object, high: object) -> tuple[int, int]:
    low, high = parse_integer(low, "min"), parse_integer(high, "max")
    if not low < high:
        raise ValueError(f"min must be below max, got min = {low}, max = {high}")
    return low, high


def _answer(value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"value must be an integer in [{low}, {high}], got {value!r}")
    return value


def _integer_report(report: object) -> int:
    if isinstance(report, bool) or not isinstance(report, int):
        raise ValueError(f"report must be an integer, got {report!r}")
    return report


#: An honest device draws a report outside its mechanism's ``report_range`` with
#: probability below 2^-HONEST_TAIL_BITS: such a report is taken for a forgery.
HONEST_TAIL_BITS = 60
# Decimal's exp, ln and division are correctly rounded, so at this precision the few steps
# of ``noise_reach`` err by far less than its margin.
_REACH_CONTEXT = Context(prec=60)
_REACH_MARGIN = Decimal("1e-50")


@cache
def noise_reach(gamma: Fraction) -> int:
    """B: the smallest integer with P(|Z| > B) < 2^-60 for discrete Laplace noise with
    α = e^(-γ), or (never more than) one more.

    The exact tail P(|Z| ≥ t) = 2α^t/(1 + α) makes the condition 2α^(B+1) < 2^-60 (1 + α),
    i.e. (B + 1)·γ > 61·ln 2 - ln(1 + α), so B = ⌊(61·ln 2 - ln(1 + α))/γ⌋. A float could
    round that quotient down across an integer and refuse honest reports; Decimal's
    correctly rounded steps at 60 digits err by under 10^-57 relatively, and the quotient
    is raised by a relative 10^-50 before the floor, so B is never too small. Cached: a
    survey form asks on every request, and the 60-digit logarithms take most of a millisecond.
    """
    if not isinstance(gamma, Fraction) or not gamma > 0:
        raise ValueError("gamma must be a positive Fraction")
    context = _REACH_CONTEXT
    g = context.divide(Decimal(gamma.numerator), Decimal(gamma.denominator))
    log_two = context.ln(Decimal(2))
    log_one_plus_alpha = context.ln(context.add(1, context.exp(-g)))
    threshold = context.subtract(
        context.multiply(HONEST_TAIL_BITS + 1, log_two), log_one_plus_alpha
    )
    quotient = context.divide(threshold, g)
    upward = Context(prec=70, rounding=ROUND_CEILING)
    raised = upward.add(quotient, upward.multiply(quotient, _REACH_MARGIN))
    return int(raised.to_integral_value(rounding=ROUND_FLOOR))


def _mean_influence(report_range: tuple[int, int], scale: Fraction, n: int) -> Fraction:
    """How far one report moves a mean of n unbiased values offset + scale·report: from
    one end of the range to the other, scale·(high - low)/n."""
    if parse_integer(n, "n") < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    low, high = report_range
    return scale * (high - low) / n


@dataclass(frozen=True)
class DiscreteLaplace:
    """Report x + Z with P(Z = z) = (1 - α)/(1 + α)·α^|z|, α = e^(-γ), γ = ``gamma`` rational.

    Changing the answer by at most Δ = max - min changes any report's chance by at most
    α^(-Δ), so ε = Δ·γ exactly: no rounding, the realized ε is the requested decimal.
    Reports are unbounded integers (they may lie outside [min, max] or be negative).
    """

    min: int
    max: int
    gamma: Fraction
    name: ClassVar[str] = "discrete_laplace"

    def __post_init__(self) -> None:
        _check_range(self.min, self.max)
        if not isinstance(self.gamma, Fraction) or not self.gamma > 0:
            raise ValueError("gamma must be a positive Fraction")

    @classmethod
    def from_epsilon(cls, min: int, max: int, epsilon: Fraction | float) -> DiscreteLaplace:
        low, high = _check_range(min, max)
        return cls(low, high, checked_epsilon(epsilon) / (high - low))

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> DiscreteLaplace:
        check_mechanism_name(parameters, cls.name)
        low, high = _check_range(
            required_parameter(parameters, "min"), required_parameter(parameters, "max")
        )
        gamma = parse_fraction(required_parameter(parameters, "gamma"), "gamma")
        return cls(low, high, gamma)

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "min": self.min,
            "max": self.max,
            "gamma": fraction_text(self.gamma),
        }

    @property
    def sensitivity(self) -> int:
        """Δ = max - min: the most one answer can move."""
        return self.max - self.min

    @property
    def epsilon_exact(self) -> Fraction:
        return self.sensitivity * self.gamma

    @property
    def epsilon(self) -> float:
        return float(self.epsilon_exact)

    @property
    def alpha(self) -> float:
        """α = e^(-γ): the ratio between the chances of noise z and z + 1 (z ≥ 0)."""
        return math.exp(-float(self.gamma))

    @property
    def noise_variance(self) -> float:
        """Var Z = 2α/(1 - α)² = 1/(2 sinh²(γ/2)), the second form exact for tiny γ."""
        return 1 / (2 * math.sinh(float(self.gamma) / 2) ** 2)

    value_offset: ClassVar[float] = 0.0
    value_scale: ClassVar[float] = 1.0

    @property
    def worst_case_variance(self) -> float:
        """Δ²/4 (the widest answer spread on [min, max]) plus the noise."""
        return self.sensitivity**2 / 4 + self.noise_variance

    @property
    def worst_answer_variance(self) -> float:
        """One unbiased report's variance given the true answer, at the worst answer: Var Z."""
        return self.noise_variance

    def report_range(self) -> tuple[int, int]:
        """[min - B, max + B]: an honest report lies outside with probability below 2^-60
        (``noise_reach``), whatever the answer; anything further is a forgery."""
        reach = noise_reach(self.gamma)
        return self.min - reach, self.max + reach

    def report_influence(self, n: int) -> Fraction:
        """(max - min + 2B)/n: the most one report in ``report_range`` moves the mean of n."""
        return _mean_influence(self.report_range(), Fraction(1), n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return _answer(value, self.min, self.max) + discrete_laplace(self.gamma, source)

    def probability(self, report: int, value: int) -> float:
        """(1 - α)/(1 + α)·α^|report - value| = tanh(γ/2)·e^(-γ|z|), as a float."""
        distance = abs(_integer_report(report) - _answer(value, self.min, self.max))
        gamma = float(self.gamma)
        return math.tanh(gamma / 2) * math.exp(-gamma * distance)


@dataclass(frozen=True)
class DuchiBinary:
    """Duchi, Jordan & Wainwright's one-bit mechanism with ``lean`` r = tanh(ε/2) (rounded down).

    With u = (2x - min - max)/Δ ∈ [-1, 1], report 1 with probability (1 + r·u)/2, else 0.
    ε = ln((1 + r)/(1 - r)). The report 1 stands for +C, 0 for -C, C = 1/r, in u units.
    """

    min: int
    max: int
    lean: Fraction
    name: ClassVar[str] = "duchi_binary"

    def __post_init__(self) -> None:
        _check_range(self.min, self.max)
        if not isinstance(self.lean, Fraction) or not 0 < self.lean < 1:
            raise ValueError("lean must be a Fraction strictly between 0 and 1")

    @classmethod
    def from_epsilon(cls, min: int, max: int, epsilon: Fraction | float) -> DuchiBinary:
        low, high = _check_range(min, max)
        requested = checked_epsilon(epsilon)

        def worst_ratio(r: Fraction) -> Fraction | None:
            return (1 + r) / (1 - r) if 0 < r < 1 else None

        lean = private_probability(math.tanh(float(requested) / 2), 0.0, worst_ratio, requested)
        return cls(low, high, lean)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> DuchiBinary:
        check_mechanism_name(parameters, cls.name)
        low, high = _check_range(
            required_parameter(parameters, "min"), required_parameter(parameters, "max")
        )
        return cls(low, high, parse_fraction(required_parameter(parameters, "lean"), "lean"))

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "min": self.min,
            "max": self.max,
            "lean": fraction_text(self.lean),
        }

    @property
    def sensitivity(self) -> int:
        return self.max - self.min

    @property
    def epsilon(self) -> float:
        return epsilon_of_ratio((1 + self.lean) / (1 - self.lean))

    @property
    def value_offset(self) -> float:
        """mid - (Δ/2)·C: what a report of 0 stands for, in the answer's units."""
        return float(Fraction(self.min + self.max, 2) - Fraction(self.sensitivity, 2) / self.lean)

    @property
    def value_scale(self) -> float:
        """Δ·C: how far a report of 1 stands above a report of 0."""
        return float(self.sensitivity / self.lean)

    @property
    def worst_case_variance(self) -> float:
        """(Δ/2)²C²: every unbiased report lies (Δ/2)C from the middle; worst at mean = mid."""
        return float((Fraction(self.sensitivity, 2) / self.lean) ** 2)

    @property
    def worst_answer_variance(self) -> float:
        """One unbiased report's variance given the true answer x: (Δ/2)²(C² - u²), worst
        at the middle (u = 0), where it equals ``worst_case_variance``."""
        return self.worst_case_variance

    def report_range(self) -> tuple[int, int]:
        """A report is one bit: 0 or 1."""
        return 0, 1

    def report_influence(self, n: int) -> Fraction:
        """Δ·C/n = Δ/(r·n): a report of 1 instead of 0 moves the mean of n by the scale / n."""
        return _mean_influence(self.report_range(), self.sensitivity / self.lean, n)

    def probability(self, report: int, value: int) -> Fraction:
        x = _answer(value, self.min, self.max)
        if report not in (0, 1) or isinstance(report, bool):
            raise ValueError(f"report must be 0 or 1, got {report!r}")
        one = (self.sensitivity + self.lean * (2 * x - self.min - self.max)) / (
            2 * self.sensitivity
        )
        return one if report == 1 else 1 - one

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return int(bernoulli(self.probability(1, value), source))


@dataclass(frozen=True)
class PlainNumber:
    """A plain (not sensitive) number: stored as given. No protection, so ε is infinite."""

    min: int
    max: int
    name: ClassVar[str] = "none"

    def __post_init__(self) -> None:
        _check_range(self.min, self.max)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> PlainNumber:
        check_mechanism_name(parameters, cls.name)
        return cls(
            *_check_range(
                required_parameter(parameters, "min"), required_parameter(parameters, "max")
            )
        )

    def parameters(self) -> dict[str, object]:
        return {"mechanism": self.name, "min": self.min, "max": self.max}

    @property
    def epsilon(self) -> float:
        return math.inf

    value_offset: ClassVar[float] = 0.0
    value_scale: ClassVar[float] = 1.0

    @property
    def worst_case_variance(self) -> float:
        return (self.max - self.min) ** 2 / 4

    worst_answer_variance: ClassVar[float] = 0.0  # the answer itself: no noise

    def report_range(self) -> tuple[int, int]:
        """The answer itself: [min, max]."""
        return self.min, self.max

    def report_influence(self, n: int) -> Fraction:
        """(max - min)/n, as for any answer on [min, max]."""
        return _mean_influence(self.report_range(), Fraction(1), n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return _answer(value, self.min, self.max)

    def probability(self, report: int, value: int) -> Fraction:
        return Fraction(int(_integer_report(report) == _answer(value, self.min, self.max)))
