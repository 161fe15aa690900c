"""The privacy ledger: every question's mechanism, exact parameters and ε, in numbers and
in words a respondent can follow.

One source for the survey page (before anyone answers), the thank-you page, the builder's
preview, the dashboard, the codebook and ``survey-app ledger``, so they cannot disagree.
The words are each mechanism's own (``Text`` markers, put in the reader's language where
they are shown: ``survey_app/web/privacy_words.py``); the numbers are formatted in the
reader's locale the same way (``Figure``).

Every ε and every "at most N times as likely" put before a person is rounded up, never to
nearest: a figure that understates what a response can reveal would be a broken promise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, Inexact, localcontext
from fractions import Fraction
from typing import Any

from survey_app.domain.survey_limits import DEFAULT_CHOICE_NUMBER_EPSILON, EPSILON_DECIMALS
from survey_app.privacy import QuestionType
from survey_app.privacy.rationals import decimal_ceiling
from survey_app.privacy.words import Figure, Text
from survey_app.storage.surveys import Question, Survey

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
    type: QuestionType
    sensitive: bool
    mechanism: str
    parameters: dict[str, Any]
    epsilon: float  # from the exact parameters, full float precision; 0 for a plain question
    epsilon_bound: Fraction  # exact and at or above the true ε: what people are shown
    how: str  # what happens to the answer, in plain words (the reader's language)


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
    return SurveyLedger(ledger_entry(q) for q in survey.questions)


def ledger_entry(q: Question) -> LedgerEntry:
    """One question's entry, its words in the reader's language."""
    return LedgerEntry(
        key=q.key,
        text=q.text,
        type=q.type,
        sensitive=q.sensitive,
        mechanism=q.mechanism.name,
        parameters=q.mechanism.parameters(),
        epsilon=q.epsilon,
        epsilon_bound=epsilon_bound(q),
        how=str(plain_description(q)),
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
    if question.type is QuestionType.YES_NO:
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
    return str(Figure(float(shown_epsilon(epsilon)), "#,##0.00#"))


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
    return str(Figure(float(shown), "#,##0.0#" if places else "#,##0"))


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


def method_name(question: Question) -> Text:
    """The mechanism's name in plain words, for respondents (not its stored identifier)."""
    return question.mechanism.respondent_name


def plain_description(question: Question) -> Text:
    """What the mechanism does to this question's answer, in one or two whole sentences a
    translator can make natural: numbers are named placeholders, never joined fragments."""
    return question.mechanism.description()
