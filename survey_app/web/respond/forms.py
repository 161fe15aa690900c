"""The survey form: one field per question, named by the question's key.

Built as a plain WTForms ``BaseForm`` from the survey rather than a ``FlaskForm`` class:
question keys are the public field names, and a key such as ``data`` or ``meta`` would
clash with ``FlaskForm``'s own attributes. CSRF is checked for every POST app-wide by
Flask-WTF's ``CSRFProtect``; on top of that the form's ``submission_id`` is a form token
(``form_tokens``): issued by this app for this survey, unexpired, and used up by the
response stored under it.

The same question takes different values on the two paths. Without JavaScript the form
carries true answers, in the format of the question's type (an option, a number in
range). With ``randomized=client`` it carries the browser's reports, in the format of the
question's mechanism (``privacy.wire.ReportFormat``): a unary-encoding report is a string
of bits, a set of options its padded indexes joined by commas (its size, order and range
the mechanism's ``check_report``), and a discrete-Laplace report may lie outside [min,
max] (that is the noise at work). Every report must lie in its mechanism's
``report_range``, where an honest device's reports fall except with probability below
2^-60: a forged report beyond it would move an estimate without bound (DESIGN.md,
"Forged reports").

Every answer to a question has one length on the wire (``answers.YES``/``NO``,
``option_value``, ``padded_number``, ``fixed_width_number``), so a POST's size does not
tell its answers apart. The browser's numbers must come padded to ``NUMBER_WIDTH``; on
the server path a number is any whole number in range, so the no-JS form's fixed-width
values (``07``, ``-042``) and the plain ones of a JS browser without crypto both parse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from flask import current_app
from werkzeug.datastructures import MultiDict
from wtforms import Field, HiddenField, IntegerField, RadioField, StringField
from wtforms.form import BaseForm
from wtforms.validators import AnyOf, InputRequired, NumberRange, Optional, Regexp, StopValidation

from survey_app.domain.answers import (
    NO,
    NUMBER_WIDTH,
    YES,
    Report,
    Value,
    option_bit_pattern,
    option_value,
    set_pattern,
)
from survey_app.domain.display_logic import condition_questions, not_applicable
from survey_app.domain.survey_limits import LARGEST_REPORT
from survey_app.privacy.wire import ReportFormat
from survey_app.storage.invitations import TICKET_PATTERN
from survey_app.storage.surveys import Question, Survey
from survey_app.web.form_tokens import (
    DEFAULT_MAX_AGE_HOURS,
    ExpiredFormToken,
    FormTokenError,
    issue_form_token,
    random_part,
    submission_id_from,
)
from survey_app.web.i18n import format_decimal, ngettext
from survey_app.web.i18n import gettext as _
from survey_app.web.signing_keys import signing_keys

YES_NO = [YES, NO]
# Fields the form carries besides the answers; anything else in a POST is refused.
CONTROL_FIELDS = frozenset(
    {"csrf_token", "submission_id", "randomized", "invitation", "design", "agreed"}
)


def new_form_token(survey: Survey) -> str:
    """The ``submission_id`` for one rendering of the survey's form: a fresh form token."""
    return issue_form_token(signing_keys(), survey.slug)


def checked_submission_id(survey: Survey, token: str) -> str:
    """The submission id of a form token issued for ``survey`` within its lifetime
    (``FORM_MAX_AGE_HOURS``); FormTokenError (ExpiredFormToken) otherwise."""
    max_age = current_app.config.get("FORM_MAX_AGE_HOURS", DEFAULT_MAX_AGE_HOURS)
    return submission_id_from(signing_keys(), survey.slug, token, max_age)


def stored_submission_id(form: BaseForm) -> str:
    """The id a validated form's response is stored under: its token's random part."""
    return random_part(form["submission_id"].data)


class IssuedFormToken:
    """Validator: the token was issued by this app for this survey and has not expired.

    Its lifetime is ``FORM_MAX_AGE_HOURS`` (the form cannot be sent later); whether it was
    used already is the response store's UNIQUE submission id.
    """

    def __init__(self, survey: Survey) -> None:
        self.survey = survey

    def __call__(self, form: BaseForm, field: Field) -> None:
        max_age = current_app.config.get("FORM_MAX_AGE_HOURS", DEFAULT_MAX_AGE_HOURS)
        try:
            checked_submission_id(self.survey, field.data)
        except ExpiredFormToken as err:
            message = ngettext(
                "This form was shown more than an hour ago and has expired.",
                "This form was shown more than %(num)d hours ago and has expired.",
                max_age,
            )
            raise StopValidation(message) from err
        except FormTokenError as err:
            raise StopValidation(
                _("This form was not issued by this site for this survey.")
            ) from err


