"""A plain (not sensitive) number: the answer is stored as given, outside any privacy
guarantee, so its ε is infinite. A mechanism all the same, so the rest of the app treats
every question alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

from ..coins import SECURE, RandomSource
from ..question_types import AnswerSpace, QuestionType
from ..rationals import check_mechanism_name, required_parameter
from ..wire import Report, ReportFormat
from ..words import Text
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
from .plain import PlainDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class PlainNumber(PlainDefaults):
    """A plain (not sensitive) number: stored as given. No protection, so ε is infinite."""

    min: int
    max: int
    question_type: ClassVar[QuestionType] = QuestionType.NUMBER
    # Padded like a randomized number, so a POST's size says nothing either way.
    report_format: ClassVar[ReportFormat] = ReportFormat.PADDED_NUMBER
    value_offset: ClassVar[float] = 0.0
    value_scale: ClassVar[float] = 1.0
    bit_rates: ClassVar[tuple[float, float] | None] = None
    worst_answer_variance: ClassVar[float] = 0.0  # the answer itself: no noise

    def __post_init__(self) -> None:
        check_range(self.min, self.max)

    @classmethod
    def describes(cls, parameters: Mapping[str, object]) -> bool:
        """A plain number's parameters carry ``min`` and ``max``."""
        return "min" in parameters and "max" in parameters

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> PlainNumber:
        return cls(*space.bounds())

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> PlainNumber:
        check_mechanism_name(parameters, cls.name)
        return cls(
            *check_range(
                required_parameter(parameters, "min"), required_parameter(parameters, "max")
            )
        )

    def parameters(self) -> dict[str, object]:
        return {"mechanism": self.name, "min": self.min, "max": self.max}

    @property
    def worst_case_variance(self) -> float:
        return (self.max - self.min) ** 2 / 4

    def report_range(self) -> tuple[int, int]:
        """The answer itself: [min, max]."""
        return self.min, self.max

    def report_influence(self, n: int) -> Fraction:
        """(max - min)/n, as for any answer on [min, max]."""
        return mean_influence(self.report_range(), Fraction(1), n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return answer(value, self.min, self.max)

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return simulated_numbers(values, self.min, self.max)

    def probability(self, report: int, value: int) -> Fraction:
        return Fraction(int(integer_report(report) == answer(value, self.min, self.max)))

    def finite_support(self) -> tuple[str, ...]:
        return tuple(str(number) for number in range(self.min, self.max + 1))

    def tally_cells(self) -> tuple[TallyCell, ...]:
        return MEAN_CELLS

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return number_text(report)
