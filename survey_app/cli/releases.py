"""``survey-app budget``, ``publish`` and ``releases``: a survey's central budget, its public
releases and their ledger from the command line. The rules are ``releases.py``'s."""

from __future__ import annotations

import click
from flask import current_app
from flask.cli import with_appcontext

from survey_app.domain.releases import (
    ESTIMATES,
    EXACT_ESTIMATES,
    MAX_BUDGET,
    CentralLedger,
    LedgerEntry,
    ReleaseError,
    decimal_text,
    default_figures,
    parse_epsilon,
    publish,
    set_budget,
)
from survey_app.domain.releases import central_ledger as read_ledger
from survey_app.storage.database import get_db
from survey_app.storage.surveys import Survey, get_survey


def _survey_or_fail(slug: str) -> Survey:
    survey = get_survey(get_db(), slug)
    if survey is None:
        raise click.ClickException(f"no survey with slug {slug!r}")
    return survey


def public_address(slug: str) -> str:
    """Where the public page is: under SURVEY_APP_BASE_URL, the app's public address."""
    return f"{current_app.config['BASE_URL'].rstrip('/')}/results/{slug}"


def _summary(ledger: CentralLedger) -> str:
    if ledger.budget is None:
        return (
            f"no central budget (spent {decimal_text(ledger.spent)}; "
            "only the estimates from exact counts)"
        )
    remaining = ledger.budget - ledger.spent
    return (
        f"central budget ε = {decimal_text(ledger.budget)}, spent {decimal_text(ledger.spent)}, "
        f"remaining {decimal_text(remaining)}"
    )


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
    except ReleaseError as err:
        raise click.ClickException(str(err)) from err
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
        chosen = [f for f in chosen if f != ESTIMATES] + [EXACT_ESTIMATES]
    try:
        requested = None if epsilon is None else parse_epsilon(epsilon)
        published = publish(db, survey, chosen, requested)
    except ReleaseError as err:
        raise click.ClickException(str(err)) from err
    snapshot = published.snapshot
    click.echo(f"Published release {published.release_id} of {slug}.")
    noisy = int(snapshot["noisy_figures"])
    if noisy:
        click.echo(
            f"ε = {decimal_text(published.epsilon)}: {snapshot['figure_epsilon']} for each of "
            f"{noisy} noisy figure{'s' if noisy > 1 else ''}."
        )
    if snapshot["exact_figures"]:
        click.echo(
            "Estimates from exact counts: ε = 0, but they reveal how many answered each "
            "question; the public page says they are not covered."
        )
    click.echo(f"Cost: {decimal_text(published.cost)}.")
    click.echo(f"{slug}: {_summary(read_ledger(db, survey))}.")
    click.echo(public_address(slug))


@click.command("releases")
@click.argument("slug")
@with_appcontext
def releases_command(slug: str) -> None:
    """Print survey SLUG's central budget, what is spent and left, every release and
    every change of the budget, oldest first."""
    ledger = read_ledger(get_db(), _survey_or_fail(slug))
    click.echo(f"{slug}: {_summary(ledger)}.")
    if not ledger.entries:
        click.echo("No releases yet.")
    for event in ledger.history:
        if isinstance(event, LedgerEntry):
            click.echo(
                f"{event.id}  {event.released_at}  ε = {decimal_text(event.epsilon)}  "
                f"cost {decimal_text(event.cost)}  {event.what}"
            )
        else:
            was = "none" if event.previous is None else decimal_text(event.previous)
            click.echo(f"-  {event.at}  budget ε = {decimal_text(event.budget)} (was {was})")


COMMANDS = (budget_command, publish_command, releases_command)
