"""Public releases under central differential privacy: quote, then publish; and the budget.

One path for the publish page and ``survey-app publish``: ``quote_release`` works out what
publishing the chosen figures would do (which figures, the release's ε and each noisy
figure's share, the cost, the ledger after it) and refuses what the rules or the budget
refuse; ``publish`` takes that quote and, under one write transaction, charges the ledger
again (the budget may have been spent since the quote), computes the figures
(``release_snapshots``) and stores them: either all of it is stored or nothing is. The
budget takes the same two steps: ``quote_budget``, then ``set_budget``.

The release's ε is split equally among its noisy figures, ε/k each: by basic composition
the k figures together are ε-DP, and that ε is charged to the survey's central budget by
the pure ``privacy.central.Ledger``, which alone holds the rule (spent ≤ budget, exact
fractions); ``storage.releases`` persists it. Every release costs its ε, even on unchanged
data: re-showing old figures when nothing changed would publish *that* nothing changed.

Refusals carry facts, not sentences (``release_errors``): the browser and the command
line word them.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from survey_app.domain.release_errors import EpsilonError, NoResponsesError
from survey_app.domain.release_figures import FigureChoice, chosen_figures, describe_figures
from survey_app.domain.release_snapshots import prepare_counts, release_snapshot
from survey_app.privacy import SECURE, RandomSource
from survey_app.privacy.central import Ledger, Release, decimal_text, fingerprint
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.releases import (
    load_ledger,
    response_summary,
    save_budget_change,
    save_release,
)
from survey_app.storage.surveys import Survey

# A budget or a release's ε: a plain decimal, at most 3 places, up to these. Beyond ε = 10
# a count's noise is mostly below one: nothing a public page should call private.
EPSILON_PATTERN = re.compile(r"\d{1,3}(\.\d{1,3})?")
MAX_RELEASE_EPSILON = Fraction(10)
MAX_BUDGET = Fraction(100)


def parse_epsilon(text: str | None, most: Fraction = MAX_RELEASE_EPSILON) -> Fraction:
    """A central ε or budget typed as a decimal ("0.5"): exact, above 0, at most ``most``."""
    cleaned = (text or "").strip()
    if not EPSILON_PATTERN.fullmatch(cleaned):
        raise EpsilonError(text, most)
    value = Fraction(cleaned)
    if not 0 < value <= most:
        raise EpsilonError(text, most)
    return value


def _now() -> datetime.datetime:
    """The ledger's clock: UTC, to the second."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


# --- releases -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseQuote:
    """What publishing would do, worked out before anything is stored: the figures, the
    release's ``epsilon`` (0 when every figure is free), and the ledger ``after`` it."""

    survey: Survey
    figures: tuple[FigureChoice, ...]
    epsilon: Fraction
    after: Ledger

    @property
    def noisy(self) -> int:
        """How many figures carry noise and share the ε."""
        return sum(not f.free for f in self.figures)

    @property
    def share(self) -> Fraction:
        """Each noisy figure's ε."""
        return self.epsilon / self.noisy if self.noisy else Fraction(0)

    @property
    def cost(self) -> Fraction:
        return self.after.releases[-1].cost


@dataclass(frozen=True)
class Published:
    """What ``publish`` stored: the release (with its number) and its figures."""

    release: Release
    snapshot: dict[str, Any]


def quote_release(
    db: Database, survey: Survey, figures: Sequence[str], epsilon: str | None
) -> ReleaseQuote:
    """The figures named (ids), the release's ε typed as a decimal and the ledger after it;
    refused (``REFUSALS``) if the rules or the budget would refuse publishing them now.

    ε is read only when some figure carries noise: the estimates from exact counts alone
    cost nothing and ask for none. Changes nothing: the page shows the quote for
    confirmation, and ``publish`` checks it again under the write lock.
    """
    chosen = chosen_figures(survey, figures)
    noisy = any(not f.free for f in chosen)
    release_epsilon = parse_epsilon(epsilon) if noisy else Fraction(0)
    after = _charged(load_ledger(db, survey), chosen, release_epsilon, _now())
    return ReleaseQuote(survey, chosen, release_epsilon, after)


def _charged(
    ledger: Ledger, figures: Sequence[FigureChoice], epsilon: Fraction, at: datetime.datetime
) -> Ledger:
    """The ledger with a release of these figures charged (refused if it does not fit)."""
    return ledger.charge(
        describe_figures(figures),
        epsilon,
        at,
        [f.id for f in figures],
        covered=not any(f.free for f in figures),
    )


def publish(
    db: Database,
    quote: ReleaseQuote,
    source: RandomSource = SECURE,
    now: datetime.datetime | None = None,
) -> Published:
    """Publish a quote: charge the ledger, compute the figures and store the snapshot, all
    in one write transaction, so either all of it is stored or nothing is.

    The ledger is read and charged again under the lock: another tab or owner may have
    spent the budget since the quote, and then this is refused like an overspend.
    ``source`` is the OS's secure source in production; tests inject a seeded one.
    Nothing here decides on the data, not even whether there are responses: a noisy
    release of none is noise, and a refusal would tell that nobody has answered yet.
    Only the estimates from exact counts, which tell that anyway, are refused without
    responses.
    """
    survey, figures = quote.survey, quote.figures
    prepare_counts(db, survey, figures)
    at = (now or _now()).replace(microsecond=0)
    with write_transaction(db):
        # Under the write lock no response arrives: the fingerprint, the counts and the
        # tallies below describe the same rows.
        responses, newest = response_summary(db, survey)
        if any(f.free for f in figures) and not responses:
            raise NoResponsesError()
        release = _charged(load_ledger(db, survey), figures, quote.epsilon, at).releases[-1]
        snapshot = release_snapshot(db, survey, figures, quote.epsilon, at, source)
        fingerprints = (
            fingerprint({"responses": responses, "newest_response": newest}),
            fingerprint(sorted(f.id for f in figures)),
        )
        number = save_release(db, survey, release, fingerprints, snapshot)
    return Published(replace(release, number=number), snapshot)


# --- the budget -----------------------------------------------------------------------------


def quote_budget(db: Database, survey: Survey, budget: str | None) -> Fraction:
    """The budget typed as a decimal, if the ledger would take it now (it may not go below
    what is spent: ``BudgetBelowSpentError``). Changes nothing."""
    value = parse_epsilon(budget, MAX_BUDGET)
    load_ledger(db, survey).with_budget(value, _now())
    return value


def set_budget(
    db: Database,
    survey: Survey,
    budget: Fraction,
    now: datetime.datetime | None = None,
) -> Ledger:
    """Set the survey's central budget; it may not go below what releases already spent.
    A change is recorded with its time (``budget_changes``), for the public page."""
    if not 0 < budget <= MAX_BUDGET:
        raise EpsilonError(decimal_text(budget), MAX_BUDGET)
    at = (now or _now()).replace(microsecond=0)
    with write_transaction(db):
        ledger = load_ledger(db, survey)
        changed = ledger.with_budget(budget, at)
        if changed != ledger:
            save_budget_change(db, survey, changed.budget_changes[-1])
    return changed
