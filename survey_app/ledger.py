"""The privacy ledger: every question's mechanism, exact parameters and ε, in numbers and
in words a respondent can follow.

One source for the survey page (before anyone answers), the thank-you page, the codebook
and ``survey-app ledger``, so they cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .surveys import Question, Survey


@dataclass(frozen=True)
class LedgerEntry:
    key: str
    text: str
    type: str
    sensitive: bool
    mechanism: str
    parameters: dict[str, Any]
    epsilon: float  # from the exact parameters; 0 for a plain question
    how: str  # what happens to the answer, in plain words

    @property
    def odds(self) -> float:
        """e^ε: how many times likelier any stored report can be under one true answer
        than under another. The plain-words reading of ε."""
        return math.exp(self.epsilon)


def survey_ledger(survey: Survey) -> list[LedgerEntry]:
    return [
        LedgerEntry(
            key=q.key,
            text=q.text,
            type=q.type,
            sensitive=q.sensitive,
            mechanism=q.mechanism.name,
            parameters=q.mechanism.parameters(),
            epsilon=q.epsilon,
            how=plain_description(q),
        )
        for q in survey.questions
    ]


def odds_text(epsilon: float) -> str:
    """e^ε for reading: "3.0" for ln 3, "1,097" for a large total."""
    odds = math.exp(epsilon)
    return f"{odds:.1f}" if odds < 100 else f"{odds:,.0f}"


def _share(value: Fraction) -> str:
    """A probability as a percentage a respondent reads at a glance (e.g. 73%)."""
    percent = float(100 * value)
    return f"{percent:.0f}%" if percent >= 1 else f"{percent:.2f}%"


def plain_description(question: Question) -> str:
    """What the mechanism does to this question's answer, in one or two plain sentences."""
    if not question.sensitive:
        return "Stored exactly as you give it: answer only if you are happy with that."
    params = question.mechanism.parameters()
    name = params["mechanism"]
    if name == "two_coin_randomized_response":
        t = Fraction(str(params["truth_probability"]))
        f = Fraction(str(params["forced_yes_probability"]))
        return (
            f"Your real answer is used with probability {_share(t)}; otherwise a coin answers "
            f"for you (“yes” with probability {_share(f)})."
        )
    if name == "generalized_randomized_response":
        keep = Fraction(str(params["keep_probability"]))
        others = int(str(params["k"])) - 1
        return (
            f"Your real choice is kept with probability {_share(keep)}; otherwise one of the "
            f"other {others} options is picked at random instead."
        )
    if name == "optimized_unary_encoding":
        flip = Fraction(str(params["flip_to_one_probability"]))
        return (
            "Every option is marked or left unmarked at random: your real choice is marked "
            f"with probability 50%, every other option with probability {_share(flip)}."
        )
    if name == "discrete_laplace":
        alpha = math.exp(-Fraction(str(params["gamma"])))
        typical = 2 * alpha / (1 - alpha * alpha)  # E|Z| for two-sided geometric noise
        return (
            "A random whole number is added to your answer before it is stored "
            f"(on average about ±{typical:.1f}, sometimes much more)."
        )
    if name == "duchi_binary":
        return (
            "Only “high” or “low” is stored, chosen at random with a slight lean towards "
            "the end of the range your number is closer to."
        )
    raise ValueError(f"no description for mechanism {name!r}")
