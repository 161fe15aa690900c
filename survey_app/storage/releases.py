"""The central budget's ledger in the database: a survey's budget, its releases and its
budget changes, stored row by row and loaded back as the pure ``privacy.central.Ledger``,
which alone holds the rule; and each release's snapshot, the figures the public page shows.

Numbers are exact decimal text (``decimal_text``), times ISO 8601 in UTC to the second.
The writers run inside the caller's write transaction: the caller reads the ledger,
charges it and writes the new entry under one lock, so two owners cannot overspend.
"""

from __future__ import annotations

import json
from datetime import datetime
from fractions import Fraction
from typing import Any

from survey_app.privacy.central import BudgetChange, Ledger, Release, decimal_text
from survey_app.storage.backends import Database
from survey_app.storage.surveys import Survey


def load_ledger(db: Database, survey: Survey) -> Ledger:
    """The survey's budget, every release charged against it and every budget change.

    Read inside a write transaction (``publish``, ``set_budget``), it is the ledger no
    other process can change before that transaction ends: SQLite's ``BEGIN IMMEDIATE``
    took the write lock first. A server database would read the survey's row ``FOR
    UPDATE`` here, so that two servers publishing at once still charge one after the
    other.
    """
    (budget,) = db.execute(
        "SELECT central_budget FROM surveys WHERE id = ?", [survey.id]
    ).fetchone()
    return Ledger(
        None if budget is None else Fraction(budget),
        _releases(db, survey),
        _budget_changes(db, survey),
    )


def _releases(db: Database, survey: Survey) -> tuple[Release, ...]:
    rows = db.execute(
        "SELECT id, released_at, what, epsilon, cost, snapshot FROM releases "
        "WHERE survey_id = ? ORDER BY id",
        [survey.id],
    )
    return tuple(_release(*row) for row in rows)


def _release(
    number: int, released_at: str, what: str, epsilon: str, cost: str, stored: str
) -> Release:
    """A release row; which figures it showed, and whether any came from exact counts,
    are read from its snapshot (``exact_figures``: the figures the central ε does not cover)."""
    snapshot = json.loads(stored)
    return Release(
        what=what,
        epsilon=Fraction(epsilon),
        at=datetime.fromisoformat(released_at),
        cost=Fraction(cost),
        figures=tuple(figure["id"] for figure in snapshot["figures"]),
        covered=not snapshot["exact_figures"],
        number=number,
    )


def _budget_changes(db: Database, survey: Survey) -> tuple[BudgetChange, ...]:
    rows = db.execute(
        "SELECT changed_at, budget, previous, releases_before FROM budget_changes "
        "WHERE survey_id = ? ORDER BY id",
        [survey.id],
    )
    return tuple(
        BudgetChange(
            datetime.fromisoformat(at),
            Fraction(budget),
            None if previous is None else Fraction(previous),
            releases_before,
        )
        for at, budget, previous, releases_before in rows
    )


def save_budget_change(db: Database, survey: Survey, change: BudgetChange) -> None:
    """Set the survey's budget and record the change (inside a write transaction)."""
    db.execute(
        "UPDATE surveys SET central_budget = ? WHERE id = ?",
        [decimal_text(change.budget), survey.id],
    )
    db.execute(
        "INSERT INTO budget_changes (survey_id, changed_at, budget, previous, "
        "releases_before) VALUES (?, ?, ?, ?, ?)",
        [
            survey.id,
            change.at.isoformat(),
            decimal_text(change.budget),
            None if change.previous is None else decimal_text(change.previous),
            change.releases_before,
        ],
    )


def save_release(
    db: Database,
    survey: Survey,
    release: Release,
    fingerprints: tuple[str, str],
    snapshot: dict[str, Any],
) -> int:
    """Store a charged release with its snapshot (inside a write transaction); its number.

    ``fingerprints``: of the data it was computed from and of the figures chosen, kept
    for the record (they decide nothing).
    """
    data, choices = fingerprints
    cursor = db.execute(
        "INSERT INTO releases (survey_id, released_at, what, epsilon, cost, "
        "data_fingerprint, choices, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [
            survey.id,
            release.at.isoformat(),
            release.what,
            decimal_text(release.epsilon),
            decimal_text(release.cost),
            data,
            choices,
            json.dumps(snapshot, sort_keys=True),
        ],
    )
    return int(cursor.fetchone()[0])


def response_summary(db: Database, survey: Survey) -> tuple[int, int]:
    """(how many responses, the newest one's id; 0 if none). Responses are never changed
    or deleted once stored and ids only grow, so the same pair means the same rows."""
    count, newest = db.execute(
        "SELECT count(*), coalesce(max(id), 0) FROM responses WHERE survey_id = ?", [survey.id]
    ).fetchone()
    return int(count), int(newest)


def latest_snapshot(db: Database, slug: str) -> dict[str, Any] | None:
    """The figures the public page shows: those of the survey's latest release."""
    row = db.execute(
        "SELECT r.snapshot FROM releases r JOIN surveys s ON s.id = r.survey_id "
        "WHERE s.slug = ? ORDER BY r.id DESC LIMIT 1",
        [slug],
    ).fetchone()
    if row is None:
        return None
    snapshot: dict[str, Any] = json.loads(row[0])
    return snapshot
