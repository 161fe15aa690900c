"""One sampled option, for tick-all-that-apply questions (LDPMiner, Qin et al. 2016; the
sampling step of Wang et al. 2018's padding-and-sampling).

The answer is a set S of the k options, possibly empty, given as its k bits (1 = ticked:
``QuestionType.MULTIPLE``'s answer format). Two answers may differ in every option, so
coins on every option at ε each would cost k·ε. Instead the device draws one option j
uniformly and reports (j, b): b is "j is ticked", kept with p = e^ε/(e^ε + 1) and flipped
otherwise. Every report has the same shape whatever S is, and

    P((j, b) | S) = (1/k)·p if b = [j ∈ S],   (1/k)·(1 - p) otherwise,

so for any two answers S, S' and any report the ratio is 1, p/(1 - p) or (1 - p)/p: ε =
ln(p/(1 - p)) whatever |S| and |S'| are (j says nothing, being drawn without looking at
S; b is randomized response on one bit). The ε is computed from the exact p sampled.

Estimation, per option j: given the number n_j of reports about j, those reports are
n_j independent draws of b, each 1 with λ_j = (1 - p) + (2p - 1)·π_j (π_j the share who
tick j, respondents taken at random from the population), so the count c_j of (j, 1) is
exactly Binomial(n_j, λ_j) *conditionally on n_j*: the share is estimated, with its
Clopper-Pearson interval, as a yes/no question answered n_j times
(``privacy.ticked_shares``). Its variance given n_j is λ_j(1 - λ_j)/(n_j(2p - 1)²); n_j
is Binomial(n, 1/k), so over all surveys with n_j ≥ 1 it is E[1/n_j | n_j ≥ 1] times
λ_j(1 - λ_j)/(2p - 1)² (``share_variance``), about k times a yes/no question's: the
price of hiding how many options were ticked.

Coins on every option at ε/k each (unary encoding with the budget split) would report
all k options but each far noisier: one report's variance of a rare option's share is
then e^(ε/k)/(e^(ε/k) - 1)² against k·e^ε/(e^ε - 1)² here, i.e. 1/(4 sinh²(ε/2k))
against k/(4 sinh²(ε/2)); since sinh(ε/2) ≥ k·sinh(ε/2k), sampling is never worse for a
rare option at any k ≥ 2 and ε (table in docs/tick-all.md), so it is the one mechanism
offered for the type.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..coins import HALF, SECURE, RandomSource, bernoulli, uniform_below
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
from ..words import Share, Text, lazy_gettext
from ._shares import check_k, forced_known, option
from .cells import ANSWERED, CellRule, TallyCell
from .central_counting import CentralCounting
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class SampledOption(MechanismDefaults):
    """One option j of the k drawn uniformly, and whether it is ticked, kept with
    ``keep_probability`` p and flipped otherwise: ε = ln(p/(1 - p)) for any two sets."""

    k: int
    keep_probability: Fraction
    name: ClassVar[str] = "sampled_option"
    file_name: ClassVar[str | None] = "sampled"
    question_type: ClassVar[QuestionType] = QuestionType.MULTIPLE
    browser_script: ClassVar[str | None] = "mechanisms/sampled_option.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.OPTION_BIT
    respondent_name: ClassVar[Text] = lazy_gettext("One option picked at random")
    researcher_name: ClassVar[Text] = lazy_gettext("one sampled option, randomized response")
    builder_label: ClassVar[Text | None] = lazy_gettext(
        "sampled: one option sampled, randomized response"
    )

    def __post_init__(self) -> None:
        check_k(self.k)
        if not isinstance(self.keep_probability, Fraction):
            raise ValueError("keep_probability must be a Fraction")
        # p ≤ 1/2 would make a ticked option no likelier to be reported ticked.
        if not HALF < self.keep_probability < 1:
            raise ValueError("keep_probability must lie strictly between 1/2 and 1")

    @classmethod
    def from_epsilon(cls, k: int, epsilon: Fraction | float) -> SampledOption:
        """p = e^ε/(e^ε + 1), the float rounded down (towards 1/2) until the realized ε ≤
        requested."""
        k = check_k(k)
        requested = checked_epsilon(epsilon)

        def worst_ratio(p: Fraction) -> Fraction | None:
            return p / (1 - p) if HALF < p < 1 else None

        start = 1 / (1 + math.exp(-float(requested)))
        return cls(k, private_probability(start, 0.5, worst_ratio, requested))

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> SampledOption:
        if epsilon is None:
            raise ValueError("a tick-all-that-apply mechanism needs an ε")
        return cls.from_epsilon(space.options, epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> SampledOption:
        check_mechanism_name(parameters, cls.name)
        return cls(
            k=check_k(required_parameter(parameters, "k")),
            keep_probability=parse_fraction(
                required_parameter(parameters, "keep_probability"), "keep_probability"
            ),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "k": self.k,
            "keep_probability": fraction_text(self.keep_probability),
        }

    @property
    def worst_ratio(self) -> Fraction:
        """p/(1 - p): one report's chance given an answer that ticks its option over its
        chance given one that does not (the drawn option's 1/k cancels)."""
        return self.keep_probability / (1 - self.keep_probability)

    @property
    def epsilon(self) -> float:
        return epsilon_of_ratio(self.worst_ratio)

    @property
    def p_true(self) -> float:
        """A ticker's chance of b = 1 among the reports about the option (not among all)."""
        return float(self.keep_probability)

    @property
    def p_false(self) -> float:
        return float(1 - self.keep_probability)

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]:
        """Among the reports about one option: (a ticker's chance of b = 1, a
        non-ticker's), p and 1 - p. The count's denominator is n_j, not n."""
        return self.keep_probability, 1 - self.keep_probability

    def conditional_variance(self, share: Fraction, about: int) -> Fraction:
        """The unbiased share's exact variance given ``about`` = n_j reports about the
        option: λ(1 - λ)/(n_j(2p - 1)²), λ = (1 - p) + (2p - 1)·share."""
        if parse_integer(about, "about") < 1:
            raise ValueError(f"the reports about an option must be at least 1, got {about}")
        p = self.keep_probability
        rate = (1 - p) + (2 * p - 1) * share
        return rate * (1 - rate) / (about * (2 * p - 1) ** 2)

    def share_variance(self, share: Fraction, n: int) -> Fraction:
        """The unbiased share's exact variance among n reports, over the surveys where the
        option was drawn at least once: E[λ(1 - λ)/(n_j(2p - 1)²) | n_j ≥ 1] with n_j
        ~ Binomial(n, 1/k) (the estimate is unbiased given every n_j ≥ 1, so its variance
        is the mean of the conditional ones)."""
        if parse_integer(n, "n") < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        drawn = Fraction(1, self.k)
        chances = [math.comb(n, m) * drawn**m * (1 - drawn) ** (n - m) for m in range(1, n + 1)]
        mean_inverse = sum(
            (chance / m for m, chance in enumerate(chances, start=1)), Fraction(0)
        ) / sum(chances, Fraction(0))
        return mean_inverse * self.conditional_variance(share, 1)

    @property
    def small_share_variance(self) -> float:
        """One report's variance of a rare option's share (π = 0), n times the variance
        among n as n grows: k·p(1 - p)/(2p - 1)² (n·E[1/n_j | n_j ≥ 1] tends to k)."""
        return float(self.k * self.conditional_variance(Fraction(0), 1))

    @property
    def auto_score(self) -> float:
        """A rare option's variance per report, as for a choice's options."""
        return self.small_share_variance

    def report_range(self) -> tuple[int, int]:
        """The option a report is about: 0 to k - 1 (``check_report``: its bit is 0 or 1)."""
        return 0, self.k - 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n(2p - 1)) on one option's share, n the reports about that option (≈ n/k of
        the question's): swapping one report flips that option's count of b = 1 or moves
        a report to or from it, and either moves its rate by at most 1/n. Other options
        do not move."""
        if parse_integer(n, "n") < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        return 1 / (n * (2 * self.keep_probability - 1))

    def report(self, report: object) -> tuple[int, int]:
        """A report's option and bit, refusing what no honest device sends."""
        if not isinstance(report, (tuple, list)) or len(report) != 2:
            raise ValueError(f"report must be an option index and a bit, got {report!r}")
        index, bit = report
        if isinstance(bit, bool) or bit not in (0, 1):
            raise ValueError(f"report's bit must be 0 or 1, got {report!r}")
        return option(index, self.k, "report"), bit

    def check_report(self, report: Report) -> None:
        """The field checks its digits and the colon: the option must be below k and the
        bit 0 or 1."""
        self.report(report)

    def ticked(self, value: object) -> tuple[int, ...]:
        """An answer: k bits, 1 for each option ticked (all 0: none of them)."""
        if not isinstance(value, (tuple, list)) or len(value) != self.k:
            raise ValueError(f"value must be {self.k} bits (0 or 1), got {value!r}")
        if any(isinstance(bit, bool) or bit not in (0, 1) for bit in value):
            raise ValueError(f"value must be {self.k} bits (0 or 1), got {value!r}")
        return tuple(value)

    def randomize(self, value: Sequence[int], source: RandomSource = SECURE) -> tuple[int, int]:
        """An option drawn uniformly, then its bit kept with p: two exact coins, neither
        of which looks at any other option."""
        ticked = self.ticked(value)
        drawn = uniform_below(self.k, source)
        kept = bernoulli(self.keep_probability, source)
        return drawn, int(bool(ticked[drawn]) == kept)

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """One row (j, b) per answer (shape values.shape[:-1] + (2,)), from answers given
        as rows of k bits."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        ticked = np.asarray(values)
        if ticked.shape[-1:] != (self.k,) or not np.isin(ticked, (0, 1)).all():
            raise ValueError(f"values must be rows of {self.k} bits (0 or 1)")
        drawn = rng.integers(0, self.k, size=ticked.shape[:-1])
        truth = np.take_along_axis(ticked, drawn[..., np.newaxis], axis=-1)[..., 0]
        kept = rng.random(drawn.shape) < float(self.keep_probability)
        return np.stack([drawn, np.where(kept, truth, 1 - truth)], axis=-1).astype(np.int64)

    def probability(self, report: Sequence[int], value: Sequence[int]) -> Fraction:
        """(1/k)·p when the report's bit is the drawn option's truth, (1/k)·(1 - p) if not."""
        index, bit = self.report(report)
        kept = bit == self.ticked(value)[index]
        return (self.keep_probability if kept else 1 - self.keep_probability) / self.k

    def finite_support(self) -> tuple[str, ...]:
        """Every (option, bit), as the browser writes it ("3:1")."""
        return tuple(f"{index}:{bit}" for index in range(self.k) for bit in (0, 1))

    def tally_cells(self) -> tuple[TallyCell, ...]:
        """n, and per option j its reports with b = 0 and with b = 1, named "j:0" and
        "j:1": stored as 2j + b, each counted as storage counts a chosen option
        (``sum(value = 2j + b)``). n_j is their sum, c_j the second."""
        return (
            ANSWERED,
            *(
                TallyCell(f"{index}:{bit}", CellRule.EQUALS, 2 * index + bit)
                for index in range(self.k)
                for bit in (0, 1)
            ),
        )

    def option_counts(self, cells: Mapping[str, int]) -> tuple[list[int], list[int]]:
        """From the tally cells, per option j: n_j, the reports about j ("j:0" + "j:1"),
        and c_j, those of them saying ticked ("j:1"), as ``estimate_ticked`` takes them."""
        ticked = [cells.get(f"{index}:1", 0) for index in range(self.k)]
        about = [cells.get(f"{index}:0", 0) + count for index, count in enumerate(ticked)]
        return about, ticked

    def central_counting(self) -> CentralCounting:
        """A count per (option, bit) in the order of ``tally_cells``; a report is one of
        them, so it moves the 2k counts by 1 in all."""
        return CentralCounting(2 * self.k, partial(_one_of, self.k))

    def export_columns(self, key: str) -> list[str]:
        """The option a report is about and its randomized bit."""
        return [f"{key}.option", f"{key}.ticked"]

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        return list(self.report(self.report_format.load(stored)))

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return (
            f"columns {key}.option and {key}.ticked: {key}.option = the option 0 .. "
            f"{self.k - 1} drawn uniformly at random, {key}.ticked = 1 if reported ticked "
            "(randomized: the truth about that option kept with keep_probability, else "
            "flipped); an option's share is estimated from the rows about it"
        )

    def r_rr_design(self, key: str) -> dict[str, Any]:
        """p1 = p0 = 1 - p: for option j, the rows about it, ``ticked`` the outcome."""
        outcome = f"one option: the rows whose {key}.option is INDEX, the column {key}.ticked"
        return forced_known(*self.exact_rates, outcome)

    def description(self) -> Text:
        return lazy_gettext(
            "One of the options is picked at random, and only whether you ticked it is "
            "stored: the truth with probability %(keep)s, otherwise the opposite.",
            keep=Share(self.keep_probability),
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        """Every option, marked where it is the one picked, then "ticked" and "not
        ticked", one of them marked: the same cells whatever was stored."""
        index, bit = report if isinstance(report, tuple) else (None, None)
        marked: list[tuple[Text | str, bool]] = [
            (text, position == index) for position, text in enumerate(options)
        ]
        return [*marked, (lazy_gettext("ticked"), bit == 1), (lazy_gettext("not ticked"), bit == 0)]


def _one_of(k: int, report: Sequence[int]) -> tuple[int, ...]:
    """A report's counts: 1 in the cell of its option and bit, 2j + b."""
    index, bit = report
    return tuple(int(cell == 2 * index + bit) for cell in range(2 * k))
