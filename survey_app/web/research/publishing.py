"""The owner's publish page: the central budget, the figures to publish, and the ledger.

Like the study controls, each action is a question (GET, changes nothing: a confirmation
page) and then an answer (POST with its CSRF token). Only the survey's owner publishes;
a viewer gets 403, anyone else 404. The rules are ``domain/releases.py``'s, shared with
``survey-app budget``, ``publish`` and ``releases``: the confirmation page shows the
domain's quote and the answer publishes it. The words for a refusal are here, translated.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from survey_app.domain.question_privacy import epsilon_text
from survey_app.domain.release_errors import (
    REFUSALS,
    BothEstimatesError,
    EpsilonError,
    NoResponsesError,
    NothingChosenError,
    NotPlainChoiceError,
    NotSensitiveYesNoError,
    ReleaseError,
    UnknownQuestionError,
)
from survey_app.domain.release_figures import default_figures, offered_figures, released_figures
from survey_app.domain.releases import (
    MAX_BUDGET,
    MAX_RELEASE_EPSILON,
    parse_epsilon,
    publish,
    quote_budget,
    quote_release,
    set_budget,
)
from survey_app.privacy.central import (
    BudgetBelowSpentError,
    BudgetExceededError,
    LedgerError,
    NoBudgetError,
    decimal_text,
)
from survey_app.storage.releases import latest_snapshot, load_ledger
from survey_app.storage.surveys import Survey
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.research.access import owned_survey
from survey_app.web.research.publishing_forms import BudgetForm, ReleaseForm

bp = Blueprint("publishing", __name__)


def epsilon_shown(value: Fraction | str) -> str:
    """ε for reading: an exact decimal as it is ("0.25"), a third of 1 rounded up ("≈ 0.334":
    never below what it costs)."""
    exact = Fraction(value)
    text = decimal_text(exact)
    return text if "/" not in text else "≈ " + epsilon_text(exact)


def _owned_survey(slug: str) -> Survey:
    return owned_survey(slug, _("Only the survey's owner can publish its results."))


def _reason(err: ReleaseError | LedgerError) -> str:
    """Why the rules refused, in the page's language."""
    match err:
        case BudgetExceededError():
            return _over_budget(err.needed, err.budget, err.spent)
        case BudgetBelowSpentError():
            return _over_budget(err.asked, err.budget or Fraction(0), err.spent)
        case NoBudgetError():
            return _(
                "Nothing was published: noisy figures cost ε, and this survey has no central "
                "budget yet. Set one first, or publish only the estimates from exact counts."
            )
        case EpsilonError():
            return _(
                "Give ε as a number above 0 and at most %(most)s, with at most 3 decimals "
                "(for example 0.5).",
                most=decimal_text(err.most),
            )
        case UnknownQuestionError():
            return _("The survey has no question %(key)s.", key=err.key)
        case NotPlainChoiceError():
            return _(
                "%(key)s is not a plain choice question: only answers stored as given can be "
                "counted or used to form groups.",
                key=err.key,
            )
        case NotSensitiveYesNoError():
            return _("%(key)s is not a sensitive yes/no question.", key=err.key)
        case NothingChosenError():
            return _("Choose at least one figure to publish.")
        case BothEstimatesError():
            return _(
                "Choose the estimates from noisy counts or those from exact counts, not both: "
                "the exact ones give away what the noise hides."
            )
        case NoResponsesError():
            return _("The survey has no responses yet: there is nothing to publish.")
    return _("There is no such figure.")


def _over_budget(needed: Fraction, budget: Fraction, spent: Fraction) -> str:
    return _(
        "Nothing was published or changed: this needs ε = %(needed)s, but the budget is "
        "%(budget)s and %(spent)s is already spent.",
        needed=decimal_text(needed),
        budget=decimal_text(budget),
        spent=decimal_text(spent),
    )


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
        ledger=load_ledger(db, survey),
        figures_of=partial(released_figures, survey),
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
    return redirect(url_for("research.publishing.publish_page", slug=survey.slug))


@bp.get("/surveys/<slug>/publish")
def publish_page(slug: str) -> tuple[str, int]:
    return _publish_page(_owned_survey(slug))


@bp.route("/surveys/<slug>/publish/budget", methods=["GET", "POST"])
def budget(slug: str) -> Response | tuple[str, int] | str:
    """GET: the budget asked, checked against the ledger (a confirmation page); POST: set."""
    survey = _owned_survey(slug)
    form = BudgetForm()
    submitted = form.validate_on_submit()
    asked = form if submitted else BudgetForm(formdata=request.args, meta={"csrf": False})
    try:
        if submitted:
            value = parse_epsilon(asked.budget.data, MAX_BUDGET)
            set_budget(get_db(), survey, value)
            return _back_to_publish(
                survey, _("The central budget is now ε = %(budget)s.", budget=decimal_text(value))
            )
        value = quote_budget(get_db(), survey, asked.budget.data)
    except REFUSALS as err:
        return _publish_page(survey, _reason(err))
    form.budget.data = decimal_text(value)
    return render_template(
        "research/publish_confirm.html", survey=survey, action="budget", form=form, budget=value
    )


@bp.route("/surveys/<slug>/publish/release", methods=["GET", "POST"])
def release(slug: str) -> Response | tuple[str, int] | str:
    """GET: the quote (figures, ε, cost, the budget left) to confirm; POST: publish it."""
    survey = _owned_survey(slug)
    form = ReleaseForm()
    submitted = form.validate_on_submit()
    asked = form if submitted else ReleaseForm(formdata=request.args, meta={"csrf": False})
    db = get_db()
    try:
        quote = quote_release(db, survey, asked.figure.data or [], asked.epsilon.data)
        if submitted:
            done = publish(db, quote)
            return _back_to_publish(
                survey,
                _(
                    "Published. This release cost ε = %(cost)s.",
                    cost=decimal_text(done.release.cost),
                ),
            )
    except REFUSALS as err:
        return _publish_page(survey, _reason(err), asked)
    form.figure.data = [f.id for f in quote.figures]
    form.epsilon.data = decimal_text(quote.epsilon) if quote.noisy else ""
    return render_template(
        "research/publish_confirm.html", survey=survey, action="release", form=form, quote=quote
    )
