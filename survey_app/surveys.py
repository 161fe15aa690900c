"""Surveys in the database: storing a validated definition and looking surveys up."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import sqlite_utils

from .db import write_transaction
from .definitions import SurveyDefinition
from .privacy import FAIR_COINS, TwoCoinDesign, survey_epsilon

# The mechanism each question type uses. yes_no: fair coins, ε = ln 3 (DESIGN.md).
QUESTION_DESIGNS: dict[str, TwoCoinDesign] = {"yes_no": FAIR_COINS}


STATUSES = ("draft", "open", "closed")


class SurveyExistsError(ValueError):
    """A survey with that slug is already stored; slugs are public URLs and stay unique."""


@dataclass(frozen=True)
class Question:
    id: int
    key: str
    text: str
    type: str
    design: TwoCoinDesign


@dataclass(frozen=True)
class Survey:
    id: int
    slug: str
    title: str
    description: str
    questions: tuple[Question, ...]
    status: str = "open"
    access: str = "open"
    owner_id: int | None = None

    @property
    def accepts_responses(self) -> bool:
        return self.status == "open"

    @property
    def by_invitation(self) -> bool:
        return self.access == "invitation"

    @property
    def epsilon_per_answer(self) -> float:
        return max(question.design.epsilon for question in self.questions)

    @property
    def epsilon_total(self) -> float:
        """What answering the whole survey costs one respondent (basic composition)."""
        return sum(survey_epsilon(1, question.design) for question in self.questions)

    @property
    def all_fair_coins(self) -> bool:
        return all(question.design.is_fair for question in self.questions)


def store_survey(
    db: sqlite_utils.Database,
    definition: SurveyDefinition,
    owner_id: int | None = None,
    status: str = "open",
) -> Survey:
    """Store a validated definition with its questions, all or nothing."""
    with write_transaction(db):
        if db.execute("SELECT 1 FROM surveys WHERE slug = ?", [definition.slug]).fetchone():
            raise SurveyExistsError(f"a survey with slug {definition.slug!r} already exists")
        survey_id = (
            db.table("surveys")
            .insert(
                {
                    "slug": definition.slug,
                    "title": definition.title,
                    "description": definition.description,
                    "created_on": datetime.date.today().isoformat(),
                    "owner_id": owner_id,
                    "status": status,
                    "access": definition.access,
                }
            )
            .last_pk
        )
        db.table("questions").insert_all(
            {
                "survey_id": survey_id,
                "position": position,
                "key": question.key,
                "text": question.text,
                "type": question.type,
                "truth_probability": QUESTION_DESIGNS[question.type].truth_probability,
                "forced_yes_probability": QUESTION_DESIGNS[question.type].forced_yes_probability,
            }
            for position, question in enumerate(definition.questions)
        )
    survey = get_survey(db, definition.slug)
    assert survey is not None
    return survey


def get_survey(db: sqlite_utils.Database, slug: str) -> Survey | None:
    row = db.execute(
        "SELECT id, slug, title, description, status, access, owner_id FROM surveys WHERE slug = ?",
        [slug],
    ).fetchone()
    if row is None:
        return None
    questions = tuple(
        Question(
            id=q["id"],
            key=q["key"],
            text=q["text"],
            type=q["type"],
            design=TwoCoinDesign(q["truth_probability"], q["forced_yes_probability"]),
        )
        for q in db.query(
            "SELECT id, key, text, type, truth_probability, forced_yes_probability "
            "FROM questions WHERE survey_id = ? ORDER BY position",
            [row[0]],
        )
    )
    return Survey(
        id=row[0],
        slug=row[1],
        title=row[2],
        description=row[3],
        questions=questions,
        status=row[4],
        access=row[5],
        owner_id=row[6],
    )


# Who may see a survey's results: its owner, researchers it is shared with, and, for a
# survey nobody owns, every researcher.
_VISIBLE_TO = (
    "(s.owner_id IS NULL OR s.owner_id = :researcher OR EXISTS (SELECT 1 FROM survey_viewers v "
    "WHERE v.survey_id = s.id AND v.researcher_id = :researcher))"
)
# Every response answers every question, so the largest question counter is the response
# count, read without scanning the responses.
_SUMMARY = (
    "SELECT s.slug, s.title, s.status, s.access, (SELECT coalesce(max(n), 0) FROM questions q "
    "WHERE q.survey_id = s.id) AS responses FROM surveys s"
)


def list_public_surveys(db: sqlite_utils.Database) -> list[dict[str, object]]:
    """Surveys anyone may answer: open, and not by invitation only."""
    return list(
        db.query(f"{_SUMMARY} WHERE s.status = 'open' AND s.access = 'open' ORDER BY title")
    )


def list_visible_surveys(db: sqlite_utils.Database, researcher_id: int) -> list[dict[str, object]]:
    """The surveys whose results this researcher may see, with response counts."""
    return list(
        db.query(f"{_SUMMARY} WHERE {_VISIBLE_TO} ORDER BY title", {"researcher": researcher_id})
    )


def can_see(db: sqlite_utils.Database, survey: Survey, researcher_id: int) -> bool:
    row = db.execute(
        f"SELECT 1 FROM surveys s WHERE s.id = :survey AND {_VISIBLE_TO}",  # noqa: S608
        {"survey": survey.id, "researcher": researcher_id},
    ).fetchone()
    return row is not None


def set_status(db: sqlite_utils.Database, survey: Survey, status: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    with write_transaction(db):
        db.execute("UPDATE surveys SET status = ? WHERE id = ?", [status, survey.id])


def share_survey(db: sqlite_utils.Database, survey: Survey, researcher_id: int) -> None:
    """Let another researcher view a survey's results (idempotent)."""
    with write_transaction(db):
        db.execute(
            "INSERT OR IGNORE INTO survey_viewers (survey_id, researcher_id) VALUES (?, ?)",
            [survey.id, researcher_id],
        )


def count_surveys(db: sqlite_utils.Database) -> int:
    return int(db.execute("SELECT count(*) FROM surveys").fetchone()[0])
