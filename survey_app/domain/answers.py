"""Answers and reports between the form, the mechanisms and storage.

A *value* is what the respondent chose: a bool for yes/no, an option's index for a choice,
an integer for a number. A *report* is what a mechanism made of it: the same kinds, plus a
tuple of bits for optimized unary encoding. Only reports are stored; a plain question's
report is its value. ``None`` is a skipped question, stored as JSON null, never
randomized into an answer. How a report is posted and stored is its mechanism's
``report_format`` (``privacy.wire``, where the wire's fixed lengths are explained).

With JavaScript off a number is chosen from a list, or typed, at a fixed width per
question (``fixed_width_number``); only a JS browser without crypto posts it as typed.
"""

from __future__ import annotations

from collections.abc import Mapping

from survey_app.privacy import SECURE, RandomSource
from survey_app.privacy.wire import NO, NUMBER_WIDTH, YES, Report, Stored
from survey_app.privacy.words import Text
from survey_app.storage.surveys import Question, Survey

Value = bool | int

__all__ = ["NO", "NUMBER_WIDTH", "YES", "Report", "Stored", "Value"]
# Ranges up to this many values are offered as a list without JavaScript; wider ones typed.
LISTED_NUMBERS = 101


def randomize_response(
    survey: Survey, values: Mapping[str, Value | None], source: RandomSource = SECURE
) -> dict[str, Report | None]:
    """The server's coins for a whole response: every sensitive answer through its own
    mechanism with fresh coins; plain answers and skips pass as they are."""
    return {q.key: _randomize(q, values.get(q.key), source) for q in survey.questions}


def _randomize(question: Question, value: Value | None, source: RandomSource) -> Report | None:
    if value is None or not question.sensitive:
        return value
    report: Report = question.mechanism.randomize(value, source)
    return report


def to_stored(question: Question, report: Report | None) -> Stored:
    """The JSON value kept for a report: 1/0, an index, an integer, or unary bits as text."""
    return None if report is None else question.mechanism.report_format.store(report)


def from_stored(question: Question, stored: Stored) -> Report | None:
    return None if stored is None else question.mechanism.report_format.load(stored)


def option_value(question: Question, index: int) -> str:
    """An option's value on the wire: its index, zero-padded to the width of the last."""
    return str(index).zfill(len(str(len(question.options) - 1)))


def set_value(question: Question, indexes: tuple[int, ...]) -> str:
    """A set of options as the browser posts it: each index as ``option_value``, joined by
    commas, so every set of one size has one length."""
    return ",".join(option_value(question, index) for index in indexes)


def set_pattern(question: Question) -> str:
    """The shape every posted set has (``set_value``): indexes of one width, comma-joined.
    The mechanism checks the rest (``check_report``: size, order, range)."""
    width = len(str(len(question.options) - 1))
    return rf"^[0-9]{{{width}}}(,[0-9]{{{width}}})*\Z"


def option_bit_pattern(question: Question) -> str:
    """The shape of a posted sampled option and its bit, "07:1": the index padded as
    ``option_value``, so every report of one question has one length. The mechanism
    checks the rest (``check_report``: the index below k)."""
    width = len(str(len(question.options) - 1))
    return rf"^[0-9]{{{width}}}:[01]\Z"


def number_digits(question: Question) -> int:
    """How many digits a number question's fixed-width form has: those of its widest bound."""
    assert question.min is not None and question.max is not None
    return max(len(str(abs(question.min))), len(str(abs(question.max))))


def fixed_width_number(question: Question, value: int) -> str:
    """A number as the form without JavaScript sends it: one width per question.

    Zero-padded to the digits of the widest bound; if the range has negatives, a leading
    "-" or "0" first ("+" would be URL-encoded as 3 bytes). Any integer parses it back.
    """
    digits = str(abs(value)).zfill(number_digits(question))
    assert question.min is not None
    if question.min < 0:
        return ("-" if value < 0 else "0") + digits
    return digits


def fixed_width_pattern(question: Question) -> str:
    """The HTML ``pattern`` a typed fixed-width number matches (anchored by the browser)."""
    assert question.min is not None
    sign = "(0|-)" if question.min < 0 else ""
    return f"{sign}[0-9]{{{number_digits(question)}}}"


def listed_numbers(question: Question) -> list[tuple[str, int]]:
    """A narrow range's numbers as (wire value, number), or [] if it is to be typed."""
    assert question.min is not None and question.max is not None
    if question.max - question.min + 1 > LISTED_NUMBERS:
        return []
    return [(fixed_width_number(question, n), n) for n in range(question.min, question.max + 1)]


def padded_number(number: int) -> str:
    """A number as the browser sends it: always ``NUMBER_WIDTH`` characters."""
    return f"{number:0{NUMBER_WIDTH}d}"


def report_alternatives(question: Question, report: Report | None) -> list[tuple[Text | str, bool]]:
    """Every text the thank-you page could show for this question, each with whether it is
    the stored one, so that the page is the same size whatever was stored.

    The respondent sees only the stored text; the others are in the page, hidden. The
    mechanism says what they are (a number is one text padded to a fixed width, whitespace
    HTML does not show). A skip is the template's (it knows whether the question may be
    skipped).
    """
    return question.mechanism.report_texts(report, question.options)
