"""The dashboard's analyses: a sensitive share by group, and the randomized-response
regression, each as a page and a CSV. Same access as the dashboard (the owner and the
researchers it is shared with); the work is in ``survey_app.analysis``."""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template, request

from ..analysis import (
    AnalysisError,
    GroupAnalysis,
    RegressionResult,
    estimate_groups,
    fit_regression,
    group_csv,
    outcome_questions,
    plain_questions,
    regression_csv,
)
from ..db import get_db
from ..i18n import current_language
from ..i18n import gettext as _
from ..privacy import INTERVAL_METHODS
from ..surveys import Survey
from .auth import require_researcher
from .routes import CONFIDENCE_LEVELS, _csv_download, _interval_options, _survey_or_404, _words

bp = Blueprint("analysis", __name__, url_prefix="/research")
bp.before_request(require_researcher)
bp.context_processor(_words)


def _option() -> int | None:
    """``option`` from the query, or the ``KEY.I`` form of the outcome (a dot never occurs
    in a question key), which lets one select choose a question and its option."""
    asked = request.args.get("option", "")
    outcome = request.args.get("outcome", "")
    if not asked and "." in outcome:
        asked = outcome.partition(".")[2]
    if not asked:
        return None
    if not asked.isdigit():
        abort(400, description=_("The option must be an option's number."))
    return int(asked)


def _outcome_key() -> str:
    return request.args.get("outcome", "").partition(".")[0]


def _page(template: str, survey: Survey, **context: object) -> tuple[str, int]:
    confidence, method = _interval_options()
    page = render_template(
        template,
        survey=survey,
        outcomes=outcome_questions(survey),  # the regression's
        sensitive=survey.sensitive_questions,  # by group: numbers too
        plains=plain_questions(survey),
        confidence=confidence,
        method=method,
        confidence_levels=CONFIDENCE_LEVELS,
        methods=INTERVAL_METHODS,
        query=request.args.to_dict(flat=False),
        **context,
    )
    return page, 400 if context.get("error") else 200


def _groups(survey: Survey) -> GroupAnalysis:
    confidence, method = _interval_options()
    return estimate_groups(
        get_db(),
        survey,
        request.args.get("question"),
        request.args.get("by"),
        _option(),
        request.args.get("first") or None,
        request.args.get("second") or None,
        confidence,
        method,
    )


@bp.get("/surveys/<slug>/groups")
def groups(slug: str) -> tuple[str, int]:
    survey = _survey_or_404(slug).localized(current_language())
    if "question" not in request.args:
        return _page("research/groups.html", survey)
    try:
        return _page("research/groups.html", survey, analysis=_groups(survey))
    except AnalysisError as error:
        return _page("research/groups.html", survey, error=str(error))


@bp.get("/surveys/<slug>/groups.csv")
def groups_csv(slug: str) -> Response:
    survey = _survey_or_404(slug)  # the main language, as in every export
    try:
        analysis = _groups(survey)
    except AnalysisError as error:
        abort(400, description=str(error))
    return _csv_download(group_csv(survey, analysis), f"{slug}-groups.csv", survey, "aggregate")


def _regression(survey: Survey) -> RegressionResult:
    confidence, _method = _interval_options()
    return fit_regression(
        get_db(),
        survey,
        _outcome_key(),
        request.args.getlist("covariates"),
        _option(),
        confidence,
    )


@bp.get("/surveys/<slug>/regression")
def regression(slug: str) -> tuple[str, int]:
    survey = _survey_or_404(slug).localized(current_language())
    if "outcome" not in request.args:
        return _page("research/regression.html", survey, chosen=())
    chosen = tuple(request.args.getlist("covariates"))
    try:
        return _page("research/regression.html", survey, result=_regression(survey), chosen=chosen)
    except AnalysisError as error:
        return _page("research/regression.html", survey, error=str(error), chosen=chosen)


@bp.get("/surveys/<slug>/regression.csv")
def regression_download(slug: str) -> Response:
    survey = _survey_or_404(slug)
    try:
        result = _regression(survey)
    except AnalysisError as error:
        abort(400, description=str(error))
    lines = regression_csv(survey, result)
    return _csv_download(lines, f"{slug}-regression.csv", survey, "aggregate")
