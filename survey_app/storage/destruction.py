"""Removing a survey's data: all of it (its owner deletes the survey), or the answers
only (its retention date has passed).

Deleted means gone from the files, not only from the tables, as far as the app can reach.
Each removal is one write transaction. On SQLite the connection has ``secure_delete`` on
(``database.connect``), so SQLite overwrites the freed content with zeros; then the WAL,
which still holds the pages as they were, is copied into the database file and cut to
zero bytes (``erase_write_ahead_log``). PostgreSQL keeps a deleted row's old version in
the table until ``VACUUM``, so the tables the removal touched are vacuumed at once; its
WAL is the server's (archived, streamed to replicas) and out of the app's reach
(``Erasure.VACUUMED``). Backups taken before still hold everything
(docs/data-retention.md). Each removal is recorded in ``events`` in its own transaction:
who (a username, the command line, or ``retention``), what, and the survey's slug and
title, never its data.

The answers only: the responses, the tallies (every count back to zero), the joint
counts kept for the analyses and their leases, the invitation links, and, unless the
owner chose to keep them, the published releases and the budget's history. The survey
stays, closed for good, with its questions: a definition is not data.
"""

from __future__ import annotations

import datetime
import enum
import time
from dataclasses import dataclass

from survey_app.storage import postgresql
from survey_app.storage.backends import Database
from survey_app.storage.crosstabs import forget_counts
from survey_app.storage.database import erase_write_ahead_log, write_transaction
from survey_app.storage.events import record_event
from survey_app.storage.surveys import Survey, delete_questions_and_design, get_survey

#: The actor of destructions on a retention date, at start-up or from cron alike.
RETENTION = "retention"
SURVEY_DELETED = "survey deleted"
ANSWERS_DESTROYED = "answers destroyed"

# Tables holding a survey's answers, or counts made from them, by ``survey_id``.
_ANSWER_TABLES = (
    "responses",
    "joint_tallies",
    "count_snapshots",
    "count_leases",
    "invitations",
)
# What the public page shows: kept after the retention date if the owner chose so.
_PUBLISHED_TABLES = ("releases", "budget_changes")
# What deleting a survey changes besides those (events only gain rows).
_SURVEY_TABLES = ("survey_viewers", "tallies", "questions", "designs", "surveys")
# How often a destruction looks again while another request counts the survey's answers.
_COUNTING_POLL_SECONDS = 0.5


class SurveyGoneError(LookupError):
    """The survey was deleted, or renamed, since it was read: nothing was removed."""


def utc_today() -> datetime.date:
    """Today in UTC: a retention date is a UTC day, whatever the server's time zone. The
    one clock of retention, read through this module (tests replace it)."""
    return datetime.datetime.now(datetime.UTC).date()


@dataclass(frozen=True)
class Holdings:
    """What deleting a survey removes, for its owner to read before confirming."""

    responses: int
    invitations: int
    releases: int
    viewers: int


class Erasure(enum.Enum):
    """What became of the removed rows' old copies, beyond the tables' current rows."""

    #: SQLite: zeroed in the database file, and the WAL emptied.
    ERASED = "erased"
    #: SQLite: zeroed in the database file; a reader held an old snapshot past the busy
    #: timeout, so the WAL keeps copies until its next checkpoint.
    LOG_BUSY = "log busy"
    #: PostgreSQL: the tables vacuumed, so no old row version is left in them (nor in a
    #: dump). Their bytes may stay in the pages' free space until reused (``VACUUM FULL``
    #: rewrites the files, locking the table meanwhile), and copies remain in the
    #: server's WAL, its archives and replicas, out of the app's reach.
    VACUUMED = "vacuumed"


@dataclass(frozen=True)
class Removal:
    """One survey's removal, as the command line and the study page report it."""

    slug: str
    title: str
    responses: int
    erasure: Erasure


def survey_holdings(db: Database, survey: Survey) -> Holdings:
    def count(table: str) -> int:
        sql = f"SELECT count(*) FROM {table} WHERE survey_id = ?"  # noqa: S608 (a constant)
        return int(db.execute(sql, [survey.id]).fetchone()[0])

    return Holdings(
        responses=count("responses"),
        invitations=count("invitations"),
        releases=count("releases"),
        viewers=count("survey_viewers"),
    )


def delete_survey(db: Database, survey: Survey, actor: str) -> Removal:
    """Delete the survey and everything it holds, recorded as done by ``actor``.

    Raises ``SurveyGoneError`` if the survey is no longer there under that slug (checked
    under the write lock: its id may since belong to another survey).
    """
    with write_transaction(db):
        responses = _locked_response_count(db, survey)
        _delete_rows(db, survey, (*_ANSWER_TABLES, *_PUBLISHED_TABLES, "survey_viewers"))
        delete_questions_and_design(db, survey.id)
        db.execute("DELETE FROM surveys WHERE id = ?", [survey.id])
        record_event(db, actor, SURVEY_DELETED, _subject(survey))
    forget_counts()
    erasure = _erase_old_copies(db, (*_ANSWER_TABLES, *_PUBLISHED_TABLES, *_SURVEY_TABLES))
    return Removal(survey.slug, survey.title, responses, erasure)


