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

from ..answered import has_answered, mark_answered
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
from ..invitations import InvitationBusyError, InvitationError, invitation_is_open
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

bp = Blueprint("respond", __name__)
# The wire values of options and numbers and the thank-you page's cells: equal lengths.
bp.add_app_template_global(option_value)
for helper in (fixed_width_number, fixed_width_pattern, listed_numbers, number_digits):
    bp.add_app_template_global(helper)
bp.add_app_template_global(report_alternatives)


def _survey_or_404(slug: str) -> Survey:
    survey = get_survey(get_db(), slug)
    if survey is None:
        abort(404, description="There is no survey at this address.")
    return survey


UNAVAILABLE = {
    "draft": ("Not open yet", "This survey is not open for answers yet."),
    "closed": ("Survey closed", "This survey is closed and no longer accepts answers."),
    "invitation": (
        "Invitation needed",
        "This survey can only be answered through a personal invitation link, and this link "
        "is missing, not valid, or has already been used.",
    ),
}


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
    page = render_template(
        "respond/survey.html",
        survey=survey,
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
        return render_template("respond/already_answered.html", survey=survey), 200
    if survey.consent and request.args.get("agree") != "yes":
        # The consent step is a plain link: agreeing stores nothing, not even a cookie.
        page = render_template("respond/consent.html", survey=survey, invitation=invitation)
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
                return render_template("respond/already_answered.html", survey=survey), 409
            stored = record_response(
                db, survey, reported, submission_id, invitation=form["invitation"].data
            )
            burst_monitor(current_app).record(survey.id)
            if not survey.by_invitation:
                mark_answered(survey.slug)
    except SubmissionConflictError as err:
        return _render_form(survey, [str(err)], status=400)
    except InvitationError:
        return _unavailable("invitation")
    except InvitationBusyError:
        busy = "The survey was too busy to store your answers safely; nothing was stored. "
        busy += "Your link still works: please answer again in a moment."
        return _render_form(survey, [busy], status=503, invitation=form["invitation"].data)
    page = render_template(
        "respond/thanks.html", survey=survey, stored=stored, randomized_by=randomized_by
    )
    return page, 200


@bp.app_errorhandler(CSRFError)
def csrf_refused(error: CSRFError) -> tuple[str, int]:
    return _refused_post(
        "The form had expired or did not come from this site, so nothing was stored. "
        "Please answer again."
    )


@bp.app_errorhandler(RequestEntityTooLarge)
def too_large(error: RequestEntityTooLarge) -> tuple[str, int]:
    return _refused_post("The form sent was far larger than any answer; nothing was stored.")


def _refused_post(message: str) -> tuple[str, int]:
    """A refused POST: the survey's form again when it came from one, else an error page."""
    if request.endpoint == "respond.submit" and request.view_args:
        survey = get_survey(get_db(), str(request.view_args["slug"]))
        if survey is not None:
            return _render_form(survey, [message], status=400)
    return render_template("error.html", title="Request refused", message=message), 400
