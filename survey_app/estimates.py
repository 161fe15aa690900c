"""Per-question estimates from the running counters: O(questions), never O(responses)."""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from .db import write_transaction
from .privacy import Estimate, estimate_prevalence
from .surveys import Question, Survey


@dataclass(frozen=True)
class QuestionEstimate:
    question: Question
    n: int
    reported_yes: int
    estimate: Estimate | None  # None without responses: shown as empty, never as 0

    @property
    def reported_rate(self) -> float | None:
        return self.reported_yes / self.n if self.n else None

    @property
    def clipped(self) -> bool:
        """Whether the unbiased estimate fell outside [0, 1] and the point was clipped."""
        return self.estimate is not None and self.estimate.point != self.estimate.unclipped


def survey_estimates(
    db: sqlite_utils.Database, survey: Survey, confidence: float = 0.95, method: str = "wilson"
) -> list[QuestionEstimate]:
    counts = {
        row[0]: (row[1], row[2])
        for row in db.execute(
            "SELECT id, n, reported_yes FROM questions WHERE survey_id = ?", [survey.id]
        )
    }
    return [
        QuestionEstimate(
            question=question,
            n=counts[question.id][0],
            reported_yes=counts[question.id][1],
            estimate=estimate_prevalence(
                counts[question.id][1], counts[question.id][0], question.design, confidence, method
            ),
        )
        for question in survey.questions
    ]


@dataclass(frozen=True)
class Recount:
    """The counters as stored and as rebuilt from the responses, per question key."""

    before: dict[str, tuple[int, int]]
    after: dict[str, tuple[int, int]]

    @property
    def matched(self) -> bool:
        return self.before == self.after


def _count_answers(
    db: sqlite_utils.Database, survey: Survey, after_id: int
) -> tuple[int, dict[str, tuple[int, int]]]:
    """(n, reported yes) per question over responses with id > after_id, and the last id.

    One pass with a sum per question: JSON is parsed in SQLite, not row by row in Python.
    """
    paths = [f'$."{q.key}"' for q in survey.questions]
    columns = ", ".join(
        "count(json_extract(answers, ?)), sum(json_extract(answers, ?))" for _ in paths
    )
    row = db.execute(
        f"SELECT coalesce(max(id), ?), {columns} FROM responses "  # noqa: S608 (placeholders only)
        "WHERE survey_id = ? AND id > ?",
        [after_id, *(path for path in paths for _ in range(2)), survey.id, after_id],
    ).fetchone()
    counts = {
        q.key: (int(row[1 + 2 * i]), int(row[2 + 2 * i] or 0))
        for i, q in enumerate(survey.questions)
    }
    return int(row[0]), counts


def recount(db: sqlite_utils.Database, survey: Survey) -> Recount:
    """Rebuild the counters from the stored responses without stopping submissions.

    The long scan reads a snapshot and holds no write lock (a million rows take seconds,
    longer than a submission waits for the lock). The write transaction then adds only
    the responses that arrived since the snapshot, compares and stores: short, and exact.
    """
    db.execute("BEGIN")  # deferred: a consistent read snapshot, no write lock
    try:
        last_id, scanned = _count_answers(db, survey, after_id=0)
    finally:
        db.execute("COMMIT")
    with write_transaction(db):
        _, newer = _count_answers(db, survey, after_id=last_id)
        before = {
            row[0]: (row[1], row[2])
            for row in db.execute(
                "SELECT key, n, reported_yes FROM questions WHERE survey_id = ?", [survey.id]
            )
        }
        after = {key: (n + newer[key][0], yes + newer[key][1]) for key, (n, yes) in scanned.items()}
        for key, (n, yes) in after.items():
            db.execute(
                "UPDATE questions SET n = ?, reported_yes = ? WHERE survey_id = ? AND key = ?",
                [n, yes, survey.id, key],
            )
    return Recount(before=before, after=after)
