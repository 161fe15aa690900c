"""Generalized randomized response, for choosing one of k options (Wang et al. 2017).

Keep the true option with probability p, else report one of the other k - 1 uniformly.
The count of each option is Binomial(n, q + (p - q)·π_j), so every option's share is
estimated exactly like a yes/no prevalence (``estimate.estimate_proportion``). It sends one
option and beats unary encoding for few options (``choosing`` decides).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..coins import SECURE, RandomSource, bernoulli, uniform_below
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
from ..words import Share, Text, lazy_gettext, lazy_ngettext
from ._shares import (
    ShareRates,
    check_k,
    forced_known,
    option,
    option_cells,
    option_index_support,
    option_texts,
    share_influence,
    simulated_options,
)
from .cells import TallyCell
from .central_counting import CentralCounting
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class GeneralizedRandomizedResponse(ShareRates, MechanismDefaults):
    """k-ary randomized response: keep the true option with ``keep_probability`` p, else
    report one of the other k - 1 uniformly, each with q = (1 - p)/(k - 1). ε = ln(p/q).
    """

    k: int
    keep_probability: Fraction
    name: ClassVar[str] = "generalized_randomized_response"
    file_name: ClassVar[str | None] = "grr"
    question_type: ClassVar[QuestionType] = QuestionType.CHOICE
    browser_script: ClassVar[str | None] = "mechanisms/grr.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.OPTION
    respondent_name: ClassVar[Text] = lazy_gettext("Randomized choice")
    researcher_name: ClassVar[Text] = lazy_gettext("generalized randomized response")
    builder_label: ClassVar[Text | None] = lazy_gettext("grr: generalized randomized response")

    def __post_init__(self) -> None:
        check_k(self.k)
        if not isinstance(self.keep_probability, Fraction):
            raise ValueError("keep_probability must be a Fraction")
        # p ≤ 1/k would make the true option no likelier than any other: nothing to estimate.
        if not Fraction(1, self.k) < self.keep_probability < 1:
            raise ValueError("keep_probability must lie strictly between 1/k and 1")

    @classmethod
    def from_epsilon(cls, k: int, epsilon: Fraction | float) -> GeneralizedRandomizedResponse:
        """p = e^ε/(e^ε + k - 1), the float rounded down until the realized ε ≤ requested."""
        k = check_k(k)
        requested = checked_epsilon(epsilon)

        def worst_ratio(p: Fraction) -> Fraction | None:
            return p * (k - 1) / (1 - p) if Fraction(1, k) < p < 1 else None

        start = 1 / (1 + (k - 1) * math.exp(-float(requested)))
        return cls(k, private_probability(start, 0.0, worst_ratio, requested))

    @classmethod
    def for_answers(
        cls, space: AnswerSpace, epsilon: Fraction | None
    ) -> GeneralizedRandomizedResponse:
        if epsilon is None:
            raise ValueError("a choice mechanism needs an ε")
        return cls.from_epsilon(space.options, epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> GeneralizedRandomizedResponse:
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
    def other_probability(self) -> Fraction:
        """q: the chance of reporting one particular other option."""
        return (1 - self.keep_probability) / (self.k - 1)

    @property
    def epsilon(self) -> float:
        return epsilon_of_ratio(self.keep_probability / self.other_probability)

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]:
        return self.keep_probability, self.other_probability

    def report_range(self) -> tuple[int, int]:
        """An option's index: 0 to k - 1."""
        return 0, self.k - 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n(p - q)) on two options at once: the one reported and the one not."""
        return share_influence(*self.exact_rates, n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        truth = option(value, self.k)
        if bernoulli(self.keep_probability, source):
            return truth
        other = uniform_below(self.k - 1, source)  # skip the true index
        return other if other < truth else other + 1

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """The true option with p, else one of the other k - 1 uniformly."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        truth = simulated_options(values, self.k)
        keep = rng.random(truth.shape) < float(self.keep_probability)
        other = rng.integers(0, self.k - 1, size=truth.shape)
        other = other + (other >= truth)  # skip the true index
        return np.where(keep, truth, other)

    def probability(self, report: int, value: int) -> Fraction:
        same = option(report, self.k, "report") == option(value, self.k)
        return self.keep_probability if same else self.other_probability

    def finite_support(self) -> tuple[str, ...]:
        return option_index_support(self.k)

    def tally_cells(self) -> tuple[TallyCell, ...]:
        return option_cells(self.k)

    def central_counting(self) -> CentralCounting:
        """A count per option, the reports of it; a report is one option, so it moves
        them by 1 in all."""
        return CentralCounting(self.k, partial(_one_hot, self.k))

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        """The reported option's text."""
        return [options[int(stored)]]

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return "the reported option (randomized: the true one with keep_probability)"

    def r_rr_design(self, key: str) -> dict[str, Any]:
        """p1 = q, p0 = 1 - p: one option against the rest."""
        outcome = (
            f"one option against the rest: as.integer(d${key} == OPTION), OPTION the option "
            "as the CSV writes it (the codebook's csv_levels)"
        )
        return forced_known(*self.exact_rates, outcome)

    def description(self) -> Text:
        return lazy_ngettext(
            "Your real choice is kept with probability %(keep)s. Otherwise the other "
            "option is stored instead.",
            "Your real choice is kept with probability %(keep)s. Otherwise one of the "
            "other %(num)d options is picked at random and stored instead.",
            self.k - 1,
            keep=Share(self.keep_probability),
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return option_texts(report, options)


def _one_hot(k: int, report: int) -> tuple[int, ...]:
    """A reported option's counts: 1 for it, 0 for every other."""
    return tuple(int(report == option) for option in range(k))