def sent_by_browser(formdata: MultiDict[str, str]) -> bool:
    """Whether the browser's script randomized these answers (``randomized=client``)."""
    return formdata.get("randomized") == "client"


class FixedWidthNumber:
    """Validator: the browser sent the number padded to ``NUMBER_WIDTH`` characters."""

    pattern = re.compile(rf"(?=.{{{NUMBER_WIDTH}}}\Z)-?[0-9]+")

    def __call__(self, form: BaseForm, field: Field) -> None:
        raw = field.raw_data[0] if field.raw_data else ""
        if raw and not self.pattern.fullmatch(raw):
            raise StopValidation(_("The randomized answer is malformed."))


class HonestReport:
    """Validator: a report its mechanism could have sent (``check_report``), where the
    field's pattern cannot tell: a set of options of the right size, each option once, in
    increasing order, none past the last."""

    def __init__(self, question: Question) -> None:
        self.question = question

    def __call__(self, form: BaseForm, field: Field) -> None:
        if field.errors:
            return  # malformed already: the pattern said so
        try:
            report = self.question.mechanism.report_format.parse(field.data)
            self.question.mechanism.check_report(report)
        except ValueError as err:
            raise StopValidation(_("The randomized answer is malformed.")) from err


#: Reports posted as text of one shape per question, which the mechanism checks further.
_REPORT_PATTERNS = {ReportFormat.SUBSET: set_pattern, ReportFormat.OPTION_BIT: option_bit_pattern}


def _presence(question: Question) -> list[object]:
    if question.required:
        return [InputRequired(message=_("Please answer this question."))]
    return [Optional()]


def _answer_field(question: Question, reports: bool) -> Field:
    """The field for one question: true answers, or the browser's reports."""
    presence = _presence(question)
    wire = _posted_format(question, reports)
    if wire is ReportFormat.YES_NO:
        return RadioField(question.text, choices=YES_NO, validators=presence)
    if wire is ReportFormat.BITS:
        pattern = rf"^[01]{{{len(question.options)}}}\Z"
        message = (
            _("The randomized answer is malformed.")
            if reports
            else _("Please answer yes or no for every option.")  # tick_fields.joined_ticks
        )
        return StringField(question.text, validators=[*presence, Regexp(pattern, message=message)])
    if wire in _REPORT_PATTERNS:
        message = _("The randomized answer is malformed.")
        shape = Regexp(_REPORT_PATTERNS[wire](question), message=message)
        return StringField(question.text, validators=[*presence, shape, HonestReport(question)])
    if wire is ReportFormat.OPTION:
        indexes = [option_value(question, index) for index in range(len(question.options))]
        return RadioField(question.text, choices=indexes, validators=presence)
    padded = [FixedWidthNumber()] if wire is ReportFormat.PADDED_NUMBER else []
    in_range = _honest_reports(question) if reports and question.sensitive else _answers(question)
    return IntegerField(question.text, validators=[*presence, *padded, in_range])


def _posted_format(question: Question, reports: bool) -> ReportFormat:
    """How the question's field is posted: the browser's reports in its mechanism's
    format, true answers in its type's."""
    return question.mechanism.report_format if reports else question.type.answer_format


def _answers(question: Question) -> NumberRange:
    """A number question's true answers (or a plain question's reports): [min, max]."""
    assert question.min is not None and question.max is not None
    low, high = question.min, question.max
    message = _(
        "Please give a whole number from %(low)s to %(high)s.",
        low=format_decimal(low),
        high=format_decimal(high),
    )
    return NumberRange(low, high, message=message)


def _honest_reports(question: Question) -> NumberRange:
    """The reports an honest browser sends for a randomized number: its mechanism's
    ``report_range``, so one forged report moves the mean by a known amount at most."""
    low, high = question.mechanism.report_range()
    # The import refuses a question whose honest range passes this; one stored before
    # that check still never gets a report its tally cell cannot hold.
    low, high = max(low, -LARGEST_REPORT), min(high, LARGEST_REPORT)
    message = _(
        "The randomized answer is not one this question’s randomization produces "
        "(a whole number from %(low)s to %(high)s).",
        low=format_decimal(low),
        high=format_decimal(high),
    )
    return NumberRange(low, high, message=message)


