"""Display logic: which questions apply to a respondent, decided from plain answers only.

A question may be shown only if an earlier *plain* question (stored as given) was answered
a certain way: one of some options, or a number in a range. Conditions on sensitive
answers are refused at import (``survey_validation``): which questions a person was shown
would travel with the response, in the page's requests and in the stored "not applicable",
and would say what they answered, unrandomized. A plain answer is stored as given anyway,
so a condition on it reveals nothing more.

A question whose condition does not hold is *not applicable*: nothing is stored for it
but ``NOT_APPLICABLE``, whatever was posted (a sensitive answer is discarded before any
coin, never stored true), and every estimate leaves it out of its n, as it does a skip,
but counts it apart: an estimate then describes the respondents the question applied to.

Pure: no Flask, no SQL. The respondent's form (``web/respond``), the stored responses and
any page-by-page flow (sections) ask ``not_applicable`` the same question.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: What a response stores (in its answers JSON) for a question that did not apply to it:
#: a text no report is (reports are numbers, bits "0101" or sets "0,3"), so a reader can
#: never take it for an answer, and JSON null stays a skip.
NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class ShowIf:
    """Show a question only if the plain question ``question`` (its key) was answered
    with one of ``options`` (0-based indexes: a choice or a scale) or with a number from
    ``min`` to ``max`` (either may be None: unbounded on that side)."""

    question: str
    options: tuple[int, ...] = ()
    min: int | None = None
    max: int | None = None

    def holds(self, value: object) -> bool:
        """Whether a plain answer ``value`` (an option's index or a number; None when
        skipped or itself not applicable) meets the condition: no answer never does."""
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        if self.options:
            return value in self.options
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    def written(self) -> dict[str, Any]:
        """The condition as a survey file writes it (options numbered from 1)."""
        written: dict[str, Any] = {"question": self.question}
        if self.options:
            written["is"] = [index + 1 for index in self.options]
        for name in ("min", "max"):
            if getattr(self, name) is not None:
                written[name] = getattr(self, name)
        return written

    @classmethod
    def from_written(cls, written: Mapping[str, Any]) -> ShowIf:
        """The condition ``written`` gives (as ``written`` made it; validated already)."""
        return cls(
            question=str(written["question"]),
            options=tuple(int(number) - 1 for number in written.get("is", ())),
            min=written.get("min"),
            max=written.get("max"),
        )


class Conditioned(Protocol):
    """A question as display logic sees it: its key and its condition, if any."""

    @property
    def key(self) -> str: ...

    @property
    def show_if(self) -> ShowIf | None: ...


def not_applicable(
    questions: Iterable[Conditioned], plain_answers: Mapping[str, object]
) -> frozenset[str]:
    """The keys of the questions that do not apply, given the plain answers by key.

    In question order, so a condition on a question that did not apply itself fails
    (that question has no answer): conditions chain as a respondent reads them.
    """
    hidden: set[str] = set()
    for question in questions:
        condition = question.show_if
        if condition is None:
            continue
        answer = None if condition.question in hidden else plain_answers.get(condition.question)
        if not condition.holds(answer):
            hidden.add(question.key)
    return frozenset(hidden)


def population(condition: ShowIf, options: Sequence[str]) -> str:
    """Whom a conditioned question's estimate describes, for the exports (in the survey's
    main language, as their other texts): ``options`` are the plain question's."""
    if condition.options:
        chosen = " or ".join(repr(options[index]) for index in condition.options)
        return f"respondents who answered {chosen} to {condition.question}"
    if condition.min is not None and condition.max is not None:
        return f"respondents whose {condition.question} is from {condition.min} to {condition.max}"
    if condition.min is not None:
        return f"respondents whose {condition.question} is {condition.min} or more"
    return f"respondents whose {condition.question} is {condition.max} or less"


def condition_questions(questions: Iterable[Conditioned]) -> frozenset[str]:
    """The keys of the plain questions some condition depends on."""
    return frozenset(q.show_if.question for q in questions if q.show_if is not None)
