"""Optimized unary encoding, for choosing one of k options (Wang et al., USENIX Security 2017).

One bit per option: the true option's bit is 1 with probability 1/2, every other bit with
q = 1/(e^ε + 1). Each option's count of set bits is Binomial(n, q + (1/2 - q)·π_j), so its
share is estimated like a yes/no prevalence. Better than GRR for many options.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

from ..coins import HALF, SECURE, RandomSource, bernoulli
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
from ..words import Share, Text, lazy_gettext
from ._shares import (
    ShareRates,
    check_k,
    forced_known,
    option,
    share_influence,
    simulated_options,
)
from .cells import ANSWERED, CellRule, TallyCell
from .central_counting import CentralCounting
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt

#: The audit compares the whole bit vector, 2^k reports: up to this k.
MAX_AUDITED_BITS = 12


@dataclass(frozen=True)
class OptimizedUnaryEncoding(ShareRates, MechanismDefaults):
    """Optimized unary encoding: k bits; the true option's bit is 1 with ``one_probability``
    (1/2), every other bit is 1 with ``flip_to_one_probability`` q = 1/(e^ε + 1).

    The worst ratio is ((1/2)/q)·((1 - q)/(1/2)) = (1 - q)/q: two answers differ in two bits.
    """

    k: int
    flip_to_one_probability: Fraction
    one_probability: Fraction = HALF
    name: ClassVar[str] = "optimized_unary_encoding"
    file_name: ClassVar[str | None] = "oue"
    question_type: ClassVar[QuestionType] = QuestionType.CHOICE
    browser_script: ClassVar[str | None] = "mechanisms/oue.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.BITS
    respondent_name: ClassVar[Text] = lazy_gettext("Randomly marked options")
    researcher_name: ClassVar[Text] = lazy_gettext("optimized unary encoding")
    builder_label: ClassVar[Text | None] = lazy_gettext("oue: optimized unary encoding")

    def __post_init__(self) -> None:
        check_k(self.k)
        if not isinstance(self.flip_to_one_probability, Fraction) or not isinstance(
            self.one_probability, Fraction
        ):
            raise ValueError("OUE probabilities must be Fractions")
        if not 0 < self.flip_to_one_probability < self.one_probability < 1:
            raise ValueError(
                "need 0 < flip_to_one_probability < one_probability < 1 "
                "(a true option's bit must be likelier to be 1 than another's)"
            )

    @classmethod
    def from_epsilon(cls, k: int, epsilon: Fraction | float) -> OptimizedUnaryEncoding:
        """q = 1/(e^ε + 1), the float rounded up (towards 1/2) until the realized ε ≤ requested."""
        k = check_k(k)
        requested = checked_epsilon(epsilon)

        def worst_ratio(q: Fraction) -> Fraction | None:
            return (1 - q) / q if 0 < q < HALF else None

        start = 1 / (math.exp(float(requested)) + 1)
        return cls(k, private_probability(start, 0.5, worst_ratio, requested))

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> OptimizedUnaryEncoding:
        if epsilon is None:
            raise ValueError("a choice mechanism needs an ε")
        return cls.from_epsilon(space.options, epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> OptimizedUnaryEncoding:
        check_mechanism_name(parameters, cls.name)
        return cls(
            k=check_k(required_parameter(parameters, "k")),
            flip_to_one_probability=parse_fraction(
                required_parameter(parameters, "flip_to_one_probability"),
                "flip_to_one_probability",
            ),
            one_probability=parse_fraction(
                required_parameter(parameters, "one_probability"), "one_probability"
            ),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "k": self.k,
            "one_probability": fraction_text(self.one_probability),
            "flip_to_one_probability": fraction_text(self.flip_to_one_probability),
        }

    @property
    def epsilon(self) -> float:
        p, q = self.one_probability, self.flip_to_one_probability
        return epsilon_of_ratio(p * (1 - q) / (q * (1 - p)))

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]:
        return self.one_probability, self.flip_to_one_probability

    @property
    def pair_rates(self) -> tuple[Fraction, Fraction]:
        """The bits are flipped independently: two set at once with p·q when one is the
        true option's, q² when neither is."""
        p, q = self.exact_rates
        return p * q, q * q

    def report_range(self) -> tuple[int, int]:
        """Each of the k bits is 0 or 1 (an honest device can set all of them)."""
        return 0, 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n(1/2 - q)) on every option at once: a report may set all k bits."""
        return share_influence(*self.exact_rates, n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> tuple[int, ...]:
        truth = option(value, self.k)
        return tuple(
            int(
                bernoulli(
                    self.one_probability if j == truth else self.flip_to_one_probability, source
                )
            )
            for j in range(self.k)
        )

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int8]:
        """One row of k bits per value (shape values.shape + (k,))."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        truth = simulated_options(values, self.k)
        is_true = truth[..., np.newaxis] == np.arange(self.k)
        one = np.where(is_true, float(self.one_probability), float(self.flip_to_one_probability))
        return (rng.random(one.shape) < one).astype(np.int8)

    def probability(self, report: Sequence[int], value: int) -> Fraction:
        truth = option(value, self.k)
        bits = tuple(report)
        if len(bits) != self.k or any(isinstance(bit, bool) or bit not in (0, 1) for bit in bits):
            raise ValueError(f"report must be {self.k} bits (0 or 1), got {report!r}")
        chance = Fraction(1)
        for j, bit in enumerate(bits):
            one = self.one_probability if j == truth else self.flip_to_one_probability
            chance *= one if bit else 1 - one
        return chance

    def finite_support(self) -> tuple[str, ...]:
        """The whole bit vector: 2^k reports, so a leak through the joint distribution of
        the bits shows too (the audit's case has k = 5: 32)."""
        if self.k > MAX_AUDITED_BITS:
            raise ValueError(f"the audit tests OUE's 2^k reports only up to k = {MAX_AUDITED_BITS}")
        return tuple("".join(bits) for bits in itertools.product("01", repeat=self.k))

    def tally_cells(self) -> tuple[TallyCell, ...]:
        """n, and per option the reports with its bit set."""
        return (ANSWERED, *(TallyCell(str(i), CellRule.BIT, i) for i in range(self.k)))

    def central_counting(self) -> CentralCounting:
        """A count per option, the reports with its bit set; a report may set every
        bit, so it moves them by up to k in all."""
        return CentralCounting(self.k, _bit_counts, report_sensitivity=self.k)

    def export_columns(self, key: str) -> list[str]:
        """A column per option, ``key.index`` (a dot never occurs in a question key)."""
        return [f"{key}.{index}" for index in range(self.k)]

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        return [int(bit) for bit in str(stored)]

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return (
            f"columns {key}.0 .. {key}.{len(options) - 1}: "
            "1 = option's bit reported set (randomized)"
        )

    def r_rr_design(self, key: str) -> dict[str, Any]:
        """p1 = q, p0 = 1/2: one option against the rest."""
        outcome = f"one option against the rest: the column {key}.INDEX (0 or 1)"
        return forced_known(*self.exact_rates, outcome)

    def description(self) -> Text:
        return lazy_gettext(
            "Every option is marked or left unmarked at random. Your real choice is marked "
            "with probability %(real)s, and every other option with probability %(other)s.",
            real=Share(self.one_probability),
            other=Share(self.flip_to_one_probability),
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        """One entry per option, marked when its bit is 1, and "none"."""
        bits = report if isinstance(report, tuple) else (0,) * len(options)
        marked: list[tuple[Text | str, bool]] = [
            (text, bool(bit)) for text, bit in zip(options, bits, strict=True)
        ]
        return [*marked, (lazy_gettext("none"), report is not None and not any(bits))]


def _bit_counts(report: Sequence[int]) -> tuple[int, ...]:
    """A unary report's counts: 1 for each bit set."""
    return tuple(int(bit == 1) for bit in report)
