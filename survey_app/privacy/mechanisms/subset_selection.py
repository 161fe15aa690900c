"""Subset selection, for choosing one of k options (Wang et al. 2016; Ye & Barg 2018).

The report is a set of ω of the k options: the true option is in it with probability p,
and the rest of it is drawn uniformly from the other k - 1 options. Every set holding the
true option is then equally likely, and so is every set without it:

    P(Y | x) = p / C(k-1, ω-1) if x ∈ Y,   (1 - p) / C(k-1, ω) if x ∉ Y,

so the worst likelihood ratio, one set against two answers (one in it, one not), is
p·C(k-1, ω)/((1 - p)·C(k-1, ω-1)) = p(k - ω)/((1 - p)ω), and ε is its logarithm, from the
exact p sampled. An option j other than the truth is in the set with q = (ω - p)/(k - 1),
so each option's count is Binomial(n, q + (p - q)·π_j) and its share is estimated exactly
like GRR's (``estimate.estimate_proportion``, ``shares.estimate_choice``). The counts of
one report sum to ω, not 1, which changes nothing for the per-option estimates.

ω = 1 is GRR. At p = ωe^ε/(ωe^ε + k - ω) (the most accurate p at ε) the variance of a rare
option's share is smallest near ω = k/(e^ε + 1) (Ye & Barg 2018, order-optimal in every
regime); ``best_for`` finds the best ω by that exact variance, as ``auto`` compares
mechanisms.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..coins import SECURE, RandomSource, bernoulli, uniform_subset
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
from ._shares import (
    ShareRates,
    check_k,
    forced_known,
    option,
    share_influence,
    share_variance,
    simulated_options,
)
from .cells import ANSWERED, CellRule, TallyCell
from .central_counting import CentralCounting
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt

#: The audit compares every possible set, C(k, ω) reports: up to this many.
MAX_AUDITED_SETS = 4096


@dataclass(frozen=True)
class SubsetSelection(ShareRates, MechanismDefaults):
    """A set of ``size`` (ω) of the k options: the true option is in it with
    ``include_probability`` p, the rest drawn uniformly from the other options.

    ε = ln(p(k - ω)/((1 - p)ω)); another option is in the set with q = (ω - p)/(k - 1).
    """

    k: int
    size: int
    include_probability: Fraction
    name: ClassVar[str] = "subset_selection"
    file_name: ClassVar[str | None] = "subset"
    question_type: ClassVar[QuestionType] = QuestionType.CHOICE
    browser_script: ClassVar[str | None] = "mechanisms/subset_selection.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.SUBSET
    respondent_name: ClassVar[Text] = lazy_gettext("Randomly chosen set of options")
    researcher_name: ClassVar[Text] = lazy_gettext("subset selection")
    builder_label: ClassVar[Text | None] = lazy_gettext("subset: subset selection")

    def __post_init__(self) -> None:
        check_k(self.k)
        _check_size(self.size, self.k)
        if not isinstance(self.include_probability, Fraction):
            raise ValueError("include_probability must be a Fraction")
        # p ≤ ω/k would put the true option in the set no more often than any other
        # (q = (ω - p)/(k - 1) ≥ p): nothing to estimate.
        if not Fraction(self.size, self.k) < self.include_probability < 1:
            raise ValueError("include_probability must lie strictly between size/k and 1")

    @classmethod
    def from_epsilon(cls, k: int, epsilon: Fraction | float, size: int) -> SubsetSelection:
        """p = ωe^ε/(ωe^ε + k - ω), the float rounded down until the realized ε ≤ requested.

        Written 1/(1 + ((k - ω)/ω)e^(-ε)), which for ω = 1 is GRR's float exactly, so the
        two agree to the last bit there.
        """
        k = check_k(k)
        size = _check_size(size, k)
        requested = checked_epsilon(epsilon)

        def worst_ratio(p: Fraction) -> Fraction | None:
            return _worst_ratio(k, size, p) if Fraction(size, k) < p < 1 else None

        start = 1 / (1 + (k - size) * math.exp(-float(requested)) / size)
        return cls(k, size, private_probability(start, 0.0, worst_ratio, requested))

    @classmethod
    def best_for(cls, k: int, epsilon: Fraction | float) -> SubsetSelection:
        """The set size with the smallest summed variance of the shares at ε (``auto``'s
        criterion), every ω from 1 to k - 1 tried; ties to the smaller ω."""
        k = check_k(k)
        built = (cls.from_epsilon(k, epsilon, size) for size in range(1, k))
        return min(built, key=lambda mechanism: mechanism.auto_score)

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> SubsetSelection:
        if epsilon is None:
            raise ValueError("a choice mechanism needs an ε")
        return cls.best_for(space.options, epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> SubsetSelection:
        check_mechanism_name(parameters, cls.name)
        k = check_k(required_parameter(parameters, "k"))
        return cls(
            k=k,
            size=_check_size(required_parameter(parameters, "size"), k),
            include_probability=parse_fraction(
                required_parameter(parameters, "include_probability"), "include_probability"
            ),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "k": self.k,
            "size": self.size,
            "include_probability": fraction_text(self.include_probability),
        }

    @property
    def other_probability(self) -> Fraction:
        """q: the chance that one particular other option is in the set.

        p(ω - 1)/(k - 1) + (1 - p)ω/(k - 1): the set's other members are uniform among
        the k - 1 other options, ω - 1 of them when the truth is in, else ω.
        """
        return (self.size - self.include_probability) / (self.k - 1)

    @property
    def worst_ratio(self) -> Fraction:
        """p(k - ω)/((1 - p)ω): one set's chance given an answer in it over its chance
        given an answer not in it (answers both in it or both out give 1)."""
        return _worst_ratio(self.k, self.size, self.include_probability)

    @property
    def epsilon(self) -> float:
        return epsilon_of_ratio(self.worst_ratio)

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]:
        return self.include_probability, self.other_probability

    @property
    def pair_rates(self) -> tuple[Fraction, Fraction]:
        """Two options both in the set. One of them the truth: it is in (p) and the other
        is one of the ω - 1 drawn from the k - 1 others, p(ω - 1)/(k - 1). Neither: both
        among the ω - 1 (truth in) or ω (truth out) drawn from the k - 1 others, which
        holds two given ones with chance m(m - 1)/((k - 1)(k - 2)) for m drawn."""
        k, size, p = self.k, self.size, self.include_probability
        with_truth = p * (size - 1) / (k - 1)
        if k == 2:
            return with_truth, Fraction(0)  # two options: one of them is always the truth
        neither = p * (size - 1) * (size - 2) + (1 - p) * size * (size - 1)
        return with_truth, neither / ((k - 1) * (k - 2))

    def share_variance(self, share: Fraction) -> Fraction:
        """One report's exact variance of an option's unbiased share estimate when its
        true share is ``share``: λ(1 - λ)/(p - q)², λ = q + (p - q)·share."""
        return share_variance(*self.exact_rates, share)

    def report_range(self) -> tuple[int, int]:
        """Each index in the set: 0 to k - 1 (``members`` also checks there are ω, distinct)."""
        return 0, self.k - 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n(p - q)) on every option at once: a report counts once or not at all for
        each, and a set of ω moves ω counts (and, through n, every share)."""
        return share_influence(*self.exact_rates, n)

    def members(self, report: object) -> tuple[int, ...]:
        """A report's options, refusing anything an honest device cannot send: exactly ω
        distinct indexes in 0..k-1, in increasing order."""
        if not isinstance(report, (tuple, list)):
            raise ValueError(f"report must be a set of {self.size} option indexes, got {report!r}")
        indexes = tuple(option(index, self.k, "report") for index in report)
        if len(indexes) != self.size or any(a >= b for a, b in itertools.pairwise(indexes)):
            raise ValueError(
                f"report must be {self.size} distinct option indexes in increasing order, "
                f"got {report!r}"
            )
        return indexes

    def check_report(self, report: Report) -> None:
        """A posted set's field checks only its digits and commas: ``members`` refuses a
        set of the wrong size, with an index repeated, out of order or past the last."""
        self.members(report)

    def randomize(self, value: int, source: RandomSource = SECURE) -> tuple[int, ...]:
        """The true option with probability p, then the rest of the set (ω - 1 or ω
        options) uniformly from the other k - 1, every coin exact."""
        truth = option(value, self.k)
        included = int(bernoulli(self.include_probability, source))
        drawn = uniform_subset(self.k - 1, self.size - included, source)
        others = (index if index < truth else index + 1 for index in drawn)  # skip the truth
        return tuple(sorted((truth,) * included + tuple(others)))

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """One sorted row of ω indexes per value (shape values.shape + (ω,)): the truth
        with p, the rest the first of a uniform random order of the other k - 1."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        truth = simulated_options(values, self.k)
        include = rng.random(truth.shape) < float(self.include_probability)
        order = np.argsort(rng.random((*truth.shape, self.k - 1)), axis=-1)
        others = order + (order >= truth[..., np.newaxis])  # skip the true index
        with_truth = np.concatenate([truth[..., np.newaxis], others[..., : self.size - 1]], axis=-1)
        sets = np.where(include[..., np.newaxis], with_truth, others[..., : self.size])
        return np.sort(sets, axis=-1).astype(np.int64)

    def probability(self, report: Sequence[int], value: int) -> Fraction:
        """p/C(k-1, ω-1) for a set holding the true option, (1 - p)/C(k-1, ω) otherwise."""
        truth = option(value, self.k)
        if truth in self.members(report):
            return self.include_probability / math.comb(self.k - 1, self.size - 1)
        return (1 - self.include_probability) / math.comb(self.k - 1, self.size)

    def finite_support(self) -> tuple[str, ...]:
        """Every set of ω options, as the browser writes it ("0,3,5")."""
        if math.comb(self.k, self.size) > MAX_AUDITED_SETS:
            raise ValueError(f"the audit tests at most {MAX_AUDITED_SETS} sets of options")
        return tuple(
            ReportFormat.SUBSET.audit_key(chosen)
            for chosen in itertools.combinations(range(self.k), self.size)
        )

    def tally_cells(self) -> tuple[TallyCell, ...]:
        """n, and per option the reports whose set holds it."""
        return (ANSWERED, *(TallyCell(str(i), CellRule.MEMBER, i) for i in range(self.k)))

    def central_counting(self) -> CentralCounting:
        """A count per option, the reports whose set holds it; a report holds ω options,
        so it moves the counts by ω in all."""
        return CentralCounting(self.k, partial(_member_counts, self.k), self.size)

    def export_columns(self, key: str) -> list[str]:
        """A column per option, ``key.index``, as for unary encoding."""
        return [f"{key}.{index}" for index in range(self.k)]

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        """1 for each option in the reported set, 0 for the others."""
        return list(_member_counts(self.k, self.members(self.report_format.load(stored))))

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return (
            f"columns {key}.0 .. {key}.{self.k - 1}: 1 = option in the reported set of "
            f"{self.size} (randomized: the true option is in it with include_probability)"
        )

    def r_rr_design(self, key: str) -> dict[str, Any]:
        """p1 = q, p0 = 1 - p: one option against the rest, from its column."""
        outcome = f"one option against the rest: the column {key}.INDEX (0 or 1)"
        return forced_known(*self.exact_rates, outcome)

    def description(self) -> Text:
        # Two messages, not a plural: the set's size must show in languages with one form.
        keep = Share(self.include_probability)
        if self.size == 1:
            return lazy_gettext(
                "One option is stored: your real choice with probability %(keep)s, otherwise "
                "one of the others picked at random.",
                keep=keep,
            )
        return lazy_gettext(
            "A set of %(num)d options is stored. Your real choice is in it with probability "
            "%(keep)s; the other options in it are picked at random.",
            num=self.size,
            keep=keep,
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        """Every option, marked where it is in the stored set."""
        chosen = report if isinstance(report, tuple) else ()
        return [(text, index in chosen) for index, text in enumerate(options)]


def _check_size(size: object, k: int) -> int:
    """ω: at least 1, below k (a set of all k options would say nothing)."""
    size = parse_integer(size, "size (the options in each reported set)")
    if not 1 <= size < k:
        raise ValueError(f"size must be 1 to {k - 1} for {k} options, got {size}")
    return size


def _worst_ratio(k: int, size: int, p: Fraction) -> Fraction:
    return p * (k - size) / ((1 - p) * size)


def _member_counts(k: int, report: Sequence[int]) -> tuple[int, ...]:
    """A set's counts: 1 for each option in it."""
    chosen = set(report)
    return tuple(int(index in chosen) for index in range(k))
