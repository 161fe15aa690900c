"""The survey list, the dashboard and its downloads. Every route here needs a logged-in
researcher who may see the survey. The owner's study controls are on the same blueprint,
in study_pages.py."""

from __future__ import annotations

import json

from flask import Blueprint, Response, abort, current_app, render_template, request
from flask_babel import lazy_gettext as _l

from survey_app import __version__
from survey_app.domain.exports import aggregate_csv, codebook, estimates_json, responses_csv
from survey_app.domain.question_estimates import QuestionEstimate, survey_estimates
from survey_app.domain.sample_plans import plan_survey
from survey_app.privacy import INTERVAL_METHODS, MECHANISMS
from survey_app.privacy.planner import MIN_HALF_WIDTH
from survey_app.storage.backends import stream_rows
from survey_app.storage.surveys import Survey, survey_response_count
from survey_app.web.bursts import burst_monitor
from survey_app.web.database_session import get_db
from survey_app.web.i18n import format_percent
from survey_app.web.i18n import gettext as _
from survey_app.web.research.access import (
    CONFIDENCE_LEVELS,
    attachment,
    csv_download,
    interval_options,
    visible_survey,
)
from survey_app.web.research.auth import current_researcher
from survey_app.web.research.plots import PLOT_WIDTHS, TICKS, PlotRow, interval_svg
from survey_app.web.research.studies import is_owner, study_summaries

bp = Blueprint("dashboard", __name__)

# The interval methods and mechanisms in plain words, not their identifiers; every template
# has them (web/templates.py).
METHOD_NAMES = {
    "wilson": _l("Wilson score interval"),
    "clopper-pearson": _l("Clopper–Pearson exact interval"),
}
MECHANISM_NAMES = {mechanism.name: mechanism.researcher_name for mechanism in MECHANISMS}
STATUS_NAMES = {"draft": _l("draft"), "open": _l("open"), "closed": _l("closed")}


def _estimates(survey: Survey) -> tuple[list[QuestionEstimate], float, str]:
    confidence, method = interval_options()
    return survey_estimates(get_db(), survey, confidence, method), confidence, method


@bp.get("/")
def index() -> str:
    researcher = current_researcher()
    assert researcher is not None  # guaranteed by the research blueprint's guard
    studies = study_summaries(get_db(), researcher.id)
    return render_template("research/index.html", studies=studies)


MAX_PLANNED_RESPONDENTS = 10_000_000
# From this many responses the page warns that the per-response CSV may be cut short:
# over HTTP it streamed 26,000 rows/s on a busy 2-core PostgreSQL server and about
# 100,000 on a quiet SQLite one, and a sync worker is killed after the two minutes of
# docs/operating.md, which ends the download without an error in the file
# (benchmarks/TEN_MILLION.md).
LARGE_EXPORT_ROWS = 1_000_000


@bp.get("/surveys/<slug>")
def dashboard(slug: str) -> str:
    survey = visible_survey(slug)
    estimates, confidence, method = _estimates(survey)
    half_width = request.args.get("half_width", 0.05, type=float)
    if not MIN_HALF_WIDTH <= half_width <= 1:
        abort(
            400,
            description=_(
                "The planner's half-width must lie between %(low)s and 1.", low=MIN_HALF_WIDTH
            ),
        )
    respondents = request.args.get("respondents", 1000, type=int)
    if not 1 <= respondents <= MAX_PLANNED_RESPONDENTS:
        abort(
            400,
            description=_(
                "The planned respondents must be from 1 to %(most)s.",
                most=MAX_PLANNED_RESPONDENTS,
            ),
        )
    researcher = current_researcher()
    assert researcher is not None
    return render_template(
        "research/dashboard.html",
        survey=survey,
        estimates=estimates,
        confidence=confidence,
        method=method,
        confidence_levels=CONFIDENCE_LEVELS,
        methods=INTERVAL_METHODS,
        half_width=half_width,
        respondents=respondents,
        plans=plan_survey(survey, half_width, respondents, confidence),
        responses=survey_response_count(get_db(), survey),
        large_export_rows=LARGE_EXPORT_ROWS,
        burst=burst_monitor(current_app).largest_burst(survey.id),
        owned=is_owner(survey, researcher.id),
    )


