"""A tick-all-that-apply question's fields without JavaScript: one yes/no pair per option.

A checkbox posts only when ticked, so a POST's size would count the options ticked (TLS
hides the bytes, not their number). Instead each option j is a pair of radio buttons
named ``<key>.<j>`` with the values "y" and "n" (``answers.YES``/``NO``): every answer,
"none of these" included, posts the same k fields at the same length. The server joins
them into the question's answer, k characters 0/1 (``QuestionType.answer_format``), which
the form then checks and ``randomize_response`` randomizes like any other answer.

With JavaScript the browser joins them itself, samples the report and posts only that
under ``<key>``: the pairs never leave the page, and a POST carrying them with
``randomized=client`` is refused as having unexpected fields (``forms.form_problems``).
"""

from __future__ import annotations

from werkzeug.datastructures import MultiDict

from survey_app.domain.answers import NO, YES
from survey_app.storage.surveys import Question, Survey

#: An option left unanswered: no answer's bits contain it, so the field refuses it.
UNANSWERED = "-"
_BITS = {YES: "1", NO: "0"}


def option_name(question: Question, index: int) -> str:
    """The posted name of option ``index``'s yes/no pair."""
    return f"{question.key}.{index}"


def joined_ticks(survey: Survey, formdata: MultiDict[str, str]) -> MultiDict[str, str]:
    """The POST with each tick-all question's pairs joined into its answer's bits.

    Every pair unanswered: the question was skipped (nothing under its key). Some
    answered and not others: the bits hold ``UNANSWERED`` and the field refuses them.
    Left as posted (so that ``form_problems`` refuses the extra fields): the browser's
    reports (``randomized=client``), a question whose key was posted too, and a pair
    posted twice.
    """
    if formdata.get("randomized") == "client":
        return formdata
    joined = MultiDict(formdata)
    for question in survey.questions:
        if not question.type.is_multiple or question.key in formdata:
            continue
        names = [option_name(question, index) for index in range(len(question.options))]
        if any(len(formdata.getlist(name)) > 1 for name in names):
            continue
        posted = [formdata.get(name) for name in names]
        for name in names:
            joined.pop(name, None)
        if any(value is not None for value in posted):
            joined[question.key] = "".join(_BITS.get(v or "", UNANSWERED) for v in posted)
    return joined