def expired_surveys(db: Database) -> list[Survey]:
    """The surveys whose retention date has passed and whose answers remain."""
    slugs = db.execute(
        "SELECT slug FROM surveys WHERE destroyed_on IS NULL AND retain_until < ? ORDER BY id",
        [utc_today().isoformat()],
    ).fetchall()
    found = (get_survey(db, slug) for (slug,) in slugs)
    return [survey for survey in found if survey is not None]


def destroy_expired(db: Database) -> list[Removal]:
    """Destroy the answers of every survey past its retention date; what was destroyed.

    Safe to run anywhere at once (every worker at start-up, and cron): each survey is
    re-checked under the write lock, so its answers are destroyed once.
    """
    removals = (destroy_answers(db, survey) for survey in expired_surveys(db))
    return [removal for removal in removals if removal is not None]


def destroy_answers(db: Database, survey: Survey) -> Removal | None:
    """Destroy the survey's answers if its retention date has passed; None when it is not
    (or no longer) due, as after another worker destroyed them.

    Waits while another request counts the survey's answers from scratch (it holds the
    survey's count lease, at most two minutes): that count would otherwise be stored as
    a snapshot after the destruction, and the answers' counts outlive them.
    """
    while True:
        today = utc_today()
        with write_transaction(db):
            due = db.execute(
                "SELECT responses, keep_public_figures FROM surveys WHERE id = ? AND slug = ? "
                "AND destroyed_on IS NULL AND retain_until < ?",
                [survey.id, survey.slug, today.isoformat()],
            ).fetchone()
            if due is None:
                return None
            if not _being_counted(db, survey):
                _destroy_answers(db, survey, today, keep_public_figures=bool(due[1]))
                break
        time.sleep(_COUNTING_POLL_SECONDS)
    forget_counts()
    touched = (*_ANSWER_TABLES, *_PUBLISHED_TABLES, "tallies", "surveys")
    return Removal(survey.slug, survey.title, int(due[0]), _erase_old_copies(db, touched))


def _destroy_answers(
    db: Database, survey: Survey, today: datetime.date, *, keep_public_figures: bool
) -> None:
    published = () if keep_public_figures else _PUBLISHED_TABLES
    _delete_rows(db, survey, (*_ANSWER_TABLES, *published))
    db.execute(
        "DELETE FROM tallies WHERE question_id IN (SELECT id FROM questions WHERE survey_id = ?)",
        [survey.id],
    )
    db.execute(
        "UPDATE surveys SET responses = 0, status = 'closed', destroyed_on = ? WHERE id = ?",
        [today.isoformat(), survey.id],
    )
    record_event(db, RETENTION, ANSWERS_DESTROYED, _subject(survey))


def _erase_old_copies(db: Database, tables: tuple[str, ...]) -> Erasure:
    """Remove what the deleted rows left behind, as each backend allows (``Erasure``).

    PostgreSQL's ``VACUUM`` runs outside a transaction (the connection is autocommit) and
    cannot remove a row version that a transaction still open elsewhere may read; such a
    version goes at autovacuum's next pass.
    """
    if isinstance(db, postgresql.PostgresDatabase):
        db.execute(f"VACUUM {', '.join(tables)}")
        return Erasure.VACUUMED
    return Erasure.ERASED if erase_write_ahead_log(db) else Erasure.LOG_BUSY


def _locked_response_count(db: Database, survey: Survey) -> int:
    row = db.execute(
        "SELECT responses FROM surveys WHERE id = ? AND slug = ?", [survey.id, survey.slug]
    ).fetchone()
    if row is None:
        raise SurveyGoneError(f"no survey {survey.slug!r} to remove")
    return int(row[0])


def _being_counted(db: Database, survey: Survey) -> bool:
    row = db.execute(
        "SELECT 1 FROM count_leases WHERE survey_id = ? AND expires_at > ?",
        [survey.id, time.time()],
    ).fetchone()
    return row is not None


def _delete_rows(db: Database, survey: Survey, tables: tuple[str, ...]) -> None:
    for table in tables:
        db.execute(f"DELETE FROM {table} WHERE survey_id = ?", [survey.id])  # noqa: S608


def _subject(survey: Survey) -> str:
    """How the record names a survey: its address and title, which outlive it there."""
    return f"{survey.slug} ({survey.title})"
