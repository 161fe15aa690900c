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

from .i18n import format_decimal, format_percent, ngettext
from .i18n import gettext as _
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


def epsilon_text(epsilon: float) -> str:
    """ε as the pages show it: two decimals, in the page's locale ("1.10")."""
    return format_decimal(epsilon, format="#,##0.00")


def odds_text(epsilon: float) -> str:
    """e^ε for reading, in the page's locale: "3.0" for ln 3, "1,097" for a large total."""
    odds = math.exp(epsilon)
    return format_decimal(odds, format="#,##0.0" if odds < 100 else "#,##0")


def _share(value: Fraction) -> str:
    """A probability as a percentage a respondent reads at a glance (e.g. 73%)."""
    return format_percent(float(value), format="#,##0%" if value >= 0.01 else "#,##0.00%")


def method_name(question: Question) -> str:
    """The mechanism's name in plain words, for respondents (not its stored identifier)."""
    if not question.sensitive:
        return _("Not randomized")
    names = {
        "two_coin_randomized_response": _("Randomized response (two coins)"),
        "generalized_randomized_response": _("Randomized choice"),
        "optimized_unary_encoding": _("Randomly marked options"),
        "discrete_laplace": _("Random noise added to the number"),
        "duchi_binary": _("Number stored as “high” or “low” at random"),
    }
    return names[question.mechanism.name]


def plain_description(question: Question) -> str:
    """What the mechanism does to this question's answer, in one or two whole sentences a
    translator can make natural: numbers are named placeholders, never joined fragments."""
    if not question.sensitive:
        return _("Stored exactly as you give it: answer only if you are happy with that.")
    params = question.mechanism.parameters()
    name = params["mechanism"]
    if name == "two_coin_randomized_response":
        return _(
            "Your real answer is used with probability %(truth)s. Otherwise a coin answers "
            "for you, and it says “yes” with probability %(yes)s.",
            truth=_share(Fraction(str(params["truth_probability"]))),
            yes=_share(Fraction(str(params["forced_yes_probability"]))),
        )
    if name == "generalized_randomized_response":
        others = int(str(params["k"])) - 1
        return ngettext(
            "Your real choice is kept with probability %(keep)s. Otherwise the other "
            "option is stored instead.",
            "Your real choice is kept with probability %(keep)s. Otherwise one of the "
            "other %(num)d options is picked at random and stored instead.",
            others,
            keep=_share(Fraction(str(params["keep_probability"]))),
        )
    if name == "optimized_unary_encoding":
        return _(
            "Every option is marked or left unmarked at random. Your real choice is marked "
            "with probability %(real)s, and every other option with probability %(other)s.",
            real=_share(Fraction(str(params["one_probability"]))),
            other=_share(Fraction(str(params["flip_to_one_probability"]))),
        )
    if name == "discrete_laplace":
        alpha = math.exp(-Fraction(str(params["gamma"])))
        typical = 2 * alpha / (1 - alpha * alpha)  # E|Z| for two-sided geometric noise
        return _(
            "A random whole number is added to your answer before it is stored. On average "
            "it is about %(typical)s either way, and sometimes much more.",
            typical=format_decimal(typical, format="#,##0.0"),
        )
    if name == "duchi_binary":
        return _(
            "Only “high” or “low” is stored. It is chosen at random, leaning slightly "
            "towards the end of the range your number is closer to."
        )
    raise ValueError(f"no description for mechanism {name!r}")
