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


def recount(db: sqlite_utils.Database, survey: Survey) -> Recount:
    """Rebuild the counters from the stored responses in one scan and one transaction."""
    with write_transaction(db):
        before = {
            row[0]: (row[1], row[2])
            for row in db.execute(
                "SELECT key, n, reported_yes FROM questions WHERE survey_id = ?", [survey.id]
            )
        }
        after = dict.fromkeys(before, (0, 0))
        for key, n, yes in db.execute(
            "SELECT answer.key, count(*), sum(answer.value) "
            "FROM responses, json_each(responses.answers) AS answer "
            "WHERE responses.survey_id = ? GROUP BY answer.key",
            [survey.id],
        ):
            after[key] = (n, yes)
        for key, (n, yes) in after.items():
            db.execute(
                "UPDATE questions SET n = ?, reported_yes = ? WHERE survey_id = ? AND key = ?",
                [n, yes, survey.id, key],
            )
    return Recount(before=before, after=after)
