"""What the survey list and a study's page read beyond a survey's own row.

Each survey's owner and the day of its last response (responses keep only their day),
and the researchers a survey's results are shared with.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import sqlite_utils

from survey_app.storage.surveys import Survey


@dataclass(frozen=True)
class SurveyActivity:
    owner_id: int | None  # None: imported without an owner, the operator's
    last_response: datetime.date | None


def survey_activity(db: sqlite_utils.Database) -> dict[str, SurveyActivity]:
    """Every survey's owner and last response day, by slug: one query for the whole list."""
    return {
        slug: SurveyActivity(owner_id, datetime.date.fromisoformat(last) if last else None)
        for slug, owner_id, last in db.execute(
            "SELECT s.slug, s.owner_id, "
            "(SELECT max(r.answered_on) FROM responses r WHERE r.survey_id = s.id) "
            "FROM surveys s"
        ).fetchall()
    }


def viewer_names(db: sqlite_utils.Database, survey: Survey) -> list[str]:
    """The usernames the survey's results are shared with, in alphabetical order."""
    return [
        row[0]
        for row in db.execute(
            "SELECT r.username FROM survey_viewers v JOIN researchers r ON r.id = v.researcher_id "
            "WHERE v.survey_id = ? ORDER BY r.username",
            [survey.id],
        ).fetchall()
    ]
