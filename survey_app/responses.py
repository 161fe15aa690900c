"""Storing randomized responses: once per submission, with the counters in step.

Everything that reaches this module is already randomized (in the browser, or by the
respond blueprint before it calls in here); nothing here ever sees a true answer.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import sqlite_utils

from .db import write_transaction
from .invitations import use_invitation
from .privacy import MECHANISM_NAME
from .surveys import Survey


@dataclass(frozen=True)
class StoredResponse:
    """Exactly the stored row, shown to the respondent after submitting (invariant 5)."""

    survey_slug: str
    answered_on: str
    mechanism: str
    truth_probability: float
    forced_yes_probability: float
    reported: dict[str, bool]


class SubmissionConflictError(ValueError):
    """The submission id was already used for another survey."""


_STORED_COLUMNS = (
    "survey_id, answered_on, mechanism, truth_probability, forced_yes_probability, answers"
)


def find_response(
    db: sqlite_utils.Database, survey: Survey, submission_id: str
) -> StoredResponse | None:
    """The response stored under this submission id, so a retried POST is answered alike."""
    row = db.execute(
        f"SELECT {_STORED_COLUMNS} FROM responses WHERE submission_id = ?",  # noqa: S608
        [submission_id],
    ).fetchone()
    if row is None:
        return None
    survey_id, answered_on, mechanism, truth, forced_yes, answers = row
    if survey_id != survey.id:
        raise SubmissionConflictError("this submission id belongs to another survey")
    stored = json.loads(answers)
    return StoredResponse(
        survey_slug=survey.slug,
        answered_on=answered_on,
        mechanism=mechanism,
        truth_probability=truth,
        forced_yes_probability=forced_yes,
        reported={q.key: bool(stored[q.key]) for q in survey.questions},
    )


def record_response(
    db: sqlite_utils.Database,
    survey: Survey,
    reported: Mapping[str, bool],
    submission_id: str,
    invitation: str | None = None,
) -> StoredResponse:
    """Store one randomized response and bump the counters, in one short transaction.

    A submission id already stored returns the earlier response unchanged: a retry must
    not add a second, freshly randomized copy (two copies would weaken the protection).
    For a survey by invitation the token is used up in the same transaction; an unusable
    one raises InvitationError and nothing is stored. Plain SQL on purpose: this is the
    one write on the hot path, and it must stay as short as the lock it holds.
    """
    if set(reported) != {q.key for q in survey.questions}:
        raise ValueError("a response must answer exactly the survey's questions")
    design = survey.questions[0].design
    stored = StoredResponse(
        survey_slug=survey.slug,
        answered_on=datetime.date.today().isoformat(),
        mechanism=MECHANISM_NAME,
        truth_probability=design.truth_probability,
        forced_yes_probability=design.forced_yes_probability,
        reported={q.key: bool(reported[q.key]) for q in survey.questions},
    )
    with write_transaction(db):
        existing = find_response(db, survey, submission_id)
        if existing is not None:
            return existing
        if survey.by_invitation:
            use_invitation(db, survey, invitation)
        db.execute(
            "INSERT INTO responses (submission_id, "  # noqa: S608
            f"{_STORED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                submission_id,
                survey.id,
                stored.answered_on,
                stored.mechanism,
                stored.truth_probability,
                stored.forced_yes_probability,
                json.dumps({key: int(value) for key, value in stored.reported.items()}),
            ],
        )
        db.conn.executemany(
            "UPDATE questions SET n = n + 1, reported_yes = reported_yes + ? WHERE id = ?",
            [(int(stored.reported[q.key]), q.id) for q in survey.questions],
        )
    return stored


def iter_response_rows(db: sqlite_utils.Database, survey: Survey) -> Iterator[list[object]]:
    """Every stored response as [day, mechanism, t, f, answer per question (1/0)].

    Read with a plain cursor in storage order, one row at a time: exports of a million
    rows stream through here, so nothing is collected and no per-row object is built.
    """
    keys = [q.key for q in survey.questions]
    cursor = db.execute(
        "SELECT answered_on, mechanism, truth_probability, forced_yes_probability, answers "
        "FROM responses WHERE survey_id = ? ORDER BY id",
        [survey.id],
    )
    for answered_on, mechanism, truth, forced_yes, answers in cursor:
        reported = json.loads(answers)
        yield [answered_on, mechanism, truth, forced_yes, *(reported[key] for key in keys)]
