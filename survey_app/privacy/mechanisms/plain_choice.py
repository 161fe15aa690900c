"""A plain (not sensitive) choice: the option is stored as given, outside any privacy
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
from ._shares import (
    check_k,
    option,
    option_cells,
    option_index_support,
    option_texts,
    share_influence,
    simulated_options,
)
from .cells import TallyCell
from .plain import PlainDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class PlainChoice(PlainDefaults):
    """A plain (not sensitive) choice: stored as given. No protection, so ε is infinite."""

    k: int
    question_type: ClassVar[QuestionType] = QuestionType.CHOICE
    report_format: ClassVar[ReportFormat] = ReportFormat.OPTION
    p_true: ClassVar[float] = 1.0
    p_false: ClassVar[float] = 0.0
    exact_rates: ClassVar[tuple[Fraction, Fraction]] = (Fraction(1), Fraction(0))
    small_share_variance: ClassVar[float] = 0.0
    #: The answer itself: one option, never two.
    pair_rates: ClassVar[tuple[Fraction, Fraction]] = (Fraction(0), Fraction(0))

    def __post_init__(self) -> None:
        check_k(self.k)

    @classmethod
    def describes(cls, parameters: Mapping[str, object]) -> bool:
        """A plain choice's parameters carry ``k``."""
        return "k" in parameters

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> PlainChoice:
        return cls(space.options)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> PlainChoice:
        check_mechanism_name(parameters, cls.name)
        return cls(k=check_k(required_parameter(parameters, "k")))

    def parameters(self) -> dict[str, object]:
        return {"mechanism": self.name, "k": self.k}

    def report_range(self) -> tuple[int, int]:
        """The option's index itself: 0 to k - 1."""
        return 0, self.k - 1

    def report_influence(self, n: int) -> Fraction:
        """1/n: the answer itself."""
        return share_influence(*self.exact_rates, n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return option(value, self.k)

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return simulated_options(values, self.k)

    def probability(self, report: int, value: int) -> Fraction:
        return Fraction(int(option(report, self.k, "report") == option(value, self.k)))

    def finite_support(self) -> tuple[str, ...]:
        return option_index_support(self.k)

    def tally_cells(self) -> tuple[TallyCell, ...]:
        return option_cells(self.k)

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        """The chosen option's text."""
        return [options[int(stored)]]

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return option_texts(report, options)
