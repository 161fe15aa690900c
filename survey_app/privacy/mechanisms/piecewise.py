"""The piecewise mechanism made discrete, mixed with Duchi's bit, for whole numbers at larger ε.

Wang et al. (ICDE 2019, "Collecting and analyzing multidimensional data with local
differential privacy") report a number from a wider interval, more likely near the
answer's position than elsewhere (the piecewise mechanism, PM), and mix it with Duchi's
two-point report (the hybrid mechanism, HM). Their reports are reals; here they are
integers with rational chances, so every coin is exact and the reports are tallied as a
sum and a sum of squares.

With d = x - min in {0..Δ}, a step s and a window width w, the piecewise part reports
y in {0..N-1}, N = Δs + w, with

    P(y | x) = h if sd ≤ y < sd + w,   l otherwise,   h = R·l,   w·h + (N - w)·l = 1.

Two answers change a report's chance by at most h/l = R, so ε = ln R exactly, R the
rational e^ε rounded down (``rationals.private_probability``). The window's sum is affine
in its start, so E[y | d] = b + a·d with a = (h - l)·w·s, and (y - b)/a is unbiased.
Duchi's part reports H or L = N - 1 - H, the integers whose unbiased values are
Δ/2 ± Δ/(2r) (r its lean, rounded down so that (1 + r)/(1 - r) ≤ R too): both parts share
one unbiased value per report, min + (y - b)/a, so a mean needs only the reports' sum and
sum of squares, and a mixture of two chances each within R of its own is within R (ε stays
ln R, even where H falls on a piecewise report and their chances add).

The variance given an answer is a quadratic in d, symmetric about Δ/2 (y ↦ N - 1 - y
mirrors d ↦ Δ - d): convex for the piecewise part, concave for Duchi's. So its largest
over the answers is at an end or at the middle, and the piecewise share α that equalizes
the two (Wang et al.'s 1 - e^(-ε/2) in their limit) minimizes that worst case.
``best_for`` picks s, w and α by it: floats to search, the exact rationals to decide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

from ..coins import SECURE, RandomSource, bernoulli, uniform_below
from ..question_types import AnswerSpace, QuestionType
from ..rationals import (
    check_mechanism_name,
    checked_epsilon,
    epsilon_of_ratio,
    fraction_text,
    parse_fraction,
    parse_integer,
    private_probability,
    required_parameter,
)
from ..wire import Report, ReportFormat
from ..words import Text, lazy_gettext
from ._piecewise_design import Window, best_design
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


@dataclass(frozen=True)
class DiscretePiecewise(MechanismDefaults):
    """A discrete piecewise report with probability ``piecewise_share`` (α), else Duchi's.

    Piecewise: y in {0..N-1}, N = Δ·``step`` + ``width``, each y in the window
    [step·d, step·d + width) ``ratio`` (R) times as likely as each y outside it. Duchi:
    ``high`` (H) with probability (1 + r·u)/2, u = (2d - Δ)/Δ, else N - 1 - H. ε = ln R.
    """

    min: int
    max: int
    step: int
    width: int
    ratio: Fraction
    piecewise_share: Fraction
    high: int
    name: ClassVar[str] = "piecewise"
    file_name: ClassVar[str | None] = "piecewise"
    question_type: ClassVar[QuestionType] = QuestionType.NUMBER
    browser_script: ClassVar[str | None] = "mechanisms/piecewise.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.PADDED_NUMBER
    respondent_name: ClassVar[Text] = lazy_gettext("Number stored on a wider scale at random")
    researcher_name: ClassVar[Text] = lazy_gettext("discrete piecewise mechanism")
    builder_label: ClassVar[Text | None] = lazy_gettext("piecewise: discrete piecewise mechanism")

    def __post_init__(self) -> None:
        check_range(self.min, self.max)
        parse_integer(self.high, "high")
        if parse_integer(self.step, "step") < 1 or parse_integer(self.width, "width") < 1:
            raise ValueError("step and width must be at least 1")
        if not isinstance(self.ratio, Fraction) or not self.ratio > 1:
            raise ValueError("ratio must be a Fraction above 1")
        if not isinstance(self.piecewise_share, Fraction) or not 0 < self.piecewise_share <= 1:
            raise ValueError("piecewise_share must be a Fraction in (0, 1]")
        if not 0 < self.lean <= (self.ratio - 1) / (self.ratio + 1):
            raise ValueError("high must put Duchi's reports beyond the range, within the ratio")

    @classmethod
    def best_for(cls, min: int, max: int, epsilon: Fraction | float) -> DiscretePiecewise:
        """The step, width and piecewise share with the smallest worst-answer variance at
        ε (``auto``'s criterion), R the rational e^ε rounded down."""
        low, high = check_range(min, max)
        requested = checked_epsilon(epsilon)

        def worst_ratio(ratio: Fraction) -> Fraction | None:
            return ratio if ratio > 1 else None

        ratio = private_probability(math.exp(float(requested)), 1.0, worst_ratio, requested)
        step, width, share, top = best_design(high - low, ratio)
        return cls(low, high, step, width, ratio, share, top)

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> DiscretePiecewise:
        if epsilon is None:
            raise ValueError("a number mechanism needs an ε")
        return cls.best_for(*space.bounds(), epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> DiscretePiecewise:
        check_mechanism_name(parameters, cls.name)
        low, high = check_range(
            required_parameter(parameters, "min"), required_parameter(parameters, "max")
        )
        share = required_parameter(parameters, "piecewise_share")
        return cls(
            low,
            high,
            parse_integer(required_parameter(parameters, "step"), "step"),
            parse_integer(required_parameter(parameters, "width"), "width"),
            parse_fraction(required_parameter(parameters, "ratio"), "ratio"),
            parse_fraction(share, "piecewise_share"),
            parse_integer(required_parameter(parameters, "high"), "high"),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "min": self.min,
            "max": self.max,
            "step": self.step,
            "width": self.width,
            "ratio": fraction_text(self.ratio),
            "piecewise_share": fraction_text(self.piecewise_share),
            "high": self.high,
        }

    # --- the design's exact figures ---------------------------------------------------

    @property
    def _window(self) -> Window[Fraction]:
        return Window(self.max - self.min, self.step, self.width, self.ratio)

    @property
    def outputs(self) -> int:
        """N = Δ·s + w: the piecewise part's reports are 0..N-1."""
        return self._window.outputs

    @property
    def chances(self) -> tuple[Fraction, Fraction]:
        """(h, l): one report's chance inside the answer's window and outside it."""
        window = self._window
        return window.inside, window.outside

    @property
    def slope(self) -> Fraction:
        """a = (h - l)·w·s: how far the expected report moves per unit of the answer."""
        return self._window.slope

    @property
    def base(self) -> Fraction:
        """b: the expected piecewise report for an answer at min."""
        return self._window.base

    @property
    def lean(self) -> Fraction:
        """r: Duchi's lean, from where ``high`` lies, Δ·a/(2(H - b) - Δ·a)."""
        return self._window.lean(self.high)

    @property
    def low(self) -> int:
        """Duchi's low report, N - 1 - H (the mirror of ``high``)."""
        return self.outputs - 1 - self.high

    def unbiased(self, report: int) -> Fraction:
        """min + (y - b)/a: what a report stands for; its mean is the answer's, exactly."""
        return self.min + (integer_report(report) - self.base) / self.slope

    def answer_variance(self, value: int) -> Fraction:
        """Var(unbiased report | answer), exactly: α·(piecewise part) + (1 - α)·(Duchi's)."""
        d = answer(value, self.min, self.max) - self.min
        return self._window.mixed_variance(d, self.high, self.piecewise_share)

    @property
    def worst_ratio(self) -> Fraction:
        """R: no report is more than R times as likely under one answer as under another."""
        return self.ratio

    @property
    def epsilon(self) -> float:
        return epsilon_of_ratio(self.ratio)

    @property
    def value_offset(self) -> float:
        return float(self.min - self.base / self.slope)

    @property
    def value_scale(self) -> float:
        return float(1 / self.slope)

    bit_rates: ClassVar[tuple[float, float] | None] = None

    @property
    def worst_answer_variance(self) -> float:
        """The variance given an answer, a quadratic symmetric about the middle, is largest
        at an end or at the middle (module docstring): the larger of the two."""
        middle = self.min + (self.max - self.min) // 2
        return float(max(self.answer_variance(self.min), self.answer_variance(middle)))

    @property
    def worst_case_variance(self) -> float:
        """Over every distribution of answers: the end's variance plus Δ²/4, half the answers
        at each end (the quadratic's curvature is at least -1, Duchi's, so spreading the
        answers to the ends adds at least as much spread as it can take from the noise)."""
        return float(self.answer_variance(self.min) + Fraction(self.max - self.min) ** 2 / 4)

    @property
    def auto_score(self) -> float:
        return self.worst_answer_variance

    # --- reports ------------------------------------------------------------------------

    def report_range(self) -> tuple[int, int]:
        """0..N-1 and Duchi's two reports: an honest device sends nothing else."""
        return min(0, self.low), max(self.outputs - 1, self.high)

    def report_influence(self, n: int) -> Fraction:
        """(highest - lowest)/(a·n): one report in ``report_range`` against another."""
        return mean_influence(self.report_range(), 1 / self.slope, n)

    def check_report(self, report: Report) -> None:
        """The padded number's field takes any integer; refuse what no honest device sends."""
        self._checked(report)

    def _checked(self, report: object) -> int:
        y = integer_report(report)
        low, high = self.report_range()
        if not low <= y <= high:
            raise ValueError(f"report must be an integer in [{low}, {high}], got {report!r}")
        return y

    def probability(self, report: int, value: int) -> Fraction:
        """α·(h or l, for y in 0..N-1) + (1 - α)·((1 ± r·u)/2, for y = H or L)."""
        y = self._checked(report)
        d = answer(value, self.min, self.max) - self.min
        inside, outside = self.chances
        start = self.step * d
        chance = Fraction(0)
        if 0 <= y < self.outputs:
            chance += self.piecewise_share * (
                inside if start <= y < start + self.width else outside
            )
        if y in (self.high, self.low):
            up = self._high_chance(d)
            chance += (1 - self.piecewise_share) * (up if y == self.high else 1 - up)
        return chance

    def _high_chance(self, d: int) -> Fraction:
        """Duchi's (1 + r·u)/2 with u = (2d - Δ)/Δ."""
        span = self.max - self.min
        return (1 + self.lean * Fraction(2 * d - span, span)) / 2

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        """α: in the window with w·h, then a uniform report there or among the N - w
        others; else Duchi's coin between H and L. Every coin exact."""
        d = answer(value, self.min, self.max) - self.min
        if not bernoulli(self.piecewise_share, source):
            return self.high if bernoulli(self._high_chance(d), source) else self.low
        start = self.step * d
        h, _ = self.chances
        if bernoulli(self.width * h, source):
            return start + uniform_below(self.width, source)
        other = uniform_below(self.outputs - self.width, source)
        return other if other < start else other + self.width

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """The same draws in NumPy's floats, for simulations only."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        d = simulated_numbers(values, self.min, self.max) - self.min
        h, _ = self.chances
        start = self.step * d
        inside = start + rng.integers(0, self.width, d.shape)
        other = rng.integers(0, self.outputs - self.width, d.shape)
        outside = np.where(other < start, other, other + self.width)
        piecewise = np.where(rng.random(d.shape) < float(self.width * h), inside, outside)
        up = rng.random(d.shape) < (1 + float(self.lean) * (2 * d / (self.max - self.min) - 1)) / 2
        duchi = np.where(up, self.high, self.low)
        return np.where(rng.random(d.shape) < float(self.piecewise_share), piecewise, duchi)

    def finite_support(self) -> tuple[str, ...]:
        low, high = self.report_range()
        return tuple(str(y) for y in range(low, high + 1))

    def tally_cells(self) -> tuple[TallyCell, ...]:
        return MEAN_CELLS

    def central_counting(self) -> CentralCounting:
        """One count, the reports summed around the centre of their range, each clipped to
        that range (an old database may hold a forged report from before reports were
        checked), so one report moves the sum by at most the farther end. The sum is in
        report units: ``privacy.central`` maps a mean through value_offset and value_scale."""
        low, high = self.report_range()
        centre = (low + high) // 2
        reach = max(centre - low, high - centre)

        def contribution(report: int | str) -> tuple[int]:
            return (min(max(int(report), low), high) - centre,)

        return CentralCounting(1, contribution, reach, reach, centre)

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        """The report mapped to the answer's scale: its mean is unbiased."""
        return [self.value_offset + self.value_scale * int(stored)]

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return "the report mapped to the answer's scale: its mean is the unbiased mean"

    def description(self) -> Text:
        return lazy_gettext(
            "A random whole number on a wider scale is stored. Numbers near where your "
            "answer sits on that scale are more likely than the others, but any of them "
            "can be drawn."
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return number_text(report)
