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


def store_survey(db: sqlite_utils.Database, definition: SurveyDefinition) -> Survey:
    """Store a validated definition with its questions, all or nothing."""
    with write_transaction(db):
        if db.execute("SELECT 1 FROM surveys WHERE slug = ?", [definition.slug]).fetchone():
            raise SurveyExistsError(f"a survey with slug {definition.slug!r} already exists")
        survey_id = (
            db["surveys"]
            .insert(
                {
                    "slug": definition.slug,
                    "title": definition.title,
                    "description": definition.description,
                    "created_on": datetime.date.today().isoformat(),
                }
            )
            .last_pk
        )
        db["questions"].insert_all(
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
        "SELECT id, slug, title, description FROM surveys WHERE slug = ?", [slug]
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
    return Survey(id=row[0], slug=row[1], title=row[2], description=row[3], questions=questions)


def list_surveys(db: sqlite_utils.Database) -> list[dict[str, object]]:
    """Every survey's slug, title and response count, for the index pages.

    Every response answers every question, so the largest question counter is the
    response count, read without scanning the responses.
    """
    return list(
        db.query(
            "SELECT slug, title, (SELECT coalesce(max(n), 0) FROM questions q "
            "WHERE q.survey_id = s.id) AS responses FROM surveys s ORDER BY title"
        )
    )


def count_surveys(db: sqlite_utils.Database) -> int:
    return int(db.execute("SELECT count(*) FROM surveys").fetchone()[0])