def build_response_form(
    survey: Survey,
    formdata: MultiDict[str, str] | None = None,
    not_applicable: frozenset[str] = frozenset(),
) -> BaseForm:
    """The form for ``survey``; the questions in ``not_applicable`` (``posted_not_applicable``)
    take whatever was posted for them, which is never used: they are stored as not
    applicable."""
    reports = formdata is not None and sent_by_browser(formdata)
    fields: list[tuple[str, Field]] = [
        (
            question.key,
            HiddenField(validators=[Optional()])
            if question.key in not_applicable
            else _answer_field(question, reports),
        )
        for question in survey.questions
    ]
    incomplete = _("The form is incomplete. Please reload the page.")
    altered = _("The form was changed after it left this site.")
    fields += [
        (
            "submission_id",
            HiddenField(validators=[InputRequired(message=incomplete), IssuedFormToken(survey)]),
        ),
        ("randomized", HiddenField(validators=[Optional(), AnyOf(["client"], message=altered)])),
        (
            "invitation",
            HiddenField(
                validators=[
                    Optional(),
                    Regexp(
                        rf"^{TICKET_PATTERN.pattern}\Z", message=_("The invitation is malformed.")
                    ),
                ]
            ),
        ),
        # Checked against the survey's design in form_problems when the browser randomized.
        ("design", HiddenField(validators=[Optional()])),
        ("agreed", HiddenField(validators=[Optional(), AnyOf(["yes"], message=altered)])),
    ]
    form = BaseForm(fields)
    form.process(formdata)
    return form


def form_problems(
    survey: Survey, formdata: MultiDict[str, str], controls: frozenset[str] = CONTROL_FIELDS
) -> list[str]:
    """Problems with the POST's shape that field validation does not see; ``controls``
    are the fields it may carry besides the answers (a section's page has more)."""
    allowed = controls | {q.key for q in survey.questions}
    problems = [
        _("The form sent an unexpected field, %(name)s.", name=repr(name))
        for name in formdata
        if name not in allowed
    ]
    problems += [
        _("The field %(name)s was sent more than once.", name=repr(name))
        for name in formdata
        if name in allowed and len(formdata.getlist(name)) > 1
    ]
    if survey.consent and formdata.get("agreed") != "yes":
        problems.append(_("Please read the consent text and agree before answering."))
    if sent_by_browser(formdata) and formdata.get("design") != survey.design:
        # The page's script randomized with parameters that are not this survey's now:
        # storing its reports would mix designs and misstate their ε.
        problems.append(
            _(
                "The survey’s privacy settings changed since this page was loaded, so your "
                "randomized answers cannot be used."
            )
        )
    return problems


def answered_values(
    survey: Survey, form: BaseForm, not_applicable: frozenset[str] = frozenset()
) -> dict[str, Value | Report | None]:
    """The validated fields as values (server path) or reports (browser path); None for
    a question in ``not_applicable``, whatever was posted for it: discarded, never
    randomized or stored."""
    reports = form["randomized"].data == "client"
    return {
        q.key: None if q.key in not_applicable else _typed(q, form[q.key].data, reports)
        for q in survey.questions
    }


def posted_not_applicable(
    survey: Survey, formdata: MultiDict[str, str], earlier: Mapping[str, object] | None = None
) -> frozenset[str]:
    """The questions this POST's plain answers leave out (``display_logic``); ``earlier``
    holds the plain answers of the sections before, carried (``carried_plain_answers``).

    Decided from the posted plain answers alone, before validation: a plain answer that
    does not parse counts as none (its field then refuses the form anyway).
    """
    reports = sent_by_browser(formdata)
    by_key = {q.key: q for q in survey.questions}
    answers: dict[str, object] = dict(earlier or {})
    for key in condition_questions(survey.questions) - answers.keys():
        try:
            answers[key] = _posted_format(by_key[key], reports).parse(formdata.get(key, ""))
        except ValueError:
            answers[key] = None
    return not_applicable(survey.questions, answers)


def _typed(question: Question, data: object, reports: bool) -> Value | Report | None:
    if data is None or data == "":
        return None  # skipped: stored as missing, never randomized into an answer
    return _posted_format(question, reports).parse(str(data))
