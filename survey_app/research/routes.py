"""The dashboard and its downloads. Every route here needs a logged-in researcher."""

from __future__ import annotations

import json
from collections.abc import Iterator

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    render_template,
    request,
    url_for,
)

from .. import __version__
from ..bursts import burst_monitor
from ..db import get_db, stream_rows
from ..estimates import QuestionEstimate, survey_estimates
from ..exports import aggregate_csv, codebook, estimates_json, responses_csv
from ..planning import plan_survey
from ..privacy import DEFAULT_INTERVAL_METHOD, INTERVAL_METHODS
from ..privacy.planner import MIN_HALF_WIDTH
from ..surveys import Survey, can_see, get_survey, list_visible_surveys, survey_response_count
from .auth import current_researcher, require_researcher
from .plots import estimates_svg, options_svg

bp = Blueprint("research", __name__, url_prefix="/research")
bp.before_request(require_researcher)

CONFIDENCE_LEVELS = (0.90, 0.95, 0.99)


def _survey_or_404(slug: str) -> Survey:
    """The survey, if this researcher may see it; 404 alike whether absent or not theirs,
    so slugs of other people's surveys cannot be probed."""
    db = get_db()
    survey = get_survey(db, slug)
    researcher = current_researcher()
    if survey is None or researcher is None or not can_see(db, survey, researcher.id):
        abort(404, description="There is no survey with that name.")
    return survey


def _interval_options() -> tuple[float, str]:
    """``confidence`` and ``method`` from the query string; 400 for anything else."""
    confidence = request.args.get("confidence", 0.95, type=float)
    method = request.args.get("method", DEFAULT_INTERVAL_METHOD)
    if confidence not in CONFIDENCE_LEVELS:
        abort(400, description="confidence must be one of 0.9, 0.95 or 0.99.")
    if method not in INTERVAL_METHODS:
        abort(400, description=f"method must be one of {', '.join(INTERVAL_METHODS)}.")
    return confidence, method


def _estimates(survey: Survey) -> tuple[list[QuestionEstimate], float, str]:
    confidence, method = _interval_options()
    return survey_estimates(get_db(), survey, confidence, method), confidence, method


def _csv_download(lines: Iterator[str], filename: str, survey: Survey, kind: str) -> Response:
    response = Response(lines, mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    confidence, method = _interval_options()
    codebook_url = url_for(
        "research.codebook_json", slug=survey.slug, kind=kind, confidence=confidence, method=method
    )
    response.headers["Link"] = f'<{codebook_url}>; rel="describedby"'
    return response


@bp.get("/")
def index() -> str:
    researcher = current_researcher()
    assert researcher is not None  # guaranteed by require_researcher
    surveys = list_visible_surveys(get_db(), researcher.id)
    return render_template("research/index.html", surveys=surveys)


MAX_PLANNED_RESPONDENTS = 10_000_000


@bp.get("/surveys/<slug>")
def dashboard(slug: str) -> str:
    survey = _survey_or_404(slug)
    estimates, confidence, method = _estimates(survey)
    half_width = request.args.get("half_width", 0.05, type=float)
    if not MIN_HALF_WIDTH <= half_width <= 1:
        abort(400, description=f"The planner's half-width must lie in [{MIN_HALF_WIDTH}, 1].")
    respondents = request.args.get("respondents", 1000, type=int)
    if not 1 <= respondents <= MAX_PLANNED_RESPONDENTS:
        abort(400, description=f"The planned respondents must be 1 to {MAX_PLANNED_RESPONDENTS:,}.")
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
        burst=burst_monitor(current_app).largest_burst(survey.id),
    )


@bp.get("/surveys/<slug>/plot.svg")
def plot_svg(slug: str) -> Response:
    """The yes/no questions' estimates, or with ``?question=KEY`` one choice question's
    options as bars with simultaneous intervals."""
    survey = _survey_or_404(slug)
    estimates, confidence, _method = _estimates(survey)
    key = request.args.get("question")
    if key is None:
        rows = tuple(
            (item.question.text, c.estimate.point, c.estimate.low, c.estimate.high)
            for item in estimates
            if item.question.type == "yes_no"
            for c in item.categories
            if c.estimate is not None
        )
        svg = estimates_svg(rows, confidence)
    else:
        chosen = [item for item in estimates if item.question.key == key]
        if not chosen or chosen[0].question.type != "choice":
            abort(404, description="There is no choice question with that key.")
        rows = tuple(
            (c.category, c.display, c.simultaneous.low, c.simultaneous.high)  # type: ignore[misc]
            for c in chosen[0].categories
            if c.simultaneous is not None
        )
        svg = options_svg(chosen[0].question.text, rows, confidence)
    response = Response(svg, mimetype="image/svg+xml")
    # Matplotlib's SVG styles its own elements; it has no script, and as an image it
    # could not run one anyway.
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


@bp.get("/surveys/<slug>/export.csv")
def export_csv(slug: str) -> Response:
    survey = _survey_or_404(slug)
    estimates, _confidence, _method = _estimates(survey)
    return _csv_download(aggregate_csv(survey, estimates), f"{slug}.csv", survey, "aggregate")


@bp.get("/surveys/<slug>/responses.csv")
def responses_download(slug: str) -> Response:
    survey = _survey_or_404(slug)
    lines = stream_rows(current_app.config["DATABASE"], lambda db: responses_csv(db, survey))
    return _csv_download(lines, f"{slug}-responses.csv", survey, "responses")


@bp.get("/surveys/<slug>/estimates.json")
def estimates_download(slug: str) -> Response:
    survey = _survey_or_404(slug)
    estimates, _confidence, _method = _estimates(survey)
    return Response(
        json.dumps(estimates_json(survey, estimates), indent=2), mimetype="application/json"
    )


@bp.get("/surveys/<slug>/codebook.json")
def codebook_json(slug: str) -> Response:
    survey = _survey_or_404(slug)
    confidence, method = _interval_options()
    kind = request.args.get("kind", "aggregate")
    if kind not in {"aggregate", "responses"}:
        abort(400, description="kind must be aggregate or responses.")
    book = codebook(survey, kind, confidence, method, __version__)
    return Response(json.dumps(book, indent=2), mimetype="application/json")