def _yes_no_rows(estimates: list[QuestionEstimate]) -> tuple[PlotRow, ...]:
    return tuple(
        (item.question.text, c.estimate.point, c.estimate.low, c.estimate.high)
        for item in estimates
        if item.question.type.is_yes_no
        for c in item.categories
        if c.estimate is not None
    )


def _option_rows(estimates: list[QuestionEstimate], key: str) -> tuple[PlotRow, ...]:
    chosen = [item for item in estimates if item.question.key == key]
    if not chosen or not chosen[0].question.type.has_options:
        abort(404, description=_("There is no choice question with that key."))
    return tuple(
        (c.category, c.display, c.simultaneous.low, c.simultaneous.high)  # type: ignore[misc]
        for c in chosen[0].categories
        if c.simultaneous is not None
    )


@bp.get("/surveys/<slug>/plot.svg")
def plot_svg(slug: str) -> Response:
    """The yes/no questions' estimates, or with ``?question=KEY`` one choice question's
    options as bars with simultaneous intervals; ``?width=narrow`` for phones."""
    survey = visible_survey(slug)
    estimates, confidence, _method = _estimates(survey)
    width = request.args.get("width", "wide")
    if width not in PLOT_WIDTHS:
        abort(400, description=_("The plot's width must be wide or narrow."))
    key = request.args.get("question")
    level = format_percent(confidence)
    if key is None:
        rows = _yes_no_rows(estimates)
        label = _("Estimated prevalence, with %(level)s confidence intervals", level=level)
    else:
        rows = _option_rows(estimates, key)
        label = _("Estimated share, with %(level)s intervals for every option at once", level=level)
    ticks = tuple(format_percent(tick) for tick in TICKS)
    svg = interval_svg(rows, label, ticks, width, bars=key is not None)
    response = Response(svg, mimetype="image/svg+xml")
    # Matplotlib's SVG styles its own elements; it has no script, and as an image it
    # could not run one anyway.
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


@bp.get("/surveys/<slug>/export.csv")
def export_csv(slug: str) -> Response:
    survey = visible_survey(slug)
    estimates, _confidence, _method = _estimates(survey)
    return csv_download(aggregate_csv(survey, estimates), f"{slug}.csv", survey, "aggregate")


@bp.get("/surveys/<slug>/responses.csv")
def responses_download(slug: str) -> Response:
    survey = visible_survey(slug)
    lines = stream_rows(current_app.config["DATABASE"], lambda db: responses_csv(db, survey))
    return csv_download(lines, f"{slug}-responses.csv", survey, "responses")


@bp.get("/surveys/<slug>/estimates.json")
def estimates_download(slug: str) -> Response:
    survey = visible_survey(slug)
    estimates, _confidence, _method = _estimates(survey)
    return Response(
        json.dumps(estimates_json(survey, estimates), indent=2), mimetype="application/json"
    )


@bp.get("/surveys/<slug>/codebook.json")
def codebook_json(slug: str) -> Response:
    survey = visible_survey(slug)
    confidence, method = interval_options()
    kind = request.args.get("kind", "aggregate")
    if kind not in {"aggregate", "responses"}:
        abort(400, description=_("The codebook's kind must be aggregate or responses."))
    book = codebook(survey, kind, confidence, method, __version__)
    filename = f"{survey.slug}-{kind}.codebook.json"
    return attachment(json.dumps(book, indent=2), "application/json", filename)


# The owner's study controls, on this blueprint too: imported last, as they use ``bp``.
from survey_app.web.research import study_pages  # noqa: E402, F401
