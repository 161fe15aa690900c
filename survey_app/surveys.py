"""Surveys in the database: storing a validated definition and looking surveys up."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import sqlite_utils

from .db import write_transaction
from .definitions import SurveyDefinition
from .designs import question_mechanism, survey_fingerprint
from .privacy import Mechanism, mechanism_from_parameters

STATUSES = ("draft", "open", "closed")


class SurveyExistsError(ValueError):
    """A survey with that slug is already stored; slugs are public URLs and stay unique."""


@dataclass(frozen=True)
class Question:
    """A stored question with the mechanism its answers go through.

    ``mechanism`` is rebuilt from the exact parameters stored with the question, so the ε
    shown and exported is the one of the coins actually flipped. ``requested_epsilon`` is
    the survey file's number as written (None: the type's default).
    """

    id: int
    key: str
    text: str
    type: str
    mechanism: Mechanism
    sensitive: bool = True
    required: bool = True
    options: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None
    requested_epsilon: str | None = None

    @property
    def epsilon(self) -> float:
        """What answering this question costs (0 for a plain one: stored as given)."""
        return self.mechanism.epsilon if self.sensitive else 0.0


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
    consent: str = ""
    contact: str = ""
    max_epsilon: str | None = None
    design: str = ""
    languages: tuple[str, ...] = ("en",)

    def localized(self, language: str) -> Survey:
        """This survey with its texts in ``language``, or in its first language if not one of
        its own. (Placeholder until survey files can give texts per language.)"""
        return self

    @property
    def accepts_responses(self) -> bool:
        return self.status == "open"

    @property
    def by_invitation(self) -> bool:
        return self.access == "invitation"

    @property
    def sensitive_questions(self) -> tuple[Question, ...]:
        return tuple(question for question in self.questions if question.sensitive)

    @property
    def epsilon_total(self) -> float:
        """What answering the whole survey costs one respondent (basic composition)."""
        return sum(question.epsilon for question in self.questions)

    def parameters_by_key(self) -> dict[str, dict[str, Any]]:
        """Every sensitive question's mechanism parameters, as the browser receives them."""
        return {q.key: q.mechanism.parameters() for q in self.sensitive_questions}


def store_survey(
    db: sqlite_utils.Database,
    definition: SurveyDefinition,
    owner_id: int | None = None,
    status: str = "open",
) -> Survey:
    """Store a validated definition with its questions and their design, all or nothing."""
    mechanisms = {q.key: question_mechanism(q) for q in definition.questions}
    parameters = {key: mechanism.parameters() for key, mechanism in mechanisms.items()}
    fingerprint = survey_fingerprint(parameters)
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
                    "consent": definition.consent,
                    "contact": definition.contact,
                    "max_epsilon": _decimal_text(definition.max_epsilon),
                    "design": fingerprint,
                }
            )
            .last_pk
        )
        db.table("designs").insert(
            {
                "fingerprint": fingerprint,
                "survey_id": survey_id,
                "questions": json.dumps(parameters, sort_keys=True),
            },
            ignore=True,
        )
        db.table("questions").insert_all(
            {
                "survey_id": survey_id,
                "position": position,
                "key": question.key,
                "text": question.text,
                "type": question.type,
                "sensitive": int(question.sensitive),
                "required": int(question.required),
                "options": json.dumps(question.options) if question.type == "choice" else None,
                "min": question.min,
                "max": question.max,
                "requested_epsilon": _decimal_text(question.epsilon),
                "parameters": json.dumps(parameters[question.key], sort_keys=True),
            }
            for position, question in enumerate(definition.questions)
        )
    survey = get_survey(db, definition.slug)
    assert survey is not None
    return survey


def _decimal_text(value: Fraction | None) -> str | None:
    """A number from the survey file, kept as the decimal it was written as."""
    if value is None:
        return None
    return (
        str(value.numerator)
        if value.denominator == 1
        else str(Decimal(value.numerator) / value.denominator)
    )


_SURVEY_COLUMNS = (
    "id, slug, title, description, status, access, owner_id, consent, contact, max_epsilon, design"
)
_QUESTION_COLUMNS = (
    "id, key, text, type, sensitive, required, options, min, max, requested_epsilon, parameters"
)


def get_survey(db: sqlite_utils.Database, slug: str) -> Survey | None:
    row = db.execute(
        f"SELECT {_SURVEY_COLUMNS} FROM surveys WHERE slug = ?",  # noqa: S608
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
            mechanism=mechanism_from_parameters(json.loads(q["parameters"])),
            sensitive=bool(q["sensitive"]),
            required=bool(q["required"]),
            options=tuple(json.loads(q["options"])) if q["options"] else (),
            min=q["min"],
            max=q["max"],
            requested_epsilon=q["requested_epsilon"],
        )
        for q in db.query(
            f"SELECT {_QUESTION_COLUMNS} FROM questions "  # noqa: S608
            "WHERE survey_id = ? ORDER BY position",
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
        consent=row[7],
        contact=row[8],
        max_epsilon=row[9],
        design=row[10],
    )


# Who may see a survey's results: its owner, researchers it is shared with, and, for a
# survey nobody owns, every researcher.
_VISIBLE_TO = (
    "(s.owner_id IS NULL OR s.owner_id = :researcher OR EXISTS (SELECT 1 FROM survey_viewers v "
    "WHERE v.survey_id = s.id AND v.researcher_id = :researcher))"
)
_SUMMARY = "SELECT s.slug, s.title, s.status, s.access, s.responses FROM surveys s"


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


def survey_response_count(db: sqlite_utils.Database, survey: Survey) -> int:
    row = db.execute("SELECT responses FROM surveys WHERE id = ?", [survey.id]).fetchone()
    return int(row[0])


def count_surveys(db: sqlite_utils.Database) -> int:
    return int(db.execute("SELECT count(*) FROM surveys").fetchone()[0])
