"""Routes for respondents. Each parses the request, calls one service, renders a page.

Privacy invariant 1 shapes the error handling here: a refused form is shown again empty,
never pre-filled, so a true answer is not echoed back into a page, a log or a cache.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import RequestEntityTooLarge
from wtforms.form import BaseForm

from ..answered import forget_finished_surveys, has_answered, holds_records, mark_answered
from ..answers import (
    fixed_width_number,
    fixed_width_pattern,
    listed_numbers,
    number_digits,
    option_value,
    randomize_response,
    report_alternatives,
)
from ..bursts import burst_monitor
from ..db import get_db
from ..i18n import current_language
from ..i18n import gettext as _
from ..invitations import InvitationBusyError, InvitationError, invitation_is_open
from ..ledger import epsilon_text, method_name
from ..limits import limit_submissions
from ..responses import SubmissionConflictError, find_response, record_response
from ..surveys import Survey, get_survey, list_public_surveys
from .forms import (
    answered_values,
    build_response_form,
    form_problems,
    new_form_token,
    stored_submission_id,
)
from .wording import UNAVAILABLE, error_wording, stored_day, typing_examples

bp = Blueprint("respond", __name__)
# The wire values of options and numbers and the thank-you page's cells: equal lengths.
bp.add_app_template_global(option_value)
# Words and numbers in the page's language (wording.py, ledger.py).
for helper in (
    fixed_width_number,
    fixed_width_pattern,
    listed_numbers,
    number_digits,
    report_alternatives,
    error_wording,
    typing_examples,
    stored_day,
    epsilon_text,
    method_name,
):
    bp.add_app_template_global(helper)


@bp.before_request
def forget_closed_surveys() -> None:
    """A browser coming back drops its records of surveys that no longer take answers."""
    if holds_records():
        forget_finished_surveys(str(row["slug"]) for row in list_public_surveys(get_db()))


def _survey_or_404(slug: str) -> Survey:
    """The survey in the page's language (or its own first language if it has no other)."""
    survey = get_survey(get_db(), slug)
    if survey is None:
        abort(404, description=_("There is no survey at this address."))
    return survey.localized(current_language())


def _render(template: str, survey: Survey, **context: Any) -> str:
    """A page about one survey; its language switcher offers the survey's languages."""
    return render_template(template, survey=survey, page_languages=survey.languages, **context)


def _unavailable(reason: str) -> tuple[str, int]:
    title, message = UNAVAILABLE[reason]
    return render_template("respond/unavailable.html", title=title, message=message), 403


def _render_form(
    survey: Survey,
    problems: list[str] | None = None,
    field_errors: dict[str, list[str]] | None = None,
    status: int = 200,
    invitation: str | None = None,
) -> tuple[str, int]:
    page = _render(
        "respond/survey.html",
        survey,
        submission_id=new_form_token(survey),
        invitation=invitation if survey.by_invitation else None,
        problems=problems or [],
        field_errors=field_errors or {},
    )
    return page, status


def _reported_answers(survey: Survey, form: BaseForm) -> tuple[dict[str, Any], str]:
    """The answers to store and who randomized them.

    The browser's script sends ``randomized=client`` with reports it already made;
    anything else is a true answer, randomized here before any database call.
    """
    values = answered_values(survey, form)
    if form["randomized"].data == "client":
        return values, "client"
    return randomize_response(survey, values), "server"  # type: ignore[arg-type]


@bp.get("/")
def index() -> str:
    return render_template("respond/index.html", surveys=list_public_surveys(get_db()))


@bp.get("/s/<slug>")
def survey_form(slug: str) -> tuple[str, int]:
    survey = _survey_or_404(slug)
    invitation = request.args.get("invitation")
    if not survey.accepts_responses:
        return _unavailable(survey.status)
    if survey.by_invitation and not invitation_is_open(get_db(), survey, invitation):
        return _unavailable("invitation")
    if not survey.by_invitation and has_answered(survey.slug):
        return _render("respond/already_answered.html", survey), 200
    if survey.consent and request.args.get("agree") != "yes":
        # The consent step is a plain link: agreeing stores nothing, not even a cookie.
        page = _render("respond/consent.html", survey, invitation=invitation)
        return page, 200
    return _render_form(survey, invitation=invitation)


@bp.post("/s/<slug>")
@limit_submissions
def submit(slug: str) -> tuple[str, int]:
    survey = _survey_or_404(slug)
    if not survey.accepts_responses:
        return _unavailable(survey.status)
    form = build_response_form(survey, request.form)
    problems = form_problems(survey, request.form)
    if problems or not form.validate():
        invitation = form["invitation"].data if not form["invitation"].errors else None
        return _render_form(survey, problems, form.errors, status=400, invitation=invitation)
    reported, randomized_by = _reported_answers(survey, form)
    db = get_db()
    submission_id = stored_submission_id(form)
    try:
        stored = find_response(db, survey, submission_id)
        if stored is None:
            if not survey.by_invitation and has_answered(survey.slug):
                return _render("respond/already_answered.html", survey), 409
            stored = record_response(
                db, survey, reported, submission_id, invitation=form["invitation"].data
            )
            burst_monitor(current_app).record(survey.id)
            if not survey.by_invitation:
                mark_answered(survey.slug)
    except SubmissionConflictError:
        return _render_form(survey, [_("The form does not belong to this survey.")], status=400)
    except InvitationError:
        return _unavailable("invitation")
    except InvitationBusyError:
        busy = _(
            "The survey was too busy to store your answers safely. Your link still works: "
            "please wait a moment before sending them."
        )
        return _render_form(survey, [busy], status=503, invitation=form["invitation"].data)
    page = _render("respond/thanks.html", survey, stored=stored, randomized_by=randomized_by)
    return page, 200


@bp.app_errorhandler(CSRFError)
def csrf_refused(error: CSRFError) -> tuple[str, int]:
    return _refused_post(_("The form had expired or did not come from this site."))


@bp.app_errorhandler(RequestEntityTooLarge)
def too_large(error: RequestEntityTooLarge) -> tuple[str, int]:
    return _refused_post(_("The form sent was far larger than any answer."))


def _refused_post(message: str) -> tuple[str, int]:
    """A refused POST: the survey's form again when it came from one, else an error page."""
    if request.endpoint == "respond.submit" and request.view_args:
        survey = get_survey(get_db(), str(request.view_args["slug"]))
        if survey is not None:
            return _render_form(survey, [message], status=400)
    page = render_template(
        "error.html", title=_("Request refused"), message=message, nothing_stored=True
    )
    return page, 400
