"""The privacy ledger: every question's mechanism, exact parameters and ε, in numbers and
in words a respondent can follow.

One source for the survey page (before anyone answers), the thank-you page, the builder's
preview, the dashboard, the codebook and ``survey-app ledger``, so they cannot disagree.

Every ε and every "at most N times as likely" put before a person is rounded up, never to
nearest: a figure that understates what a response can reveal would be a broken promise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, Inexact, localcontext
from fractions import Fraction
from typing import Any

from survey_app.domain.definitions import DEFAULT_CHOICE_NUMBER_EPSILON, EPSILON_DECIMALS
from survey_app.privacy.rationals import decimal_ceiling
from survey_app.storage.surveys import Question, Survey
from survey_app.web.i18n import format_decimal, format_percent, ngettext
from survey_app.web.i18n import gettext as _

#: How far, in units in the last place of max(1, ε), a mechanism's float ε may sit from
#: its true value. It is ln of an exact rational taken as a float (within 2^-53 of the
#: rational, relatively) and then through math.log (within an ulp), or an exact rational
#: taken as a float (within half an ulp): at most two ulps off, so four is a safe margin.
FLOAT_ULPS = 4
#: Odds above a billion are said in words: nine digits and more tell a reader nothing more.
MOST_ODDS_IN_DIGITS = 10**9
#: Significant digits of the decimal arithmetic that bounds e^ε from above.
_ODDS_DIGITS = 30


@dataclass(frozen=True)
class LedgerEntry:
    key: str
    text: str
    type: str
    sensitive: bool
    mechanism: str
    parameters: dict[str, Any]
    epsilon: float  # from the exact parameters, full float precision; 0 for a plain question
    epsilon_bound: Fraction  # exact and at or above the true ε: what people are shown
    how: str  # what happens to the answer, in plain words


class SurveyLedger(tuple[LedgerEntry, ...]):
    """Every question's entry, in the survey's order, and what answering them all costs."""

    @property
    def epsilon_bound(self) -> Fraction:
        """At or above a respondent's true total ε (basic composition): the questions'
        bounds added exactly, so a total is rounded up once, not once per question."""
        return sum((entry.epsilon_bound for entry in self), Fraction(0))

    def entry(self, key: str) -> LedgerEntry:
        """The entry of question ``key``, for pages that list questions by type."""
        return next(entry for entry in self if entry.key == key)


def survey_ledger(survey: Survey) -> SurveyLedger:
    """The ledger of ``survey``, built once per page or command so every figure on it comes
    from the same bounds."""
    return SurveyLedger(
        LedgerEntry(
            key=q.key,
            text=q.text,
            type=q.type,
            sensitive=q.sensitive,
            mechanism=q.mechanism.name,
            parameters=q.mechanism.parameters(),
            epsilon=q.epsilon,
            epsilon_bound=epsilon_bound(q),
            how=plain_description(q),
        )
        for q in survey.questions
    )


def epsilon_bound(question: Question) -> Fraction:
    """An exact rational at or above the question's true ε (0 for a plain question).

    The true ε is ln of a rational likelihood ratio, irrational, and ``question.epsilon``
    is a float near it, possibly just below: so the float plus ``FLOAT_ULPS`` units in the
    last place is a bound. The ε the mechanism was built for is another, usually tighter
    (the float of a question asking for 0.125 can be 0.125 itself, and the float bound
    would show 0.126): every mechanism's exact ln(ratio) is at most the requested decimal
    (``privacy.rationals.within_epsilon``, decided with 60-digit decimals), the same fact
    that makes ``max_epsilon`` sound. The smaller bound is taken.
    """
    if not question.sensitive:
        return Fraction(0)
    margin = FLOAT_ULPS * math.ulp(max(1.0, question.epsilon))
    computed = Fraction(question.epsilon) + Fraction(margin)
    requested = _requested_epsilon(question)
    return computed if requested is None else min(computed, requested)


def _requested_epsilon(question: Question) -> Fraction | None:
    """The decimal ε the question's mechanism was built for, or None where there is none:
    a yes/no question on fair coins (ln 3) or stored before questions kept their request
    (only yes/no questions were). A choice or number question without one took the
    default."""
    if question.requested_epsilon is not None:
        return Fraction(question.requested_epsilon)
    if question.type == "yes_no":
        return None
    return DEFAULT_CHOICE_NUMBER_EPSILON


def shown_epsilon(epsilon: Fraction | str) -> Decimal:
    """An exact ε, or a bound on one (``LedgerEntry.epsilon_bound``), rounded up to the
    survey file's decimals: 0.015 stays 0.015, ln 3 shows as 1.099, never 1.098."""
    return decimal_ceiling(_exact(epsilon), EPSILON_DECIMALS)


def _exact(epsilon: Fraction | str) -> Fraction:
    """An ε to show, as the exact rational it is. A float is refused, loudly: it may sit
    just below the true ε (``question.epsilon`` does), and templates, which mypy does not
    read, could otherwise pass one in and quietly lose the rounding's guarantee."""
    if isinstance(epsilon, float):
        raise TypeError(f"an ε to show must be exact (a Fraction or decimal text): {epsilon!r}")
    return Fraction(epsilon)


def epsilon_text(epsilon: Fraction | str) -> str:
    """ε as the pages show it, rounded up, in the page's locale: "1.10", "0.015", "1.099".

    (The float handed to Babel is read back through its shortest repr, which gives a
    decimal of at most 15 significant digits back exactly: no second rounding.)"""
    return format_decimal(float(shown_epsilon(epsilon)), format="#,##0.00#")


def odds_text(epsilon: Fraction | str) -> str | None:
    """e^ε, rounded up, in the page's locale: how many times likelier any stored report can
    be under one true answer than under another. Three significant digits up to 100
    ("1.02" for ε = 0.015, "3.01" for 1.1), whole numbers above ("22,027" for 10).

    None above a billion: "at most 10^40 times" tells a reader nothing, so the pages say
    "more than a billion times" in a sentence of their own.
    """
    odds = _odds_bound(_exact(epsilon))
    if odds > MOST_ODDS_IN_DIGITS:
        return None
    places = 2 if odds < 10 else 1 if odds < 100 else 0
    shown = decimal_ceiling(Fraction(odds), places)
    return format_decimal(float(shown), format="#,##0.0#" if places else "#,##0")


def _odds_bound(epsilon: Fraction) -> Decimal:
    """e^ε from above in decimal arithmetic, which cannot overflow (e^1000, the largest
    total a survey file allows, is about 2·10^434): ε divided rounding up, then its
    exponential, correctly rounded (so within half a unit), stepped up one unit unless it
    was exact (e^0 = 1)."""
    with localcontext() as context:
        context.prec = _ODDS_DIGITS
        context.rounding = ROUND_CEILING
        exponent = Decimal(epsilon.numerator) / Decimal(epsilon.denominator)
        context.clear_flags()
        odds = exponent.exp()
        return odds.next_plus() if context.flags[Inexact] else odds


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
