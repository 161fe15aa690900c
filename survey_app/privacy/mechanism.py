"""The mechanism interface, the two-coin randomized response, and the registry of mechanisms.

Two-coin randomized response (Warner 1965; Dwork & Roth, section 3.2): each respondent
flips a first coin: with probability ``t`` they answer truthfully. Otherwise a second coin
answers for them: "yes" with probability ``f``. Nobody who sees the reported answer,
including the server, can tell which coin produced it, so a "yes" on record never proves a
true "yes".

This package is the one place on the server that decides how answers are randomized; the
browser's ``static/randomize.js`` implements the same mechanisms and both are tested
against the same expected distributions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar, Protocol

from .choice import (
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    PlainChoice,
    share_influence,
)
from .coins import HALF, SECURE, RandomSource, bernoulli
from .number import DiscreteLaplace, DuchiBinary, PlainNumber
from .rationals import (
    check_mechanism_name,
    checked_epsilon,
    epsilon_of_ratio,
    fraction_text,
    parse_fraction,
    private_probability,
    required_parameter,
)

MECHANISM_NAME = "two_coin_randomized_response"


class Mechanism(Protocol):
    """What every mechanism offers: its exact parameters, its sampler, its ε.

    ``probability(report, value)`` is the exact chance of ``report`` given the true
    ``value`` (a Fraction; discrete Laplace's pmf is a float), for the audit and the tests.
    Each mechanism also has a classmethod ``from_parameters``, the inverse of
    ``parameters()``; ``mechanism_from_parameters`` picks the right one.

    ``report_range()``: the least and greatest report (each bit, for unary encoding) an
    honest device sends, except with probability below 2^-60; the server refuses the rest.
    ``report_influence(n)``: the most one report in that range moves the question's
    unbiased estimate (a share, or a mean) among n reports, exactly (DESIGN.md, "Forged
    reports").
    """

    @property
    def name(self) -> str: ...

    @property
    def epsilon(self) -> float: ...

    def parameters(self) -> dict[str, object]: ...

    def randomize(self, value: Any, source: RandomSource = ...) -> Any: ...

    def probability(self, report: Any, value: Any) -> Fraction | float: ...

    def report_range(self) -> tuple[int, int]: ...

    def report_influence(self, n: int) -> Fraction: ...


class ProportionMechanism(Mechanism, Protocol):
    """A mechanism whose report count per category is Binomial(n, p_false + (p_true - p_false)π).

    ``small_share_variance``: one report's variance of the unbiased share estimate at π = 0.
    """

    @property
    def p_true(self) -> float: ...

    @property
    def p_false(self) -> float: ...

    @property
    def small_share_variance(self) -> float: ...


class NumericMechanism(Mechanism, Protocol):
    """A mechanism for integers in [min, max] with value_offset + value_scale·report unbiased.

    ``worst_case_variance``: one unbiased report's largest variance over all answer
    distributions on [min, max] (for planning). ``worst_answer_variance``: its largest
    variance given one true answer, the mechanism's noise alone (for choosing).
    """

    @property
    def min(self) -> int: ...

    @property
    def max(self) -> int: ...

    @property
    def value_offset(self) -> float: ...

    @property
    def value_scale(self) -> float: ...

    @property
    def worst_case_variance(self) -> float: ...

    @property
    def worst_answer_variance(self) -> float: ...


@dataclass(frozen=True)
class TwoCoinDesign:
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
    def p_true(self) -> float:
        return self.p_yes_given_yes

    @property
    def p_false(self) -> float:
        return self.p_yes_given_no

    @property
    def small_share_variance(self) -> float:
        p0, slope = self.probability(True, False), self._t
        return float(p0 * (1 - p0) / slope**2)

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
        return share_influence(self.probability(True, True), self.probability(True, False), n)

    def randomize(self, value: bool, source: RandomSource = SECURE) -> bool:
        """Report one yes/no answer through the two coins; the result is safe to store."""
        truth = _yes_no(value, "value")
        if bernoulli(self._t, source):
            return truth
        return bernoulli(self._f, source)


FAIR_COINS = TwoCoinDesign()


def _yes_no(value: object, what: str) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, int) and value in (0, 1):  # numpy and 0/1 ints from simulations
        return bool(value)
    raise ValueError(f"{what} must be a yes/no answer (True or False), got {value!r}")


def _secure_bernoulli(probability: float) -> bool:
    """True with exactly the given probability (a float is an exact dyadic fraction)."""
    return bernoulli(Fraction(probability))


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


_BY_NAME: dict[str, Any] = {
    TwoCoinDesign.name: TwoCoinDesign,
    GeneralizedRandomizedResponse.name: GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding.name: OptimizedUnaryEncoding,
    DiscreteLaplace.name: DiscreteLaplace,
    DuchiBinary.name: DuchiBinary,
}
MECHANISM_NAMES = (*_BY_NAME, "none")


def mechanism_from_parameters(parameters: Mapping[str, object]) -> Mechanism:
    """The mechanism a stored ``parameters()`` dict describes.

    "none" (a plain question) is a choice when the dict carries ``k`` and a number when it
    carries ``min`` and ``max``.
    """
    name = parameters.get("mechanism")
    if name == "none":
        if "k" in parameters:
            return PlainChoice.from_parameters(parameters)
        if "min" in parameters and "max" in parameters:
            return PlainNumber.from_parameters(parameters)
        raise ValueError("parameters of mechanism 'none' need 'k' or 'min' and 'max'")
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(MECHANISM_NAMES)}")
    mechanism: Mechanism = _BY_NAME[name].from_parameters(parameters)
    return mechanism
