"""Display logic on the respondent's page: what a conditioned question says and carries.

Without JavaScript every question is on the page, and a conditioned one says who should
answer it ("Only if you answered Third year or Fourth year to “Which year…?”"); the
server then decides from the posted plain answer (``display_logic.not_applicable``).
With JavaScript ``randomize.js`` shows and hides it as the plain answer changes, and
while it is hidden turns on its ``data-na`` input (disabled in the page), which posts
``not_applicable_value``: as long as any report of the question, so the request's size
does not say whether it was shown (that follows from the plain answer, posted as given
anyway, but a hidden question must not post less).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from babel.lists import format_list
from flask_babel import get_locale

from survey_app.domain.answers import NUMBER_WIDTH, option_value
from survey_app.domain.display_logic import ShowIf
from survey_app.privacy import SECURE
from survey_app.privacy.wire import ReportFormat
from survey_app.storage.surveys import Question, Survey
from survey_app.web.i18n import current_language, format_decimal
from survey_app.web.i18n import gettext as _

#: The character a hidden question's field is filled with: no report contains it.
NOT_APPLICABLE_CHARACTER = "_"


@dataclass(frozen=True)
class ConditionView:
    """A conditioned question as its page shows it: the note, the script's condition and
    the value its field posts while hidden."""

    note: str
    script: dict[str, Any]
    not_applicable: str


def condition_views(survey: Survey) -> dict[str, ConditionView]:
    """Each conditioned question's view, by key (``survey`` in the page's language)."""
    by_key = {question.key: question for question in survey.questions}
    return {
        question.key: ConditionView(
            note=condition_note(question.show_if, by_key[question.show_if.question]),
            script=_script_condition(question.show_if, by_key[question.show_if.question]),
            not_applicable=not_applicable_value(question),
        )
        for question in survey.questions
        if question.show_if is not None
    }


def _script_condition(condition: ShowIf, plain: Question) -> dict[str, Any]:
    """The condition as ``randomize.js`` reads it, tersely (the page's weight): the plain
    question's key ``q``, and its option indexes ``is`` or its range, an open end being
    the question's own bound."""
    if condition.options:
        return {"q": condition.question, "is": list(condition.options)}
    low = plain.min if condition.min is None else condition.min
    high = plain.max if condition.max is None else condition.max
    return {"q": condition.question, "min": low, "max": high}


def condition_note(condition: ShowIf, plain: Question) -> str:
    """Who should answer: the options (or the range) of the plain question that show it."""
    if condition.options:
        chosen = [plain.options[index] for index in condition.options]
        listed = format_list(chosen, style="or", locale=get_locale() or current_language())
        return _(
            "Only if you answered %(options)s to “%(question)s”.",
            options=listed,
            question=plain.text,
        )
    low = None if condition.min is None else format_decimal(condition.min)
    high = None if condition.max is None else format_decimal(condition.max)
    if low is not None and high is not None:
        return _(
            "Only if your answer to “%(question)s” was from %(low)s to %(high)s.",
            question=plain.text,
            low=low,
            high=high,
        )
    if low is not None:
        return _(
            "Only if your answer to “%(question)s” was %(low)s or more.",
            question=plain.text,
            low=low,
        )
    return _(
        "Only if your answer to “%(question)s” was %(high)s or less.",
        question=plain.text,
        high=high,
    )


def not_applicable_value(question: Question) -> str:
    """What the browser posts for the question when it is hidden: a report's shape with
    every digit a ``_``, so it is as long as any report on the wire, encoded too (a set's
    commas and an option's colon are URL-encoded as 3 bytes each, and kept)."""
    wire = question.mechanism.report_format
    option = NOT_APPLICABLE_CHARACTER * (len(option_value(question, 0)) if question.options else 0)
    if wire is ReportFormat.OPTION_BIT:
        return f"{option}:{NOT_APPLICABLE_CHARACTER}"
    if wire is ReportFormat.SUBSET:
        # Every set the mechanism reports has its one size: count one.
        size = len(question.mechanism.randomize(0, SECURE))
        return ",".join([option] * size)
    return NOT_APPLICABLE_CHARACTER * _report_width(question, len(option))


def _report_width(question: Question, option_width: int) -> int:
    """The length of every report of ``question`` with no punctuation in it: yes/no, an
    option's padded index, a bit per option, a padded number, Duchi's bit."""
    wire = question.mechanism.report_format
    if wire is ReportFormat.YES_NO:
        return 1
    if wire is ReportFormat.OPTION:
        return option_width
    if wire is ReportFormat.BITS:
        return len(question.options)
    if wire is ReportFormat.PADDED_NUMBER:
        return NUMBER_WIDTH
    low, high = question.mechanism.report_range()
    return max(len(str(low)), len(str(high)))
