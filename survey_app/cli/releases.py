"""``survey-app budget``, ``publish`` and ``releases``: a survey's central budget, its public
releases and their ledger from the command line. The rules are ``domain/releases.py``'s, the
same the publish page follows (quote, then publish); the words for a refusal are here."""

from __future__ import annotations

import click
from flask import current_app
from flask.cli import with_appcontext

from survey_app.config import command_line_base
from survey_app.domain.figure_kinds import FigureKind
from survey_app.domain.release_errors import (
    REFUSALS,
    BothEstimatesError,
    EpsilonError,
    NoResponsesError,
    NothingChosenError,
    NotPlainChoiceError,
    NotSensitiveYesNoError,
    ReleaseError,
    UnknownFigureError,
    UnknownQuestionError,
)
from survey_app.domain.release_figures import default_figures
from survey_app.domain.releases import MAX_BUDGET, parse_epsilon, publish, quote_release, set_budget
from survey_app.privacy.central import (
    BudgetBelowSpentError,
    BudgetExceededError,
    Ledger,
    LedgerError,
    NoBudgetError,
    Release,
    decimal_text,
)
from survey_app.storage.releases import load_ledger
from survey_app.storage.surveys import Survey, get_survey
from survey_app.web.database_session import get_db


def _survey_or_fail(slug: str) -> Survey:
    survey = get_survey(get_db(), slug)
    if survey is None:
        raise click.ClickException(f"no survey with slug {slug!r}")
    return survey


def public_address(slug: str) -> str:
    """Where the public page is: under SURVEY_APP_BASE_URL, the app's public address."""
    return f"{command_line_base(current_app.config['BASE_URL'])}/results/{slug}"


def _summary(ledger: Ledger) -> str:
    if ledger.budget is None:
        return (
            f"no central budget (spent {decimal_text(ledger.spent)}; "
            "only the estimates from exact counts)"
        )
    return (
        f"central budget ε = {decimal_text(ledger.budget)}, spent {decimal_text(ledger.spent)}, "
        f"remaining {decimal_text(ledger.budget - ledger.spent)}"
    )


def _words(err: ReleaseError | LedgerError, slug: str) -> str:
    """A refusal in the terminal's words (the publish page has its own, translated)."""
    match err:
        case UnknownFigureError():
            return (
                f"no figure {err.figure!r}: use estimates, exact-estimates, histogram:KEY, "
                "groups:KEY:BY, mode:KEY"
            )
        case UnknownQuestionError():
            return f"the survey has no question {err.key!r}"
        case NotPlainChoiceError():
            return f"{err.key!r} is not a plain (sensitive: false) choice question"
        case NotSensitiveYesNoError():
            return f"{err.key!r} is not a sensitive yes/no question"
        case BothEstimatesError():
            return "choose estimates or exact-estimates, not both"
        case NothingChosenError():
            return "choose at least one figure to publish"
        case NoResponsesError():
            return f"{slug} has no responses yet: there is nothing to publish"
        case EpsilonError():
            return _epsilon_words(err)
        case LedgerError():
            return _ledger_words(err, slug)
    raise err


def _epsilon_words(err: EpsilonError) -> str:
    if err.text is None:
        problem = "noisy figures need the release's ε (--epsilon)"
    else:
        problem = f"ε cannot be {err.text!r}"
    return (
        f"{problem}: give a number above 0 and at most {decimal_text(err.most)}, "
        "with at most 3 decimals"
    )


def _ledger_words(err: LedgerError, slug: str) -> str:
    match err:
        case NoBudgetError():
            return (
                f"{slug} has no central budget: noisy figures cost ε; set one first "
                f"(survey-app budget {slug} EPSILON)"
            )
        case BudgetExceededError():
            return (
                f"this release needs ε = {decimal_text(err.needed)}, but only "
                f"{decimal_text(err.remaining)} of the survey's central budget of "
                f"{decimal_text(err.budget)} is left; nothing was published"
            )
        case BudgetBelowSpentError():
            return (
                f"releases have already spent ε = {decimal_text(err.spent)}; "
                f"the budget cannot be set below that (asked: {decimal_text(err.asked)})"
            )
    raise err


