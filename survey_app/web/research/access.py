"""Who may open a researcher's page, and the request parts every such page shares.

Every page under /research/ that names a survey gets it from here, so the rules are
written once: a survey the researcher may not see is a 404 whether it exists or not (slugs
of other people's surveys cannot be probed); one they only view is a 403 for the owner's
actions (they know it exists, they may not run it); a draft in the builder is its owner's
alone, a 404 for everyone else. The login itself is checked before any page runs, by the
guard on the research blueprint (``survey_app.web.research``).
"""

from __future__ import annotations

from collections.abc import Iterable

from flask import Response, abort, request, url_for

from survey_app.privacy import DEFAULT_INTERVAL_METHOD, INTERVAL_METHODS
from survey_app.storage.surveys import Survey, can_see, get_survey
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.research.auth import current_researcher
from survey_app.web.research.studies import is_owner

CONFIDENCE_LEVELS = (0.90, 0.95, 0.99)


def visible_survey(slug: str) -> Survey:
    """The survey, if this researcher owns it or it is shared with them; else 404."""
    db = get_db()
    survey = get_survey(db, slug)
    researcher = current_researcher()
    if survey is None or researcher is None or not can_see(db, survey, researcher.id):
        abort(404, description=_("There is no survey with that name."))
    return survey


def owned_survey(slug: str, refusal: str) -> Survey:
    """The survey, if this researcher owns it: 404 as ``visible_survey`` for one they
    cannot see, 403 with ``refusal`` (the page's words for what only owners do) for one
    they only view."""
    survey = visible_survey(slug)
    researcher = current_researcher()
    if researcher is None or not is_owner(survey, researcher.id):
        abort(403, description=refusal)
    return survey


def owned_draft(slug: str) -> Survey:
    """The draft, if it is this researcher's; 404 alike when absent, someone else's or no
    longer a draft, so nobody can probe for other people's drafts."""
    survey = get_survey(get_db(), slug)
    researcher = current_researcher()
    if (
        survey is None
        or researcher is None
        or survey.owner_id != researcher.id
        or survey.status != "draft"
    ):
        abort(404, description=_("There is no draft survey of yours with that name."))
    return survey


def interval_options() -> tuple[float, str]:
    """``confidence`` and ``method`` from the query string; 400 for anything else."""
    confidence = request.args.get("confidence", 0.95, type=float)
    method = request.args.get("method", DEFAULT_INTERVAL_METHOD)
    if confidence not in CONFIDENCE_LEVELS:
        abort(
            400, description=_("The confidence must be one of %(levels)s.", levels="90%, 95%, 99%")
        )
    if method not in INTERVAL_METHODS:
        abort(400, description=_("There is no interval method by that name."))
    return confidence, method


def attachment(body: str | Iterable[str], mimetype: str, filename: str) -> Response:
    """A download: the browser saves ``body`` as ``filename`` instead of showing it."""
    response = Response(body, mimetype=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def csv_download(lines: Iterable[str], filename: str, survey: Survey, kind: str) -> Response:
    """A CSV file, linked (``rel="describedby"``) to the codebook that says what its
    columns mean, for the same interval options as the request's."""
    response = attachment(lines, "text/csv", filename)
    confidence, method = interval_options()
    codebook_url = url_for(
        "research.dashboard.codebook_json",
        slug=survey.slug,
        kind=kind,
        confidence=confidence,
        method=method,
    )
    response.headers["Link"] = f'<{codebook_url}>; rel="describedby"'
    return response
