"""Discrete Laplace noise, for whole numbers in [min, max]; better than Duchi at large ε.

Report x + Z, Z two-sided geometric noise, so the mean of the reports is unbiased for the
mean answer (``means.estimate_mean``). Reports are unbounded integers, so the server takes
a report beyond ``report_range`` for a forgery: one forged report then moves a mean by a
known amount, not without bound (Cao, Jia & Gong 2021 show the attack that leaves open).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction
from functools import cache, partial
from typing import TYPE_CHECKING, ClassVar

from ..coins import SECURE, RandomSource, discrete_laplace
from ..question_types import AnswerSpace, QuestionType
from ..rationals import (
    check_mechanism_name,
    checked_epsilon,
    fraction_text,
    parse_fraction,
    required_parameter,
)
from ..wire import Report, ReportFormat
from ..words import Figure, Text, lazy_gettext
from ._ranges import (
    MEAN_CELLS,
    answer,
    check_range,
    integer_report,
    mean_influence,
    number_text,
    simulated_numbers,
)
from .cells import TallyCell
from .central_counting import CentralCounting
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt

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


@dataclass(frozen=True)
class DiscreteLaplace(MechanismDefaults):
    """Report x + Z with P(Z = z) = (1 - α)/(1 + α)·α^|z|, α = e^(-γ), γ = ``gamma`` rational.

    Changing the answer by at most Δ = max - min changes any report's chance by at most
    α^(-Δ), so ε = Δ·γ exactly: no rounding, the realized ε is the requested decimal.
    Reports are unbounded integers (they may lie outside [min, max] or be negative).
    """

    min: int
    max: int
    gamma: Fraction
    name: ClassVar[str] = "discrete_laplace"
    file_name: ClassVar[str | None] = "laplace"
    question_type: ClassVar[QuestionType] = QuestionType.NUMBER
    browser_script: ClassVar[str | None] = "mechanisms/discrete_laplace.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.PADDED_NUMBER
    respondent_name: ClassVar[Text] = lazy_gettext("Random noise added to the number")
    researcher_name: ClassVar[Text] = lazy_gettext("discrete Laplace noise")
    builder_label: ClassVar[Text | None] = lazy_gettext("laplace: discrete Laplace noise")

    def __post_init__(self) -> None:
        check_range(self.min, self.max)
        if not isinstance(self.gamma, Fraction) or not self.gamma > 0:
            raise ValueError("gamma must be a positive Fraction")

    @classmethod
    def from_epsilon(cls, min: int, max: int, epsilon: Fraction | float) -> DiscreteLaplace:
        low, high = check_range(min, max)
        return cls(low, high, checked_epsilon(epsilon) / (high - low))

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> DiscreteLaplace:
        if epsilon is None:
            raise ValueError("a number mechanism needs an ε")
        return cls.from_epsilon(*space.bounds(), epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> DiscreteLaplace:
        check_mechanism_name(parameters, cls.name)
        low, high = check_range(
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
    bit_rates: ClassVar[tuple[float, float] | None] = None

    @property
    def worst_case_variance(self) -> float:
        """Δ²/4 (the widest answer spread on [min, max]) plus the noise."""
        return self.sensitivity**2 / 4 + self.noise_variance

    @property
    def worst_answer_variance(self) -> float:
        """One unbiased report's variance given the true answer, at the worst answer: Var Z."""
        return self.noise_variance

    @property
    def auto_score(self) -> float:
        """The noise around one answer: not ``worst_case_variance``, which would add the
        answers' own spread to this noise but not to Duchi's (``choosing``)."""
        return self.worst_answer_variance

    def report_range(self) -> tuple[int, int]:
        """[min - B, max + B]: an honest report lies outside with probability below 2^-60
        (``noise_reach``), whatever the answer; anything further is a forgery."""
        reach = noise_reach(self.gamma)
        return self.min - reach, self.max + reach

    def report_influence(self, n: int) -> Fraction:
        """(max - min + 2B)/n: the most one report in ``report_range`` moves the mean of n."""
        return mean_influence(self.report_range(), Fraction(1), n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return answer(value, self.min, self.max) + discrete_laplace(self.gamma, source)

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """x + Z, Z the difference of two Geometric(1 - α) counts: two-sided geometric noise."""
        truth = simulated_numbers(values, self.min, self.max)
        success = -math.expm1(-float(self.gamma))  # 1 - α, exact for tiny γ too
        noise = rng.geometric(success, truth.shape) - rng.geometric(success, truth.shape)
        return truth + noise

    def probability(self, report: int, value: int) -> float:
        """(1 - α)/(1 + α)·α^|report - value| = tanh(γ/2)·e^(-γ|z|), as a float."""
        distance = abs(integer_report(report) - answer(value, self.min, self.max))
        gamma = float(self.gamma)
        return math.tanh(gamma / 2) * math.exp(-gamma * distance)

    def finite_support(self) -> None:
        """Every integer: the audit cuts cells from the exact distribution instead."""
        return None

    def tally_cells(self) -> tuple[TallyCell, ...]:
        return MEAN_CELLS

    def central_counting(self) -> CentralCounting:
        """One count, the reports summed around the centre ⌊(min + max)/2⌋, each clipped
        to the range an honest report falls in (``report_range``: [min - B, max + B],
        left with probability below 2^-60). So one report adds at most M = H + B to the
        sum in absolute value, H the farthest an answer lies from the centre: a sum around
        the centre needs less noise than one around 0 for a range such as 18-99.

        Clipping at B moves an honest report's expectation by at most α^(B+1)/((1 + α)(1 -
        α)) < 2^-61/(1 - α) ≤ 2^-61·(1 + 1/γ): below 10^-9 of an answer unit for every γ
        the survey files allow, far below what is shown, so the mean makes no allowance
        for it.
        """
        lowest, highest = self.report_range()
        centre = (self.min + self.max) // 2
        low, high = lowest - centre, highest - centre
        reach = max(centre - self.min, self.max - centre)
        clipped = partial(_clipped, centre, low, high)
        return CentralCounting(1, clipped, max(-low, high), reach, centre)

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return "the answer plus two-sided geometric noise (may fall outside [min, max])"

    def storage_problem(self, largest: int) -> str | None:
        """Why a survey file may not ask for this mechanism: its honest reports could pass
        ``largest`` (a stored report must fit its tally), and a respondent refused for one
        would send again and spend fresh noise on the same answer. Only a forced
        ``laplace`` at a tiny ε on a huge range gets there (``auto`` takes Duchi first)."""
        low, high = self.report_range()
        if max(abs(low), abs(high)) <= largest:
            return None
        return (
            f"discrete Laplace at epsilon {self.epsilon_exact} on a range of "
            f"{self.sensitivity} adds noise of up to ±{noise_reach(self.gamma)}, more than "
            "can be stored; use a larger epsilon, a narrower range, or mechanism: duchi"
        )

    def description(self) -> Text:
        alpha = self.alpha
        typical = 2 * alpha / (1 - alpha * alpha)  # E|Z| for two-sided geometric noise
        return lazy_gettext(
            "A random whole number is added to your answer before it is stored. On average "
            "it is about %(typical)s either way, and sometimes much more.",
            typical=Figure(typical, "#,##0.0"),
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return number_text(report)


def _clipped(centre: int, low: int, high: int, report: int) -> tuple[int, ...]:
    """A report's count: its distance from the centre, clipped to [low, high]."""
    return (min(max(report - centre, low), high),)
