"""Routes for respondents. Each parses the request, calls one service, renders a page.

Privacy invariant 1 shapes the error handling here: a refused form is shown again empty,
never pre-filled, so a true answer is not echoed back into a page, a log or a cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response as Redirect
from wtforms.form import BaseForm

from survey_app.domain.answers import randomize_response
from survey_app.domain.display_order import display_parts
from survey_app.storage.invitations import (
    InvitationError,
    invitation_is_open,
    read_ticket,
    spend_invitation,
    ticket_is_open,
)
from survey_app.storage.responses import (
    SubmissionConflictError,
    SurveyNotOpenError,
    find_response,
    record_response,
)
from survey_app.storage.surveys import Survey, answerable_slugs, get_survey, list_public_surveys
from survey_app.web.answered_cookie import (
    forget_finished_surveys,
    has_answered,
    holds_records,
    mark_answered,
)
from survey_app.web.bursts import burst_monitor
from survey_app.web.database_session import get_db
from survey_app.web.i18n import current_language
from survey_app.web.i18n import gettext as _
from survey_app.web.limits import carried_on, limit_submissions
from survey_app.web.respond.conditions import condition_views
from survey_app.web.respond.forms import (
    answered_values,
    build_response_form,
    form_problems,
    new_form_token,
    posted_not_applicable,
    stored_submission_id,
)
from survey_app.web.respond.scripts import script_addresses, script_response, stylesheet_response
from survey_app.web.respond.section_steps import (
    SectionPage,
    first_page,
    posted_ticket,
    posts_a_section,
    section_step,
)
from survey_app.web.respond.tick_fields import joined_ticks
from survey_app.web.respond.ticket_cookie import (
    forget_ticket,
    keep_ticket,
    kept_ticket,
)
from survey_app.web.respond.wording import UNAVAILABLE
from survey_app.web.signing_keys import signing_keys

bp = Blueprint("respond", __name__)


@bp.before_request
def forget_closed_surveys() -> None:
    """A browser coming back drops its records of surveys that no longer take answers
    (listed on the front page or not: a record is kept while its survey is open)."""
    if holds_records():
        forget_finished_surveys(answerable_slugs(get_db()))


def _visible_survey(slug: str) -> Survey | None:
    """The survey respondents may know of, in the page's language (or its first one).

    A draft is its owner's alone until opened (they preview it in the builder), so its
    address answers as one where no survey exists: it does not even say a survey is there.
    """
    survey = get_survey(get_db(), slug)
    if survey is None or survey.status == "draft":
        return None
    return survey.localized(current_language())


def _survey_or_404(slug: str) -> Survey:
    survey = _visible_survey(slug)
    if survey is None:
        abort(404, description=_("There is no survey at this address."))
    return survey


def _render(template: str, survey: Survey, **context: Any) -> str:
    """A page about one survey; its language switcher offers the survey's languages."""
    return render_template(template, survey=survey, page_languages=survey.languages, **context)


def _unavailable(reason: str) -> tuple[str, int]:
    title, message = UNAVAILABLE[reason]
    return render_template("respond/unavailable.html", title=title, message=message), 403


@dataclass(frozen=True)
class Refusal:
    """Why a POST was refused, said on the form shown again (never what it sent)."""

    problems: list[str]
    field_errors: dict[str, list[str]] = field(default_factory=dict)
    status: int = 400


def _survey_page(
    survey: Survey,
    ticket: str | None,
    agreed: bool,
    refusal: Refusal | None = None,
    section: SectionPage | None = None,
    link: str | None = None,
) -> tuple[str, int]:
    """The page this survey shows a respondent now: the form, or why not.

    The one place that decides whether the questions may be shown, for the GET and for
    every refused POST alike, so a refused POST never shows more than the GET would: a
    survey that takes no answers says so; one by invitation needs an unused answer
    ticket (``ticket``: the form's, or the one this browser keeps), else an open link
    (``link``: the GET's ``invitation``) gets the page that spends it; a browser that
    answered is told so; consent comes before the questions (``agreed``: the GET's
    ``agree=yes``, or the ``agreed`` field the form carries only once the person has
    agreed). A refusal is said on the form, which comes back empty.

    A sectioned survey's page holds its first section (``section`` None: a fresh form,
    with or without JavaScript) and the address of the others, which ``sections.js``
    fetches (``other_sections``), so that a page without JavaScript carries one section
    only; or one section's page of the way through without JavaScript
    (``section_steps``), which loads no script.
    """
    status = refusal.status if refusal else 200
    withheld = _withheld(survey, ticket, agreed, status, link)
    if withheld:
        return withheld
    token = section.submission_id if section else new_form_token(survey)
    if survey.sections and section is None:
        carried: SectionPage | None = first_page(survey, token)
    else:
        carried = section
    page = _render(
        "respond/survey.html",
        survey,
        scripts=[] if section else script_addresses(survey),
        conditions=condition_views(survey),
        submission_id=token,
        shown_section=section.section if section else None,
        sections_in_page=[section.section if section else 0],
        other_sections=_other_sections_address(survey) if not section else None,
        carried=carried.carried if carried else None,
        shown_parts=display_parts(survey.parts, survey.part_orders),
        invitation=ticket if survey.by_invitation else None,
        problems=refusal.problems if refusal else [],
        field_errors=refusal.field_errors if refusal else {},
    )
    return page, status


