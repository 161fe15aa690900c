"""The order a respondent's page shows questions and options in: drawn per page, shown only.

A survey (or a section) may show its questions in random order, and a choice, scale or
tick-all question its options (``random``; a scale may instead be ``reverse``d for half the
respondents), with some options kept in place (``fixed_options``, e.g. "None of these"
last). This counters order effects; it changes nothing else. Field names and option values
stay the ones written (an option is posted and stored as its index as written), so the
order is never stored, and the browser's script posts its reports in the written order.

Draws come from ``coins.SECURE`` (``secrets``, the operating system's CSPRNG), or from an
injected ``RandomSource`` in tests, through ``uniform_below``: a Fisher–Yates shuffle of the
movable items makes every permutation of them exactly equally likely.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from survey_app.privacy.coins import SECURE, RandomSource, uniform_below

#: Every order a survey's (or a section's) questions may be shown in; the first is the default.
QUESTION_ORDERS = ("as_written", "random")
#: Every order a question's options may be shown in; the first is the default. ``reverse``
#: (the written order for half the respondents, reversed for the other half) is for scales.
OPTION_ORDERS = ("as_written", "random", "reverse")
AS_WRITTEN = "as_written"
RANDOM = "random"
REVERSE = "reverse"


class OrderedQuestion(Protocol):
    """What drawing a question's option order needs: a stored question and a question
    definition both have it."""

    @property
    def options(self) -> tuple[str, ...]: ...

    @property
    def option_order(self) -> str: ...

    @property
    def fixed_options(self) -> tuple[int, ...]: ...


Item = TypeVar("Item")
Q = TypeVar("Q", bound=OrderedQuestion)


def shuffled(
    items: Sequence[Item], fixed: frozenset[int] = frozenset(), source: RandomSource = SECURE
) -> list[Item]:
    """``items`` with those at the ``fixed`` positions in place and the others in a
    uniformly random order (Fisher–Yates on the movable positions)."""
    movable = [index for index in range(len(items)) if index not in fixed]
    drawn = list(movable)
    for last in range(len(drawn) - 1, 0, -1):
        chosen = uniform_below(last + 1, source)
        drawn[last], drawn[chosen] = drawn[chosen], drawn[last]
    shown = list(items)
    for place, index in zip(movable, drawn, strict=True):
        shown[place] = items[index]
    return shown


def reversed_or_not(
    items: Sequence[Item], fixed: frozenset[int] = frozenset(), source: RandomSource = SECURE
) -> list[Item]:
    """``items`` as written or, with probability ½, the movable ones in reverse order
    (the fixed ones in place): a scale read from either end, never scrambled."""
    if uniform_below(2, source) == 0:
        return list(items)
    movable = [index for index in range(len(items)) if index not in fixed]
    shown = list(items)
    for place, index in zip(movable, reversed(movable), strict=True):
        shown[place] = items[index]
    return shown


def option_display_order(question: OrderedQuestion, source: RandomSource = SECURE) -> list[int]:
    """The indexes (as written) of ``question``'s options, in the order to show them."""
    indexes = range(len(question.options))
    fixed = frozenset(question.fixed_options)
    if question.option_order == RANDOM:
        return shuffled(indexes, fixed, source)
    if question.option_order == REVERSE:
        return reversed_or_not(indexes, fixed, source)
    return list(indexes)


@dataclass(frozen=True)
class ShownQuestion(Generic[Q]):
    """One question as a page shows it: where it is written, and its options' order."""

    #: Its position among the questions as written (the ledger's and the form's order).
    index: int
    question: Q
    #: Its options' indexes as written, in the order shown.
    options: tuple[int, ...]


def display_order(
    questions: Sequence[Q], question_order: str = AS_WRITTEN, source: RandomSource = SECURE
) -> list[ShownQuestion[Q]]:
    """``questions`` (a survey's, or a section's) as one page shows them: in random order
    when ``question_order`` is ``random``, each with its options' order drawn."""
    shown = [
        ShownQuestion(index, question, tuple(option_display_order(question, source)))
        for index, question in enumerate(questions)
    ]
    return shuffled(shown, source=source) if question_order == RANDOM else shown


def display_parts(
    parts: Sequence[Sequence[Q]], orders: Sequence[str], source: RandomSource = SECURE
) -> list[list[ShownQuestion[Q]]]:
    """Each part of a page (a survey's questions, or each section's) as ``display_order``
    shows it, in its own order (``orders``, one per part): a section's questions are
    shuffled among themselves, never across sections."""
    return [display_order(part, order, source) for part, order in zip(parts, orders, strict=True)]
