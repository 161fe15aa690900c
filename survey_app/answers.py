"""Answers and reports between the form, the mechanisms and storage, per question type.

A *value* is what the respondent chose: a bool for yes/no, an option's index for a choice,
an integer for a number. A *report* is what a mechanism made of it: the same kinds, plus a
tuple of bits for optimized unary encoding. Only reports are stored; a plain question's
report is its value. ``None`` is a skipped question, stored as JSON null, never
randomized into an answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from .privacy import SECURE, RandomSource
from .surveys import Question, Survey

Value = bool | int
Report = bool | int | tuple[int, ...]
Stored = int | str | None

UNIT_ENCODING = "optimized_unary_encoding"


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
    if report is None:
        return None
    if isinstance(report, tuple):
        return "".join(str(bit) for bit in report)
    return int(report)


def from_stored(question: Question, stored: Stored) -> Report | None:
    if stored is None:
        return None
    if isinstance(stored, str):
        return tuple(int(bit) for bit in stored)
    if question.type == "yes_no":
        return bool(stored)
    return int(stored)


def describe_report(question: Question, report: Report | None) -> str:
    """A stored report in the respondent's words, for the thank-you page."""
    if report is None:
        return "skipped (nothing stored)"
    if question.type == "yes_no":
        return "yes" if report else "no"
    if isinstance(report, tuple):
        marked = [option for option, bit in zip(question.options, report, strict=True) if bit]
        return "marked: " + (", ".join(marked) if marked else "none")
    if question.type == "choice":
        assert isinstance(report, int)
        return question.options[report]
    if question.mechanism.name == "duchi_binary":
        return "high" if report else "low"
    return str(report)
