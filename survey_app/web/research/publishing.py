"""The owner's publish page: the central budget, the figures to publish, and the ledger.

Like the study controls, each action is a question (GET, changes nothing: a confirmation
page) and then an answer (POST with its CSRF token). Only the survey's owner publishes;
a viewer gets 403, anyone else 404. The rules are ``releases.py``'s, shared with
``survey-app budget``, ``publish`` and ``releases``.
"""

from __future__ import annotations

from fractions import Fraction

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from survey_app.domain.question_privacy import epsilon_text
from survey_app.domain.releases import (
    MAX_BUDGET,
    MAX_RELEASE_EPSILON,
    BothEstimatesError,
    EpsilonError,
    NoBudgetError,
    NoResponsesError,
    NothingChosenError,
    NotPlainChoiceError,
    NotSensitiveYesNoError,
    OverBudgetError,
    ReleaseError,
    UnknownQuestionError,
    central_ledger,
    chosen_figures,
    decimal_text,
    default_figures,
    latest_snapshot,
    noisy_figure_count,
    offered_figures,
    parse_epsilon,
    publish,
    release_cost,
    set_budget,
)
from survey_app.storage.database import get_db
from survey_app.storage.surveys import Survey, can_see, get_survey
from survey_app.web.i18n import gettext as _
from survey_app.web.research.auth import current_researcher, require_researcher
from survey_app.web.research.publishing_forms import BudgetForm, ReleaseForm
from survey_app.web.research.studies import is_owner

bp = Blueprint("publishing", __name__, url_prefix="/research")
bp.before_request(require_researcher)


def epsilon_shown(value: Fraction | str) -> str:
    """ε for reading: an exact decimal as it is ("0.25"), a third of 1 rounded up ("≈ 0.334":
    never below what it costs)."""
    exact = Fraction(value)
    text = decimal_text(exact)
    return text if "/" not in text else "≈ " + epsilon_text(exact)


# ε and budgets in every template (the public page's too).
bp.add_app_template_filter(epsilon_shown, "epsilon")


def _owned_survey(slug: str) -> Survey:
    """404 for a survey this researcher cannot see, 403 for one they only view."""
    db = get_db()
    survey = get_survey(db, slug)
    researcher = current_researcher()
    if survey is None or researcher is None or not can_see(db, survey, researcher.id):
        abort(404, description=_("There is no survey with that name."))
    if not is_owner(survey, researcher.id):
        abort(403, description=_("Only the survey's owner can publish its results."))
    return survey


def _reason(err: ReleaseError) -> str:
    """Why the rules refused, in the page's language."""
    if isinstance(err, OverBudgetError):
        ledger = err.ledger
        return _(
            "Nothing was published or changed: this needs ε = %(needed)s, but the budget is "
            "%(budget)s and %(spent)s is already spent.",
            needed=decimal_text(err.needed),
            budget=decimal_text(ledger.budget or Fraction(0)),
            spent=decimal_text(ledger.spent),
        )
    if isinstance(err, NoBudgetError):
        return _(
            "Nothing was published: noisy figures cost ε, and this survey has no central "
            "budget yet. Set one first, or publish only the estimates from exact counts."
        )
    if isinstance(err, EpsilonError):
        return _(
            "Give ε as a number above 0 and at most %(most)s, with at most 3 decimals "
            "(for example 0.5).",
            most=decimal_text(err.most),
        )
    if isinstance(err, UnknownQuestionError):
        return _("The survey has no question %(key)s.", key=err.key)
    if isinstance(err, NotPlainChoiceError):
        return _(
            "%(key)s is not a plain choice question: only answers stored as given can be "
            "counted or used to form groups.",
            key=err.key,
        )
    if isinstance(err, NotSensitiveYesNoError):
        return _("%(key)s is not a sensitive yes/no question.", key=err.key)
    if isinstance(err, NothingChosenError):
        return _("Choose at least one figure to publish.")
    if isinstance(err, BothEstimatesError):
        return _(
            "Choose the estimates from noisy counts or those from exact counts, not both: "
            "the exact ones give away what the noise hides."
        )
    if isinstance(err, NoResponsesError):
        return _("The survey has no responses yet: there is nothing to publish.")
    return _("There is no such figure.")


