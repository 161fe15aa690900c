"""The two-coin randomized response (Warner 1965; Dwork & Roth, section 3.2).

Each respondent flips a first coin: with probability ``t`` they answer truthfully.
Otherwise a second coin answers for them: "yes" with probability ``f``. Nobody who sees
the reported answer, including the server, can tell which coin produced it, so a "yes" on
record never proves a true "yes".

This module is the one place on the server that decides how answers are randomized; the
browser's ``static/randomize.js`` implements the same mechanism and both are tested
against the same expected distribution.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

MECHANISM_NAME = "two_coin_randomized_response"


@dataclass(frozen=True)
class TwoCoinDesign:
    """The parameters of the two-coin mechanism.

    ``truth_probability`` is t, the chance the first coin says "answer truthfully";
    ``forced_yes_probability`` is f, the chance the second coin says "yes". Fair coins
    (t = f = 1/2) give P(yes | yes) = 3/4, P(yes | no) = 1/4 and so ε = ln 3.
    """

    truth_probability: float = 0.5
    forced_yes_probability: float = 0.5

    def __post_init__(self) -> None:
        # t = 0 would report pure noise (nothing to estimate); t = 1 is no protection.
        if not 0 < self.truth_probability < 1:
            raise ValueError("truth_probability must lie strictly between 0 and 1")
        if not 0 < self.forced_yes_probability < 1:
            raise ValueError("forced_yes_probability must lie strictly between 0 and 1")

    @classmethod
    def from_epsilon(cls, epsilon: float) -> TwoCoinDesign:
        """The optimal binary design at privacy level ε: f = 1/2, t = (e^ε - 1)/(e^ε + 1)."""
        if not epsilon > 0 or math.isinf(epsilon):
            raise ValueError("epsilon must be a positive finite number")
        return cls(truth_probability=math.tanh(epsilon / 2), forced_yes_probability=0.5)

    @property
    def p_yes_given_yes(self) -> float:
        """Chance that a true "yes" is reported as "yes": t + (1 - t) f."""
        t, f = self.truth_probability, self.forced_yes_probability
        return t + (1 - t) * f

    @property
    def p_yes_given_no(self) -> float:
        """Chance that a true "no" is reported as "yes": (1 - t) f."""
        return (1 - self.truth_probability) * self.forced_yes_probability

    @property
    def epsilon(self) -> float:
        """The mechanism's ε: the largest log-ratio of the two answers' report chances.

        Both reports must be checked: with f ≠ 1/2 the "no" report can be the more
        revealing one.
        """
        yes_ratio = self.p_yes_given_yes / self.p_yes_given_no
        no_ratio = (1 - self.p_yes_given_no) / (1 - self.p_yes_given_yes)
        return math.log(max(yes_ratio, no_ratio))

    @property
    def is_fair(self) -> bool:
        """Whether both coins are fair, the only design the browser script implements."""
        return self.truth_probability == 0.5 and self.forced_yes_probability == 0.5


FAIR_COINS = TwoCoinDesign()


def _secure_bernoulli(probability: float) -> bool:
    """True with exactly the given probability, from the OS's secure random source.

    A float is a dyadic fraction p/2^k, so comparing ``randbelow(2^k)`` with ``p`` is
    exact: no floating-point rounding shifts the coin (cf. Mironov 2012).
    """
    numerator, denominator = probability.as_integer_ratio()
    return secrets.randbelow(denominator) < numerator


def randomize(true_answer: bool, design: TwoCoinDesign = FAIR_COINS) -> bool:
    """Report one yes/no answer through the two coins; the result is safe to store."""
    if _secure_bernoulli(design.truth_probability):
        return true_answer
    return _secure_bernoulli(design.forced_yes_probability)


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
