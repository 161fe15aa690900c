"""Storing randomized responses: once per submission, with the counters in step.

Everything that reaches this module is already randomized (in the browser, or by the
respond blueprint before it calls in here); nothing here ever sees a true answer.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from survey_app.domain.answers import Report, Stored, from_stored, to_stored
from survey_app.domain.display_logic import NOT_APPLICABLE
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.invitations import AnswerTicket, InvitationError, use_ticket
from survey_app.storage.joint_tallies import add_to_joint_tallies
from survey_app.storage.surveys import Survey
from survey_app.storage.tallies import add_to_tallies


@dataclass(frozen=True)
class StoredResponse:
    """Exactly the stored row, shown to the respondent after submitting (invariant 5).

    ``design`` is the fingerprint of the mechanisms (with their exact parameters) that
    the reports went through; ``reported`` holds None for a skipped question and for one
    that did not apply, whose key is in ``not_applicable`` (``display_logic``).
    """

    survey_slug: str
    answered_on: str
    design: str
    reported: dict[str, Report | None]
    not_applicable: frozenset[str] = frozenset()


class SubmissionConflictError(ValueError):
    """The submission id was already used for another survey."""


class SurveyNotOpenError(ValueError):
    """The survey closed, or was deleted or its answers destroyed, while the response was
    on its way: nothing was stored (a response must never outlive a destruction)."""


def find_response(db: Database, survey: Survey, submission_id: str) -> StoredResponse | None:
    """The response stored under this submission id, so a retried POST is answered alike."""
    row = db.execute(
        "SELECT survey_id, answered_on, design, answers FROM responses WHERE submission_id = ?",
        [submission_id],
    ).fetchone()
    if row is None:
        return None
    survey_id, answered_on, design, answers = row
    if survey_id != survey.id:
        raise SubmissionConflictError("this submission id belongs to another survey")
    stored: dict[str, Stored] = json.loads(answers)
    hidden = frozenset(key for key, value in stored.items() if value == NOT_APPLICABLE)
    return StoredResponse(
        survey_slug=survey.slug,
        answered_on=answered_on,
        design=design,
        reported={
            q.key: None if q.key in hidden else from_stored(q, stored.get(q.key))
            for q in survey.questions
        },
        not_applicable=hidden,
    )


def record_response(
    db: Database,
    survey: Survey,
    reported: Mapping[str, Report | None],
    submission_id: str,
    ticket: AnswerTicket | None = None,
    not_applicable: frozenset[str] = frozenset(),
) -> StoredResponse:
    """Store one randomized response and add it to the tallies, in one short transaction.

    ``not_applicable`` names the questions whose condition the plain answers did not meet
    (``display_logic.not_applicable``): each is stored as ``NOT_APPLICABLE`` and must come
    with no report (ValueError otherwise: an answer to a question that did not apply is
    never stored, randomized or not).

    A submission id already stored returns the earlier response unchanged: a retry must
    not add a second, freshly randomized copy (two copies would weaken the protection).
    Plain SQL on purpose: this is the one write on the hot path, and it must stay as short
    as the lock it holds.

    For a survey by invitation the response carries the answer ticket its respondent's
    link was spent for (``invitations``); the ticket's hash is kept as spent in the
    response's own transaction, so the two are stored together or not at all, and the
    link is nowhere in it. A missing or used ticket raises InvitationError, a survey that
    is no longer open SurveyNotOpenError, and nothing is stored.
    """
    if set(reported) != {q.key for q in survey.questions}:
        raise ValueError("a response must list exactly the survey's questions")
    if any(reported[key] is not None for key in not_applicable):
        raise ValueError("a question that did not apply has no report to store")
    stored = StoredResponse(
        survey_slug=survey.slug,
        answered_on=datetime.date.today().isoformat(),
        design=survey.design,
        reported=dict(reported),
        not_applicable=not_applicable,
    )
    values = {
        q.key: NOT_APPLICABLE if q.key in not_applicable else to_stored(q, reported[q.key])
        for q in survey.questions
    }
    if survey.by_invitation and ticket is None:
        raise InvitationError("this survey needs the invitation link you were sent")
    return _store(db, survey, stored, submission_id, values, ticket)


def _store(
    db: Database,
    survey: Survey,
    stored: StoredResponse,
    submission_id: str,
    values: dict[str, Stored],
    ticket: AnswerTicket | None,
) -> StoredResponse:
    """The response's own transaction: its ticket spent, the survey's count, the row, the
    tallies and the joint counts.

    The count goes first, and only while the survey is open: the status is checked under
    the write lock, so a response cannot land after a close or a destruction committed.
    """
    with write_transaction(db):
        existing = find_response(db, survey, submission_id)
        if existing is not None:
            return existing
        if ticket is not None:
            use_ticket(db, survey, ticket)
        counted = db.execute(
            "UPDATE surveys SET responses = responses + 1 WHERE id = ? AND status = 'open'",
            [survey.id],
        ).rowcount
        if not counted:
            raise SurveyNotOpenError(f"{survey.slug!r} no longer takes answers")
        db.execute(
            "INSERT INTO responses (submission_id, survey_id, answered_on, design, answers) "
            "VALUES (?, ?, ?, ?, ?)",
            [submission_id, survey.id, stored.answered_on, stored.design, json.dumps(values)],
        )
        add_to_tallies(db, survey, stored.reported, stored.not_applicable)
        add_to_joint_tallies(db, survey, values)
    return stored


def iter_response_rows(db: Database, survey: Survey) -> Iterator[list[object]]:
    """Every stored response as [day, design, stored value per question], the value
    ``NOT_APPLICABLE`` for a question that did not apply, None for a skip.

    Read with a plain cursor in storage order, one row at a time: exports of a million
    rows stream through here, so nothing is collected and no per-row object is built.
    """
    keys = [q.key for q in survey.questions]
    cursor = db.execute(
        "SELECT answered_on, design, answers FROM responses WHERE survey_id = ? ORDER BY id",
        [survey.id],
    )
    for answered_on, design, answers in cursor:
        reported = json.loads(answers)
        yield [answered_on, design, *(reported.get(key) for key in keys)]
