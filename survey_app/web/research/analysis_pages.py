"""The dashboard's analyses: a sensitive share by group, and the randomized-response
regression, each as a page and a CSV. Same access as the dashboard (the owner and the
researchers it is shared with); the work is in ``survey_app.domain.analyses``.

While another request counts a survey's responses from scratch (``crosstabs``: about
three seconds a million), an analysis of the same survey that needs the same waits at
most ``PATIENCE_SECONDS``, then answers 503 with a page that reloads itself after
``RETRY_SECONDS``. A researcher gets the figures at most a couple of seconds later than
if the request had waited, and a waiting request does not hold one of the few sync
workers that respondents' pages need. Half a second covers a whole cold count of up to
about 150,000 responses, so most surveys never show that page.
"""

from __future__ import annotations

import math

from flask import Blueprint, Response, abort, render_template, request

from survey_app.domain.analyses import (
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
from survey_app.privacy import INTERVAL_METHODS
from survey_app.storage.crosstabs import CountsBeingPrepared
from survey_app.storage.surveys import Survey
from survey_app.web.database_session import get_db
from survey_app.web.i18n import current_language, format_decimal
from survey_app.web.i18n import gettext as _
from survey_app.web.research.access import (
    CONFIDENCE_LEVELS,
    csv_download,
    interval_options,
    visible_survey,
)

PATIENCE_SECONDS = 0.5
RETRY_SECONDS = 2
# Below this a p-value is shown as "< 0.001", as reports give it; the CSV has every digit.
SMALLEST_P_SHOWN = 0.001

bp = Blueprint("analysis", __name__)


@bp.errorhandler(CountsBeingPrepared)
def being_prepared(_error: CountsBeingPrepared) -> tuple[str, int, dict[str, str]]:
    """Ask the browser to come back shortly (``Refresh`` reloads the page by itself,
    ``Retry-After`` tells scripts), instead of holding a worker while the count runs."""
    page = render_template(
        "error.html",
        title=_("The analysis is being prepared"),
        message=_(
            "The responses are being counted for an analysis of this survey. This page "
            "tries again by itself in a moment."
        ),
    )
    seconds = str(RETRY_SECONDS)
    return page, 503, {"Retry-After": seconds, "Refresh": seconds}


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
    confidence, method = interval_options()
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
    confidence, method = interval_options()
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
        patience=PATIENCE_SECONDS,
    )


@bp.get("/surveys/<slug>/groups")
def groups(slug: str) -> tuple[str, int]:
    survey = visible_survey(slug).localized(current_language())
    if "question" not in request.args:
        return _page("research/groups.html", survey)
    try:
        return _page("research/groups.html", survey, analysis=_groups(survey))
    except AnalysisError as error:
        return _page("research/groups.html", survey, error=str(error))


@bp.get("/surveys/<slug>/groups.csv")
def groups_csv(slug: str) -> Response:
    survey = visible_survey(slug)  # the main language, as in every export
    try:
        analysis = _groups(survey)
    except AnalysisError as error:
        abort(400, description=str(error))
    return csv_download(group_csv(survey, analysis), f"{slug}-groups.csv", survey, "aggregate")


def p_value_text(p: float | None) -> str:
    """A p-value as reports quote it: three decimals, or "< 0.001" below that (a p-value
    of 0.000 reads as impossible, and more digits claim more than a Wald test gives)."""
    if p is None:
        return "—"
    if p < SMALLEST_P_SHOWN:
        return _("< %(p)s", p=format_decimal(SMALLEST_P_SHOWN, "0.000"))
    return format_decimal(p, "0.000")


def odds_ratio_text(ratio: float | None) -> str:
    """An odds ratio to two decimals, as reports give it, in powers of ten when two
    decimals would show nothing or a long row of digits (0 and ∞ as they are)."""
    if ratio is None:
        return "—"
    if 0 < ratio < 0.01 or 100_000 <= ratio < math.inf:
        return format_decimal(ratio, "0.00E0")
    return format_decimal(ratio, "#,##0.00")


def _regression(survey: Survey) -> RegressionResult:
    confidence, _method = interval_options()
    return fit_regression(
        get_db(),
        survey,
        _outcome_key(),
        request.args.getlist("covariates"),
        _option(),
        confidence,
        patience=PATIENCE_SECONDS,
    )


@bp.get("/surveys/<slug>/regression")
def regression(slug: str) -> tuple[str, int]:
    survey = visible_survey(slug).localized(current_language())
    if "outcome" not in request.args:
        return _page("research/regression.html", survey, chosen=())
    chosen = tuple(request.args.getlist("covariates"))
    try:
        return _page(
            "research/regression.html",
            survey,
            result=_regression(survey),
            chosen=chosen,
            odds_ratio_text=odds_ratio_text,
            p_value_text=p_value_text,
        )
    except AnalysisError as error:
        return _page("research/regression.html", survey, error=str(error), chosen=chosen)


@bp.get("/surveys/<slug>/regression.csv")
def regression_download(slug: str) -> Response:
    survey = visible_survey(slug)
    try:
        result = _regression(survey)
    except AnalysisError as error:
        abort(400, description=str(error))
    lines = regression_csv(survey, result)
    return csv_download(lines, f"{slug}-regression.csv", survey, "aggregate")
