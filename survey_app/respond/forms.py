"""The survey form: one yes/no radio group per question, named by the question's key.

Built as a plain WTForms ``BaseForm`` from the survey rather than a ``FlaskForm`` class:
question keys are the public field names, and a key such as ``data`` or ``meta`` would
clash with ``FlaskForm``'s own attributes. CSRF is checked for every POST app-wide by
Flask-WTF's ``CSRFProtect``.
"""

from __future__ import annotations

import secrets

from werkzeug.datastructures import MultiDict
from wtforms import Field, HiddenField, RadioField
from wtforms.form import BaseForm
from wtforms.validators import AnyOf, InputRequired, Optional, Regexp

from ..invitations import TOKEN_PATTERN
from ..surveys import Survey

ANSWER_CHOICES = ["yes", "no"]
SUBMISSION_ID_PATTERN = r"^[A-Za-z0-9_-]{16,64}\Z"
# Fields the form carries besides the answers; anything else in a POST is refused.
CONTROL_FIELDS = frozenset({"csrf_token", "submission_id", "randomized", "invitation"})


def new_submission_id() -> str:
    """A fresh id for one rendering of the form; stored only with the response itself."""
    return secrets.token_urlsafe(16)


def build_response_form(survey: Survey, formdata: MultiDict[str, str] | None = None) -> BaseForm:
    fields: list[tuple[str, Field]] = [
        (
            question.key,
            RadioField(
                question.text,
                choices=ANSWER_CHOICES,
                validators=[InputRequired(message="Please answer this question.")],
            ),
        )
        for question in survey.questions
    ]
    fields.append(
        (
            "submission_id",
            HiddenField(
                validators=[
                    InputRequired(message="The form is incomplete; please reload the page."),
                    Regexp(SUBMISSION_ID_PATTERN, message="The form's id is malformed."),
                ]
            ),
        )
    )
    fields.append(("randomized", HiddenField(validators=[Optional(), AnyOf(["client"])])))
    fields.append(
        (
            "invitation",
            HiddenField(
                validators=[
                    Optional(),
                    Regexp(rf"^{TOKEN_PATTERN.pattern}\Z", message="The invitation is malformed."),
                ]
            ),
        )
    )
    form = BaseForm(fields)
    form.process(formdata)
    return form


def form_problems(survey: Survey, formdata: MultiDict[str, str]) -> list[str]:
    """Problems with the POST's shape that field validation does not see."""
    allowed = CONTROL_FIELDS | {q.key for q in survey.questions}
    problems = [f"Unexpected field {name!r}." for name in formdata if name not in allowed]
    problems += [
        f"Field {name!r} was sent more than once."
        for name in formdata
        if name in allowed and len(formdata.getlist(name)) > 1
    ]
    return problems
