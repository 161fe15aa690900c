"""What a study's owner decides beyond the survey's definition, and what the survey list
and a study's page read beyond a survey's own row.

Who owns a new survey, who may view it, whether the front page lists it, how long its
answers may be kept, and copies of it; each survey's owner and the day of its last
response (responses keep only their day); the researchers a survey is shared with.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterator
from dataclasses import dataclass

from survey_app.domain.definitions import parse_definition
from survey_app.domain.survey_limits import MAX_SLUG_LENGTH
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.storage import destruction
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.surveys import (
    Survey,
    SurveyDestroyedError,
    SurveyExistsError,
    store_survey,
    survey_definition,
)


class RetentionDateInPastError(ValueError):
    """A retention date before today: answers already older than it would be kept."""


class RetentionDatePassedError(ValueError):
    """The survey's retention date has passed: its answers are due for destruction, and
    nothing may postpone that."""


@dataclass(frozen=True)
class SurveyActivity:
    owner_id: int | None  # None: stored before any account existed
    last_response: datetime.date | None


def survey_activity(db: Database) -> dict[str, SurveyActivity]:
    """Every survey's owner and last response day, by slug: one query for the whole list."""
    return {
        slug: SurveyActivity(owner_id, datetime.date.fromisoformat(last) if last else None)
        for slug, owner_id, last in db.execute(
            "SELECT s.slug, s.owner_id, "
            "(SELECT max(r.answered_on) FROM responses r WHERE r.survey_id = s.id) "
            "FROM surveys s"
        ).fetchall()
    }


def viewer_names(db: Database, survey: Survey) -> list[str]:
    """The usernames the survey's results are shared with, in alphabetical order."""
    return [
        row[0]
        for row in db.execute(
            "SELECT r.username FROM survey_viewers v JOIN researchers r ON r.id = v.researcher_id "
            "WHERE v.survey_id = ? ORDER BY r.username COLLATE BINARY",
            [survey.id],
        ).fetchall()
    ]


def default_owner_id(db: Database) -> int | None:
    """Who owns a survey stored without a named owner: the first active administrator.
    None before any account exists; the first account then adopts the survey."""
    row = db.execute(
        "SELECT min(id) FROM researchers WHERE role = 'admin' AND active = 1"
    ).fetchone()
    return None if row[0] is None else int(row[0])


def set_listed(db: Database, survey: Survey, listed: bool) -> None:
    """List the survey on the respondents' front page, or stop listing it. The front page
    shows it only while it is open to anyone; its address works either way."""
    with write_transaction(db):
        db.execute("UPDATE surveys SET listed = ? WHERE id = ?", [int(listed), survey.id])


def set_retention(
    db: Database,
    survey: Survey,
    retain_until: datetime.date | None,
    keep_public_figures: bool,
) -> None:
    """Set the last day the survey's answers may be kept (None: no date) and whether its
    published figures outlive them.

    The date may be today (UTC) or later, or none; it may move either way until it
    passes. Raises ``RetentionDateInPastError`` for a date before today, and, checked under
    the write lock, ``SurveyDestroyedError`` once the answers were destroyed and
    ``RetentionDatePassedError`` once the survey's own date has passed (its answers are
    due for destruction): nothing may keep them longer then.
    """
    today = destruction.utc_today()
    if retain_until is not None and retain_until < today:
        raise RetentionDateInPastError(f"{retain_until} is before {today}")
    with write_transaction(db):
        destroyed_on, current = db.execute(
            "SELECT destroyed_on, retain_until FROM surveys WHERE id = ?", [survey.id]
        ).fetchone()
        if destroyed_on is not None:
            raise SurveyDestroyedError(f"the answers of {survey.slug!r} were destroyed")
        if current is not None and datetime.date.fromisoformat(current) < today:
            raise RetentionDatePassedError(f"{survey.slug!r} was to be kept until {current}")
        db.execute(
            "UPDATE surveys SET retain_until = ?, keep_public_figures = ? WHERE id = ?",
            [
                None if retain_until is None else retain_until.isoformat(),
                int(keep_public_figures),
                survey.id,
            ],
        )


def copy_slugs(slug: str) -> Iterator[str]:
    """Addresses for copies of ``slug``: ``slug-copy``, then ``slug-copy-2``, ``-copy-3``…,
    the original shortened where needed to fit the longest slug allowed."""
    number = 1
    while True:
        suffix = "-copy" if number == 1 else f"-copy-{number}"
        yield slug[: MAX_SLUG_LENGTH - len(suffix)].rstrip("-") + suffix
        number += 1


def copy_survey(db: Database, survey: Survey, owner_id: int) -> Survey:
    """A new draft of ``owner_id``'s with the survey's questions, texts and mechanisms
    (each named as stored, so the copy runs the same design), at the first free
    ``copy_slugs`` address. Its file is generated YAML: the original's comments stay
    behind. Nothing else comes along: no responses, viewers, listing or retention date.
    """
    definition = survey_definition(survey)
    slugs = copy_slugs(survey.slug)
    while True:
        slug = next(slugs)
        if db.execute("SELECT 1 FROM surveys WHERE slug = ?", [slug]).fetchone():
            continue
        text = definition_yaml(dataclasses.replace(definition, slug=slug))
        try:
            return store_survey(db, parse_definition(text, fmt="yaml"), owner_id, "draft")
        except SurveyExistsError:
            continue  # taken between the look and the write: try the next one