def _withheld(
    survey: Survey,
    ticket: str | None,
    agreed: bool,
    status: int = 200,
    link: str | None = None,
) -> tuple[str, int] | None:
    """The page shown instead of the questions, if they may not be shown now (see
    ``_survey_page``); None when they may."""
    if not survey.accepts_responses:
        return _unavailable(survey.status)
    if survey.by_invitation and not ticket_is_open(get_db(), survey, ticket, signing_keys()):
        if invitation_is_open(get_db(), survey, link):
            # The link is spent by the POST this page makes, never by this GET: mail
            # scanners open links. The consent, if any, is agreed to by that same button.
            return _render("respond/consent.html", survey, invitation=link), status
        return _unavailable("invitation")
    if not survey.by_invitation and has_answered(survey.slug):
        return _render("respond/already_answered.html", survey), status
    if survey.consent and not agreed:
        # The consent step is a plain link: agreeing stores nothing, not even a cookie.
        return _render("respond/consent.html", survey), status
    return None


def _other_sections_address(survey: Survey) -> str | None:
    """Where ``sections.js`` fetches a sectioned survey's other sections, with what the
    page itself was shown for (its language, the consent given; an answer ticket goes in
    its cookie, ``ticket_cookie``, never in an address)."""
    if len(survey.sections) < 2:
        return None
    return url_for(
        "respond.other_sections",
        slug=survey.slug,
        lang=current_language(),
        agree="yes" if survey.consent else None,
    )


def _reported_answers(
    survey: Survey, form: BaseForm, not_applicable: frozenset[str]
) -> tuple[dict[str, Any], str]:
    """The answers to store and who randomized them.

    The browser's script sends ``randomized=client`` with reports it already made;
    anything else is a true answer, randomized here before any database call. A question
    in ``not_applicable`` has none: what was posted for it is dropped, unrandomized.
    """
    values = answered_values(survey, form, not_applicable)
    if form["randomized"].data == "client":
        return values, "client"
    return randomize_response(survey, values), "server"  # type: ignore[arg-type]


@bp.get("/")
def index() -> str:
    """The surveys their owners chose to list; any other open survey is answered at the
    address its researcher sends."""
    return render_template("respond/index.html", surveys=list_public_surveys(get_db()))


@bp.get("/js/<path:name>")
def script(name: str) -> Response:
    """A respondent page's script, minified (``web/respond/scripts.py``)."""
    return script_response(name)


@bp.get("/css/style.css")
def stylesheet() -> Response:
    """Every page's stylesheet, minified (``web/respond/scripts.py``)."""
    return stylesheet_response()


@bp.get("/s/<slug>")
def survey_form(slug: str) -> tuple[str, int]:
    survey = _survey_or_404(slug)
    agreed = request.args.get("agree") == "yes"
    return _survey_page(survey, kept_ticket(), agreed, link=request.args.get("invitation"))


@bp.post("/s/<slug>/start")
@limit_submissions
def start(slug: str) -> Redirect | tuple[str, int]:
    """Spend an invitation link for an answer ticket (``storage/invitations.py``), kept in
    this browser (``ticket_cookie``), and show the questions by a fresh GET, so that a
    reload asks again for the page, not for the link to be spent twice."""
    survey = _survey_or_404(slug)
    if not survey.accepts_responses:
        return _unavailable(survey.status)
    if not survey.by_invitation:
        abort(404)
    try:
        ticket = spend_invitation(
            get_db(), survey, request.form.get("invitation"), signing_keys()[-1]
        )
    except InvitationError:
        return _unavailable("invitation")
    agree = "yes" if survey.consent else None
    questions = url_for("respond.survey_form", slug=slug, lang=current_language(), agree=agree)
    response = redirect(questions, 303)
    keep_ticket(response, survey.slug, ticket)
    return response