def _publish_page(
    survey: Survey, error: str | None = None, form: ReleaseForm | None = None
) -> tuple[str, int]:
    """The page, with ``error`` shown (status 400) when an action was refused."""
    db = get_db()
    if form is None:
        form = ReleaseForm(formdata=None, meta={"csrf": False})
        form.figure.data = default_figures(survey)
    page = render_template(
        "research/publish.html",
        survey=survey,
        ledger=central_ledger(db, survey),
        offered=offered_figures(survey),
        published=latest_snapshot(db, survey.slug) is not None,
        budget_form=BudgetForm(formdata=None, meta={"csrf": False}),
        release_form=form,
        max_budget=decimal_text(MAX_BUDGET),
        max_epsilon=decimal_text(MAX_RELEASE_EPSILON),
        error=error,
    )
    return page, 400 if error else 200


def _back_to_publish(survey: Survey, message: str) -> Response:
    flash(message)
    return redirect(url_for("publishing.publish_page", slug=survey.slug))


@bp.get("/surveys/<slug>/publish")
def publish_page(slug: str) -> tuple[str, int]:
    return _publish_page(_owned_survey(slug))


@bp.route("/surveys/<slug>/publish/budget", methods=["GET", "POST"])
def budget(slug: str) -> Response | tuple[str, int] | str:
    survey = _owned_survey(slug)
    form = BudgetForm()
    submitted = form.validate_on_submit()
    asked = form if submitted else BudgetForm(formdata=request.args, meta={"csrf": False})
    try:
        value = parse_epsilon(asked.budget.data, MAX_BUDGET)
        if submitted:
            set_budget(get_db(), survey, value)
            return _back_to_publish(
                survey, _("The central budget is now ε = %(budget)s.", budget=decimal_text(value))
            )
    except ReleaseError as err:
        return _publish_page(survey, _reason(err))
    ledger = central_ledger(get_db(), survey)
    if value < ledger.spent:
        return _publish_page(survey, _reason(OverBudgetError(value, ledger, "")))
    form.budget.data = decimal_text(value)
    return render_template(
        "research/publish_confirm.html", survey=survey, action="budget", form=form, budget=value
    )


@bp.route("/surveys/<slug>/publish/release", methods=["GET", "POST"])
def release(slug: str) -> Response | tuple[str, int] | str:
    survey = _owned_survey(slug)
    form = ReleaseForm()
    submitted = form.validate_on_submit()
    asked = form if submitted else ReleaseForm(formdata=request.args, meta={"csrf": False})
    db = get_db()
    try:
        figures = chosen_figures(survey, asked.figure.data or [])
        noisy = noisy_figure_count(figures)
        epsilon = parse_epsilon(asked.epsilon.data) if noisy else Fraction(0)
        if submitted:
            done = publish(db, survey, [f.id for f in figures], epsilon)
            return _back_to_publish(
                survey,
                _("Published. This release cost ε = %(cost)s.", cost=decimal_text(done.cost)),
            )
        cost = release_cost(figures, epsilon)
        ledger = central_ledger(db, survey)
        if cost and ledger.budget is None:
            raise NoBudgetError(survey.slug)
        if ledger.remaining is not None and cost > ledger.remaining:
            raise OverBudgetError(cost, ledger, "")
    except ReleaseError as err:
        return _publish_page(survey, _reason(err), asked)
    form.figure.data = [f.id for f in figures]
    form.epsilon.data = decimal_text(epsilon) if noisy else ""
    return render_template(
        "research/publish_confirm.html",
        survey=survey,
        action="release",
        form=form,
        figures=figures,
        epsilon=epsilon,
        share=epsilon / noisy if noisy else Fraction(0),
        noisy=noisy,
        cost=cost,
        ledger=ledger,
    )
