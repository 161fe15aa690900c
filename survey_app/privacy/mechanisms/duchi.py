"""Duchi, Jordan & Wainwright's one-bit mechanism, for whole numbers in [min, max].

A single biased bit: 1 with a chance that grows linearly with the answer. Better than
discrete Laplace at small ε (``choosing`` decides). The count of 1s is exactly binomial,
so the mean gets an exact interval (``means``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

from ..coins import SECURE, RandomSource, bernoulli
from ..question_types import AnswerSpace, QuestionType
from ..rationals import (
    check_mechanism_name,
    checked_epsilon,
    epsilon_of_ratio,
    fraction_text,
    parse_fraction,
    private_probability,
    required_parameter,
)
from ..wire import Report, ReportFormat
from ..words import Text, lazy_gettext
from ._ranges import MEAN_CELLS, answer, check_range, mean_influence, simulated_numbers
from .cells import TallyCell
from .central_counting import CentralCounting, where_one
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class DuchiBinary(MechanismDefaults):
    """Duchi, Jordan & Wainwright's one-bit mechanism with ``lean`` r = tanh(ε/2) (rounded down).

    With u = (2x - min - max)/Δ ∈ [-1, 1], report 1 with probability (1 + r·u)/2, else 0.
    ε = ln((1 + r)/(1 - r)). The report 1 stands for +C, 0 for -C, C = 1/r, in u units.
    """

    min: int
    max: int
    lean: Fraction
    name: ClassVar[str] = "duchi_binary"
    file_name: ClassVar[str | None] = "duchi"
    question_type: ClassVar[QuestionType] = QuestionType.NUMBER
    browser_script: ClassVar[str | None] = "mechanisms/duchi.js"
    # One character already: no padding needed to keep every report the same length.
    report_format: ClassVar[ReportFormat] = ReportFormat.INTEGER
    respondent_name: ClassVar[Text] = lazy_gettext("Number stored as “high” or “low” at random")
    researcher_name: ClassVar[Text] = lazy_gettext("Duchi et al.’s one-bit mechanism")
    builder_label: ClassVar[Text | None] = lazy_gettext("duchi: one random bit")

    def __post_init__(self) -> None:
        check_range(self.min, self.max)
        if not isinstance(self.lean, Fraction) or not 0 < self.lean < 1:
            raise ValueError("lean must be a Fraction strictly between 0 and 1")

    @classmethod
    def from_epsilon(cls, min: int, max: int, epsilon: Fraction | float) -> DuchiBinary:
        low, high = check_range(min, max)
        requested = checked_epsilon(epsilon)

        def worst_ratio(r: Fraction) -> Fraction | None:
            return (1 + r) / (1 - r) if 0 < r < 1 else None

        lean = private_probability(math.tanh(float(requested) / 2), 0.0, worst_ratio, requested)
        return cls(low, high, lean)

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> DuchiBinary:
        if epsilon is None:
            raise ValueError("a number mechanism needs an ε")
        return cls.from_epsilon(*space.bounds(), epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> DuchiBinary:
        check_mechanism_name(parameters, cls.name)
        low, high = check_range(
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
    def bit_rates(self) -> tuple[float, float]:
        """With respondents drawn at random each report is 1 with probability λ = (1 - r)/2
        + r·(μ - min)/Δ: randomized response on the share of the range (μ - min)/Δ with
        p_true = (1 + r)/2 and p_false = (1 - r)/2."""
        return float((1 + self.lean) / 2), float((1 - self.lean) / 2)

    @property
    def worst_case_variance(self) -> float:
        """(Δ/2)²C²: every unbiased report lies (Δ/2)C from the middle; worst at mean = mid."""
        return float((Fraction(self.sensitivity, 2) / self.lean) ** 2)

    @property
    def worst_answer_variance(self) -> float:
        """One unbiased report's variance given the true answer x: (Δ/2)²(C² - u²), worst
        at the middle (u = 0), where it equals ``worst_case_variance``."""
        return self.worst_case_variance

    @property
    def auto_score(self) -> float:
        return self.worst_answer_variance

    def report_range(self) -> tuple[int, int]:
        """A report is one bit: 0 or 1."""
        return 0, 1

    def report_influence(self, n: int) -> Fraction:
        """Δ·C/n = Δ/(r·n): a report of 1 instead of 0 moves the mean of n by the scale / n."""
        return mean_influence(self.report_range(), self.sensitivity / self.lean, n)

    def probability(self, report: int, value: int) -> Fraction:
        x = answer(value, self.min, self.max)
        if report not in (0, 1) or isinstance(report, bool):
            raise ValueError(f"report must be 0 or 1, got {report!r}")
        one = (self.sensitivity + self.lean * (2 * x - self.min - self.max)) / (
            2 * self.sensitivity
        )
        return one if report == 1 else 1 - one

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return int(bernoulli(self.probability(1, value), source))

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """1 with probability (1 + r·u)/2, u = (2x - min - max)/Δ."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        truth = simulated_numbers(values, self.min, self.max)
        u = (2 * truth - self.min - self.max) / self.sensitivity
        one = 0.5 + float(self.lean) * u / 2
        return (rng.random(truth.shape) < one).astype(np.int64)

    def finite_support(self) -> tuple[str, ...]:
        return ("0", "1")

    def tally_cells(self) -> tuple[TallyCell, ...]:
        return MEAN_CELLS

    def central_counting(self) -> CentralCounting:
        """One count, the reported 1s (``bit_rates`` turns its share into the mean); a
        report moves it by at most 1."""
        return CentralCounting(1, where_one)

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        """The bit mapped to the answer's scale, offset + scale·bit: its mean is unbiased."""
        return [self.value_offset + self.value_scale * int(stored)]

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return "the report mapped to the answer's scale: its mean is the unbiased mean"

    def description(self) -> Text:
        return lazy_gettext(
            "Only “high” or “low” is stored. It is chosen at random, leaning slightly "
            "towards the end of the range your number is closer to."
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return [(lazy_gettext("high"), report == 1), (lazy_gettext("low"), report == 0)]