# "-1" is an ε to refuse in words, not an unknown option.
@click.command("budget", context_settings={"ignore_unknown_options": True})
@click.argument("slug")
@click.argument("epsilon")
@with_appcontext
def budget_command(slug: str, epsilon: str) -> None:
    """Set survey SLUG's central ε budget (a decimal such as 1 or 0.5).

    Every release with noisy figures is charged against it; it cannot be set below what
    releases have already spent.
    """
    survey = _survey_or_fail(slug)
    try:
        ledger = set_budget(get_db(), survey, parse_epsilon(epsilon, MAX_BUDGET))
    except REFUSALS as err:
        raise click.ClickException(_words(err, slug)) from err
    click.echo(f"{slug}: {_summary(ledger)}.")


@click.command("publish")
@click.argument("slug")
@click.option("--epsilon", help="The release's ε, split equally among its noisy figures.")
@click.option(
    "--figure",
    "figures",
    multiple=True,
    help="A figure instead of the default: estimates, exact-estimates, histogram:KEY, "
    "groups:KEY:BY or mode:KEY (repeat for several).",
)
@click.option(
    "--exact-estimates",
    "exact",
    is_flag=True,
    help="Estimates from exact counts instead of noisy ones: free, but they reveal exactly "
    "how many answered each question, and the public page says they are not covered.",
)
@with_appcontext
def publish_command(slug: str, epsilon: str | None, figures: tuple[str, ...], exact: bool) -> None:
    """Publish survey SLUG's results on its public page and print the page's address.

    By default the page shows every sensitive question's estimate and the histogram of
    every plain choice question, all from noisy counts, each figure costing an equal
    share of --epsilon. Every release costs its ε, even on unchanged data.
    """
    survey = _survey_or_fail(slug)
    db = get_db()
    chosen = list(figures) or default_figures(survey)
    if exact:
        chosen = [f for f in chosen if f != FigureKind.ESTIMATES] + [FigureKind.EXACT_ESTIMATES]
    try:
        if epsilon is not None:  # a typo is refused even where no figure would use it
            parse_epsilon(epsilon)
        published = publish(db, quote_release(db, survey, chosen, epsilon))
    except REFUSALS as err:
        raise click.ClickException(_words(err, slug)) from err
    release, snapshot = published.release, published.snapshot
    click.echo(f"Published release {release.number} of {slug}.")
    noisy = int(snapshot["noisy_figures"])
    if noisy:
        click.echo(
            f"ε = {decimal_text(release.epsilon)}: {snapshot['figure_epsilon']} for each of "
            f"{noisy} noisy figure{'s' if noisy > 1 else ''}."
        )
    if not release.covered:
        click.echo(
            "Estimates from exact counts: ε = 0, but they reveal how many answered each "
            "question; the public page says they are not covered."
        )
    click.echo(f"Cost: {decimal_text(release.cost)}.")
    click.echo(f"{slug}: {_summary(load_ledger(db, survey))}.")
    click.echo(public_address(slug))


@click.command("releases")
@click.argument("slug")
@with_appcontext
def releases_command(slug: str) -> None:
    """Print survey SLUG's central budget, what is spent and left, every release and
    every change of the budget, oldest first."""
    ledger = load_ledger(get_db(), _survey_or_fail(slug))
    click.echo(f"{slug}: {_summary(ledger)}.")
    if not ledger.releases:
        click.echo("No releases yet.")
    for event in ledger.history:
        if isinstance(event, Release):
            click.echo(
                f"{event.number}  {event.at.isoformat()}  ε = {decimal_text(event.epsilon)}  "
                f"cost {decimal_text(event.cost)}  {event.what}"
            )
        else:
            was = "none" if event.previous is None else decimal_text(event.previous)
            click.echo(
                f"-  {event.at.isoformat()}  budget ε = {decimal_text(event.budget)} (was {was})"
            )


COMMANDS = (budget_command, publish_command, releases_command)
