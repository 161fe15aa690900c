"""Two-coin randomized response, for yes/no questions (Warner 1965; Dwork & Roth, 3.2).

Each respondent flips a first coin: with probability ``t`` they answer truthfully.
Otherwise a second coin answers for them: "yes" with probability ``f``. Nobody who sees the
reported answer, including the server, can tell which coin produced it, so a "yes" on
record never proves a true "yes". The browser's ``static/mechanisms/two_coin.js`` flips
the same coins; both are tested against the same exact distributions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
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
from ._shares import ShareRates, forced_known, share_influence, summed_share_variance
from .cells import ANSWERED, CellRule, TallyCell
from .central_counting import CentralCounting, where_one
from .interface import MechanismDefaults

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt

MECHANISM_NAME = "two_coin_randomized_response"


@dataclass(frozen=True)
class TwoCoinDesign(ShareRates, MechanismDefaults):
    """The parameters of the two-coin mechanism.

    ``truth_probability`` is t, the chance the first coin says "answer truthfully";
    ``forced_yes_probability`` is f, the chance the second coin says "yes". Fair coins
    (t = f = 1/2) give P(yes | yes) = 3/4, P(yes | no) = 1/4 and so ε = ln 3.

    Either may be a float or a Fraction; a float is used as its exact dyadic value, so the
    coins flipped and the ε reported are exact either way.
    """

    truth_probability: float | Fraction = 0.5
    forced_yes_probability: float | Fraction = 0.5
    name: ClassVar[str] = MECHANISM_NAME
    question_type: ClassVar[QuestionType] = QuestionType.YES_NO
    browser_script: ClassVar[str | None] = "mechanisms/two_coin.js"
    report_format: ClassVar[ReportFormat] = ReportFormat.YES_NO
    respondent_name: ClassVar[Text] = lazy_gettext("Randomized response (two coins)")
    researcher_name: ClassVar[Text] = lazy_gettext("randomized response with two coins")

    @property
    def auto_score(self) -> float:
        """The summed variance of two categories, "yes" and "no" (``auto`` has nothing to
        choose for a yes/no question: this is its only mechanism)."""
        return summed_share_variance(*self.exact_rates, 2)

    def __post_init__(self) -> None:
        # t = 0 would report pure noise (nothing to estimate); t = 1 is no protection.
        for field, value in (
            ("truth_probability", self.truth_probability),
            ("forced_yes_probability", self.forced_yes_probability),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
                raise ValueError(f"{field} must be a number")
            if not 0 < value < 1:
                raise ValueError(f"{field} must lie strictly between 0 and 1")

    @classmethod
    def from_epsilon(cls, epsilon: Fraction | float) -> TwoCoinDesign:
        """The optimal binary design at privacy level ε: f = 1/2, t = (e^ε - 1)/(e^ε + 1).

        t is the float nearest tanh(ε/2), stepped down while needed so the realized ε,
        computed from the exact t, never exceeds the requested ε.
        """
        requested = checked_epsilon(epsilon)

        def worst_ratio(t: Fraction) -> Fraction | None:
            return (1 + t) / (1 - t) if 0 < t < 1 else None

        t = private_probability(math.tanh(float(requested) / 2), 0.0, worst_ratio, requested)
        return cls(truth_probability=t, forced_yes_probability=HALF)

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> TwoCoinDesign:
        """Fair coins (ε = ln 3) without an ε; otherwise the optimal design at that ε."""
        return FAIR_COINS if epsilon is None else cls.from_epsilon(epsilon)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> TwoCoinDesign:
        """The design stored by ``parameters()``."""
        check_mechanism_name(parameters, cls.name)
        return cls(
            truth_probability=parse_fraction(
                required_parameter(parameters, "truth_probability"), "truth_probability"
            ),
            forced_yes_probability=parse_fraction(
                required_parameter(parameters, "forced_yes_probability"), "forced_yes_probability"
            ),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "truth_probability": fraction_text(self._t),
            "forced_yes_probability": fraction_text(self._f),
        }

    @cached_property
    def _t(self) -> Fraction:
        return Fraction(self.truth_probability)

    @cached_property
    def _f(self) -> Fraction:
        return Fraction(self.forced_yes_probability)

    def probability(self, report: bool, value: bool) -> Fraction:
        """P(report | true value), exactly: t·[value] + (1 - t)·f for a reported "yes"."""
        yes = _yes_no(value, "value") * self._t + (1 - self._t) * self._f
        return yes if _yes_no(report, "report") else 1 - yes

    @property
    def p_yes_given_yes(self) -> float:
        """Chance that a true "yes" is reported as "yes": t + (1 - t) f."""
        return float(self.probability(True, True))

    @property
    def p_yes_given_no(self) -> float:
        """Chance that a true "no" is reported as "yes": (1 - t) f."""
        return float(self.probability(True, False))

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]:
        """(t + (1 - t)f, (1 - t)f): a yes reported as yes, a no reported as yes."""
        return self.probability(True, True), self.probability(True, False)

    @property
    def epsilon(self) -> float:
        """The mechanism's ε: the largest log-ratio of the two answers' report chances.

        Both reports must be checked: with f ≠ 1/2 the "no" report can be the more
        revealing one.
        """
        p1, p0 = self.probability(True, True), self.probability(True, False)
        return epsilon_of_ratio(max(p1 / p0, (1 - p0) / (1 - p1)))

    @property
    def is_fair(self) -> bool:
        """Whether both coins are fair, the design used when no ε is given."""
        return self.truth_probability == HALF and self.forced_yes_probability == HALF

    def report_range(self) -> tuple[int, int]:
        """A report is "no" (0) or "yes" (1)."""
        return 0, 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n·t): p_true - p_false = t, the chance the first coin keeps the truth."""
        return share_influence(*self.exact_rates, n)

    def randomize(self, value: bool, source: RandomSource = SECURE) -> bool:
        """Report one yes/no answer through the two coins; the result is safe to store."""
        truth = _yes_no(value, "value")
        if bernoulli(self._t, source):
            return truth
        return bernoulli(self._f, source)

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.bool_]:
        """Each report the truth with probability t, otherwise "yes" with probability f."""
        import numpy as np  # here only: see the module's TYPE_CHECKING note

        answers = np.asarray(values)
        if answers.dtype != np.bool_:
            if not np.isin(answers, (0, 1)).all():
                raise ValueError("true_answers must be booleans (or 0/1)")
            answers = answers.astype(np.bool_)
        truthful = rng.random(answers.shape) < float(self.truth_probability)
        forced_yes = rng.random(answers.shape) < float(self.forced_yes_probability)
        return np.where(truthful, answers, forced_yes)

    def finite_support(self) -> tuple[str, ...]:
        return ("yes", "no")

    def tally_cells(self) -> tuple[TallyCell, ...]:
        """n, and the reported "yes"."""
        return (ANSWERED, TallyCell("yes", CellRule.SUM))

    def central_counting(self) -> CentralCounting:
        """One count, the reported "yes"; a report moves it by at most 1."""
        return CentralCounting(1, where_one)

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return "1 = reported yes, 0 = reported no (randomized)"

    def r_rr_design(self, key: str) -> dict[str, Any]:
        """p = t, p1 = (1 - t)f, p0 = (1 - t)(1 - f)."""
        return forced_known(*self.exact_rates, None)

    def description(self) -> Text:
        return lazy_gettext(
            "Your real answer is used with probability %(truth)s. Otherwise a coin answers "
            "for you, and it says “yes” with probability %(yes)s.",
            truth=Share(self._t),
            yes=Share(self._f),
        )

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]:
        return [(lazy_gettext("yes"), report is True), (lazy_gettext("no"), report is False)]


FAIR_COINS = TwoCoinDesign()


def _yes_no(value: object, what: str) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, int) and value in (0, 1):  # numpy and 0/1 ints from simulations
        return bool(value)
    raise ValueError(f"{what} must be a yes/no answer (True or False), got {value!r}")


def randomize(true_answer: bool, design: TwoCoinDesign = FAIR_COINS) -> bool:
    """Report one yes/no answer through the two coins; the result is safe to store."""
    return design.randomize(true_answer)


def randomize_answers(
    true_answers: Mapping[str, bool], design: TwoCoinDesign = FAIR_COINS
) -> dict[str, bool]:
    """Randomize every answer of one response independently, each with fresh coins."""
    return {key: randomize(answer, design) for key, answer in true_answers.items()}


def survey_epsilon(question_count: int, design: TwoCoinDesign = FAIR_COINS) -> float:
    """Total privacy cost for one respondent answering every question (basic composition).

    k answers, each ε-DP with independent coins, are k·ε-DP together; shown to the
    respondent so they know the survey's whole cost, not only one question's.
    """
    return question_count * design.epsilon