@bp.get("/s/<slug>/sections")
def other_sections(slug: str) -> tuple[str, int]:
    """A sectioned survey's sections after the first, for ``static/sections.js`` to add
    to the page it walks: what the page's GET would show, no more (404 where it would
    show no questions). No answer is sent to fetch them; the address's query, like any
    respondent page's, stays out of the access log (``respondent_query``)."""
    survey = _survey_or_404(slug)
    agreed = request.args.get("agree") == "yes"
    if len(survey.sections) < 2 or _withheld(survey, kept_ticket(), agreed):
        abort(404)
    page = _render(
        "respond/other_sections.html",
        survey,
        conditions=condition_views(survey),
        shown_section=None,
        sections_in_page=range(1, len(survey.sections)),
        scripted=True,
        shown_parts=display_parts(survey.parts, survey.part_orders),
        problems=[],
        field_errors={},
    )
    return page, 200


@bp.post("/s/<slug>")
@limit_submissions
def submit(slug: str) -> tuple[str, int]:
    survey = _survey_or_404(slug)
    if not survey.accepts_responses:
        return _unavailable(survey.status)
    posted = joined_ticks(survey, request.form)
    if posts_a_section(survey, posted):
        step = section_step(survey, posted)
        if step.reports is None or step.form is None:
            if step.status == 200:
                carried_on()
            refusal = Refusal(step.problems, step.field_errors, step.status)
            agreed = posted.get("agreed") == "yes"
            return _survey_page(survey, posted_ticket(posted), agreed, refusal, step.page)
        form, reported, randomized_by = step.form, step.reports, "server"
        hidden = step.not_applicable
    else:
        hidden = posted_not_applicable(survey, posted)
        form = build_response_form(survey, posted, hidden)
        problems = form_problems(survey, posted)
        if problems or not form.validate():
            ticket = form["invitation"].data if not form["invitation"].errors else None
            agreed = form["agreed"].data == "yes"
            return _survey_page(survey, ticket, agreed, Refusal(problems, form.errors))
        reported, randomized_by = _reported_answers(survey, form, hidden)
    agreed = form["agreed"].data == "yes"
    db = get_db()
    submission_id = stored_submission_id(form)
    ticket = form["invitation"].data
    try:
        answer_ticket = (
            read_ticket(survey, ticket, signing_keys()) if survey.by_invitation else None
        )
        stored = find_response(db, survey, submission_id)
        if stored is None:
            if not survey.by_invitation and has_answered(survey.slug):
                return _render("respond/already_answered.html", survey), 409
            stored = record_response(
                db,
                survey,
                reported,
                submission_id,
                ticket=answer_ticket,
                not_applicable=hidden,
            )
            burst_monitor(current_app).record(survey.id)
            if not survey.by_invitation:
                mark_answered(survey.slug)
        if survey.by_invitation:
            forget_ticket(survey.slug)
    except SubmissionConflictError:
        conflict = Refusal([_("The form does not belong to this survey.")])
        return _survey_page(survey, ticket, agreed, conflict)
    except InvitationError:
        return _unavailable("invitation")
    except SurveyNotOpenError:
        return _unavailable("closed")
    page = _render("respond/thanks.html", survey, stored=stored, randomized_by=randomized_by)
    return page, 200


@bp.app_errorhandler(CSRFError)
def csrf_refused(error: CSRFError) -> tuple[str, int]:
    # Flask-WTF read the body looking for the token, so its fields can be read.
    return _refused_post(_("The form had expired or did not come from this site."), request.form)


@bp.app_errorhandler(RequestEntityTooLarge)
def too_large(error: RequestEntityTooLarge) -> tuple[str, int]:
    # The body was not read, and reading it now would raise again: it carries nothing.
    return _refused_post(_("The form sent was far larger than any answer."), {})


def _refused_post(message: str, sent: Mapping[str, str]) -> tuple[str, int]:
    """A POST refused before its view: the survey's page as its GET would show it, else an
    error page.

    The form comes back only where the GET would show it (``sent`` gives the posted
    invitation and agreement, as the GET's query string does); a draft's address answers
    as an unknown one.
    """
    survey = None
    if request.endpoint == "respond.submit" and request.view_args:
        survey = _visible_survey(str(request.view_args["slug"]))
    if survey is not None:
        agreed = sent.get("agreed") == "yes"
        return _survey_page(survey, sent.get("invitation"), agreed, Refusal([message]))
    page = render_template(
        "error.html", title=_("Request refused"), message=message, nothing_stored=True
    )
    return page, 400
