"""Surveys in the database: storing a validated definition, looking surveys up, and
replacing or deleting a draft nobody has answered yet."""

from __future__ import annotations

import dataclasses
import datetime
import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

from survey_app.domain.definitions import parse_definition
from survey_app.domain.designs import file_mechanism_name, question_mechanism, survey_fingerprint
from survey_app.domain.display_logic import ShowIf
from survey_app.domain.display_order import AS_WRITTEN
from survey_app.domain.survey_limits import DEFAULT_LANGUAGES
from survey_app.domain.survey_model import (
    Completion,
    QuestionDefinition,
    QuestionTexts,
    SectionDefinition,
    SectionTexts,
    SurveyDefinition,
    SurveyDefinitionError,
    SurveyTexts,
)
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.privacy import Mechanism, QuestionType, mechanism_from_parameters
from survey_app.privacy.central import decimal_text
from survey_app.storage.backends import Database
from survey_app.storage.database import insert_row, insert_rows, update_row, write_transaction

STATUSES = ("draft", "open", "closed")


class SurveyExistsError(ValueError):
    """A survey with that slug is already stored; slugs are public URLs and stay unique."""


class SurveyNotDraftError(ValueError):
    """Only a draft nobody has answered may be replaced or deleted: once a survey is open,
    its questions and mechanisms are what its responses were randomized under."""


class SurveyDestroyedError(ValueError):
    """The survey's answers were destroyed (its retention date passed): it stays closed,
    and its retention settings stay as they were when it happened."""


Texts = TypeVar("Texts", QuestionTexts, SurveyTexts, SectionTexts)


def _swapped(
    translations: dict[str, Texts], shown: str, current: str, current_texts: Texts
) -> dict[str, Texts]:
    """The other languages' texts once ``shown`` takes the place of ``current``."""
    others = {code: texts for code, texts in translations.items() if code != shown}
    return {**others, current: current_texts}


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
    type: QuestionType
    mechanism: Mechanism
    sensitive: bool = True
    required: bool = True
    options: tuple[str, ...] = ()
    #: A scale's score of each option; empty for the other types.
    scores: tuple[int, ...] = ()
    min: int | None = None
    max: int | None = None
    requested_epsilon: str | None = None
    #: Shown only when an earlier plain question's answer meets this (``display_logic``).
    show_if: ShowIf | None = None
    #: How its options are shown, and which keep their place (``display_order``).
    option_order: str = AS_WRITTEN
    fixed_options: tuple[int, ...] = ()
    #: Text and options in the survey's languages other than the one ``text`` is in.
    translations: dict[str, QuestionTexts] = field(default_factory=dict, hash=False)
    #: Whether its kept joint counts hold every response (``joint_tallies``).
    joint_tallies_complete: bool = True

    def shown_in(self, language: str, current: str) -> Question:
        """This question in ``language``, given that its fields are in ``current``."""
        if language not in self.translations:
            return self
        wanted = self.translations[language]
        return dataclasses.replace(
            self,
            text=wanted.text,
            options=wanted.options,
            translations=_swapped(
                self.translations, language, current, QuestionTexts(self.text, self.options)
            ),
        )

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
    #: The researcher's words on the thank-you page, and a panel's code or address.
    thank_you: str = ""
    completion: Completion | None = None
    max_epsilon: str | None = None
    design: str = ""
    #: The languages its texts are given in; the first is the main one (exports, CSV).
    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    #: Title, description, consent and contact in every language of ``languages`` but the
    #: one the fields above are in: on a stored survey, the main language.
    translations: dict[str, SurveyTexts] = field(default_factory=dict, hash=False)
    #: On the respondents' front page (if open to anyone): the owner's choice, off by default.
    listed: bool = False
    #: The last day its answers may be kept (UTC); None: no date set.
    retain_until: datetime.date | None = None
    #: Whether the published figures stay once the answers are destroyed.
    keep_public_figures: bool = False
    #: The day its answers were destroyed, once they were.
    destroyed_on: datetime.date | None = None
    #: How its questions are shown (``display_order``): drawn per page, never stored.
    question_order: str = AS_WRITTEN
    #: Its pages, each starting at one of ``questions``; empty: the survey is one page.
    sections: tuple[SectionDefinition, ...] = ()

    def localized(self, language: str) -> Survey:
        """This survey with its texts in ``language``, or in its main language if
        ``language`` is not one of its own.

        Only words change: keys, option order (the option indexes sent and stored),
        mechanisms and the design are the same in every language. A localized survey can
        be localized again, to any of its languages.
        """
        wanted = language if language in self.languages else self.languages[0]
        if wanted not in self.translations:
            return self  # already in that language
        current = next(code for code in self.languages if code not in self.translations)
        texts = self.translations[wanted]
        return dataclasses.replace(
            self,
            title=texts.title,
            description=texts.description,
            consent=texts.consent,
            contact=texts.contact,
            thank_you=texts.thank_you,
            questions=tuple(question.shown_in(wanted, current) for question in self.questions),
            sections=tuple(_section_in(section, wanted, current) for section in self.sections),
            translations=_swapped(
                self.translations,
                wanted,
                current,
                SurveyTexts(
                    self.title, self.description, self.consent, self.contact, self.thank_you
                ),
            ),
        )

    def section_questions(self, index: int) -> tuple[Question, ...]:
        """The questions of section ``index``: from its start to the next section's."""
        starts = [section.start for section in self.sections] + [len(self.questions)]
        return self.questions[starts[index] : starts[index + 1]]

    @property
    def parts(self) -> tuple[tuple[Question, ...], ...]:
        """The questions of each page part: each section's, or all of them as one."""
        if not self.sections:
            return (self.questions,)
        return tuple(self.section_questions(index) for index in range(len(self.sections)))

    @property
    def part_orders(self) -> tuple[str, ...]:
        """The order each page part shows its questions in: a section's own, else the
        survey's."""
        if not self.sections:
            return (self.question_order,)
        return tuple(section.question_order or self.question_order for section in self.sections)

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
    def plain_questions(self) -> tuple[Question, ...]:
        """The questions stored as given (covariates, groups)."""
        return tuple(question for question in self.questions if not question.sensitive)

    @property
    def epsilon_total(self) -> float:
        """What answering the whole survey costs one respondent (basic composition)."""
        return sum(question.epsilon for question in self.questions)

    def parameters_by_key(self) -> dict[str, dict[str, Any]]:
        """Every sensitive question's mechanism parameters, as the browser receives them."""
        return {q.key: q.mechanism.parameters() for q in self.sensitive_questions}


def _section_in(section: SectionDefinition, language: str, current: str) -> SectionDefinition:
    """A section's words in ``language``, given that its fields are in ``current``."""
    if language not in section.translations:
        return section
    wanted = section.translations[language]
    return dataclasses.replace(
        section,
        title=wanted.title,
        description=wanted.description,
        translations=_swapped(
            section.translations,
            language,
            current,
            SectionTexts(section.title, section.description),
        ),
    )


def _sections_json(sections: tuple[SectionDefinition, ...]) -> str:
    """The ``sections`` column: each section's start and words, by language."""
    return json.dumps(
        [
            {
                "start": section.start,
                "title": section.title,
                "description": section.description,
                "translations": {
                    code: dataclasses.asdict(texts) for code, texts in section.translations.items()
                },
                "question_order": section.question_order,
            }
            for section in sections
        ],
        ensure_ascii=False,
    )


def _sections_from_json(stored: str) -> tuple[SectionDefinition, ...]:
    return tuple(
        SectionDefinition(
            start=section["start"],
            title=section["title"],
            description=section["description"],
            translations={
                code: SectionTexts(**texts) for code, texts in section["translations"].items()
            },
            question_order=section.get("question_order"),
        )
        for section in json.loads(stored)
    )


def store_survey(
    db: Database,
    definition: SurveyDefinition,
    owner_id: int | None = None,
    status: str = "open",
    listed: bool = False,
) -> Survey:
    """Store a validated definition with its questions and their design, all or nothing."""
    parameters = _parameters(definition)
    with write_transaction(db):
        _refuse_taken_slug(db, definition.slug)
        survey_id = insert_row(
            db,
            "surveys",
            {
                **_survey_row(definition, parameters),
                "created_on": datetime.date.today().isoformat(),
                "owner_id": owner_id,
                "status": status,
                "listed": int(listed),
            },
        )
        _insert_design_and_questions(db, survey_id, definition, parameters)
    return _stored(db, definition.slug)


def replace_draft(db: Database, survey: Survey, definition: SurveyDefinition) -> Survey:
    """Put a new definition in place of a draft nobody has answered, all or nothing.

    The survey keeps its id, owner, viewers and creation day; everything the definition
    says (slug included, if the new one is free) is replaced. Raises
    ``SurveyNotDraftError`` if the survey is no longer such a draft, ``SurveyExistsError``
    if another survey has the new slug.
    """
    parameters = _parameters(definition)
    with write_transaction(db):
        _require_unanswered_draft(db, survey)
        _refuse_taken_slug(db, definition.slug, survey.id)
        delete_questions_and_design(db, survey.id)
        update_row(db, "surveys", survey.id, _survey_row(definition, parameters))
        _insert_design_and_questions(db, survey.id, definition, parameters)
    return _stored(db, definition.slug)


def delete_draft(db: Database, survey: Survey) -> None:
    """Delete a draft nobody has answered, with its questions, viewers and invitations.

    Raises ``SurveyNotDraftError`` otherwise: a survey with responses is never deleted.
    """
    with write_transaction(db):
        _require_unanswered_draft(db, survey)
        delete_questions_and_design(db, survey.id)
        db.execute("DELETE FROM invitations WHERE survey_id = ?", [survey.id])
        db.execute("DELETE FROM survey_viewers WHERE survey_id = ?", [survey.id])
        db.execute("DELETE FROM surveys WHERE id = ?", [survey.id])


def survey_source(db: Database, survey: Survey) -> str:
    """The survey's definition as YAML: the text it was stored from, comments and all,
    when that text reads as YAML; else YAML generated from the stored survey (surveys
    stored before sources were kept, or from JSON that YAML reads otherwise), which
    imports back to the same survey."""
    row = db.execute("SELECT source FROM surveys WHERE id = ?", [survey.id]).fetchone()
    if row is not None and row[0]:
        try:
            parse_definition(row[0], fmt="yaml")
        except SurveyDefinitionError:
            pass
        else:
            return str(row[0])
    return definition_yaml(survey_definition(survey))


def _parameters(definition: SurveyDefinition) -> dict[str, dict[str, Any]]:
    """Each question's mechanism parameters by key: the design the survey will run."""
    return {q.key: question_mechanism(q).parameters() for q in definition.questions}


def _stored(db: Database, slug: str) -> Survey:
    survey = get_survey(db, slug)
    assert survey is not None
    return survey


def _refuse_taken_slug(db: Database, slug: str, survey_id: int = 0) -> None:
    """Inside the writing transaction, so two imports cannot both take one slug."""
    if db.execute("SELECT 1 FROM surveys WHERE slug = ? AND id != ?", [slug, survey_id]).fetchone():
        raise SurveyExistsError(f"a survey with slug {slug!r} already exists")


def _require_unanswered_draft(db: Database, survey: Survey) -> None:
    """Checked inside the writing transaction: a response or an opening that came in since
    ``survey`` was read wins over the edit."""
    row = db.execute(
        "SELECT status, EXISTS (SELECT 1 FROM responses WHERE survey_id = s.id) "
        "FROM surveys s WHERE id = ?",
        [survey.id],
    ).fetchone()
    if row is None:
        raise SurveyNotDraftError(f"survey {survey.slug!r} no longer exists")
    if row[0] != "draft":
        raise SurveyNotDraftError(f"survey {survey.slug!r} is {row[0]}, not a draft")
    if row[1]:
        raise SurveyNotDraftError(f"survey {survey.slug!r} already has responses")


def _survey_row(
    definition: SurveyDefinition, parameters: dict[str, dict[str, Any]]
) -> dict[str, object]:
    """The survey's columns that its definition decides."""
    return {
        "slug": definition.slug,
        "title": definition.title,
        "description": definition.description,
        "access": definition.access,
        "consent": definition.consent,
        "contact": definition.contact,
        "thank_you": definition.thank_you,
        "completion": _completion_json(definition.completion),
        "max_epsilon": written_decimal(definition.max_epsilon),
        "design": survey_fingerprint(parameters),
        "languages": json.dumps(definition.languages),
        "translations": json.dumps(
            {code: dataclasses.asdict(texts) for code, texts in definition.translations.items()},
            ensure_ascii=False,
        ),
        "source": definition.source or None,
        "question_order": definition.question_order,
        "sections": _sections_json(definition.sections),
    }


def _insert_design_and_questions(
    db: Database,
    survey_id: int,
    definition: SurveyDefinition,
    parameters: dict[str, dict[str, Any]],
) -> None:
    insert_rows(
        db,
        "designs",
        [
            {
                "fingerprint": survey_fingerprint(parameters),
                "survey_id": survey_id,
                "questions": json.dumps(parameters, sort_keys=True),
            }
        ],
        or_ignore=True,
    )
    insert_rows(
        db,
        "questions",
        (
            {
                "survey_id": survey_id,
                "position": position,
                "key": question.key,
                "text": question.text,
                "type": question.type.value,
                "sensitive": int(question.sensitive),
                "required": int(question.required),
                "options": _options_json(question),
                "min": question.min,
                "max": question.max,
                "requested_epsilon": written_decimal(question.epsilon),
                "show_if": None
                if question.show_if is None
                else json.dumps(question.show_if.written()),
                "option_order": question.option_order,
                "fixed_options": json.dumps(question.fixed_options),
                "parameters": json.dumps(parameters[question.key], sort_keys=True),
                "translations": json.dumps(
                    {
                        code: {"text": texts.text, "options": list(texts.options)}
                        for code, texts in question.translations.items()
                    },
                    ensure_ascii=False,
                ),
            }
            for position, question in enumerate(definition.questions)
        ),
    )


def _options_json(question: QuestionDefinition) -> str | None:
    """The ``options`` column: a JSON list of a choice's option texts; for a scale, its
    texts and scores together, ``{"options": [...], "scores": [...]}``, so the scores are
    as fixed as the options (the trigger ``question_mechanism_fixed``) and no column is
    added."""
    if not question.type.has_options:
        return None
    if question.type.has_scores:
        return json.dumps({"options": question.options, "scores": question.scores})
    return json.dumps(question.options)


def _options_and_scores(stored: str | None) -> dict[str, tuple[Any, ...]]:
    """``Question``'s options and scores from the ``options`` column."""
    value = json.loads(stored) if stored else []
    if isinstance(value, dict):
        return {"options": tuple(value["options"]), "scores": tuple(value["scores"])}
    return {"options": tuple(value)}


def delete_questions_and_design(db: Database, survey_id: int) -> None:
    """Remove a survey's questions, their tallies and its design; call inside a write
    transaction. A design row is shared by every survey with the same fingerprint and
    names the first that stored it; one another survey still runs is handed over to that
    survey instead of deleted."""
    db.execute(
        "DELETE FROM tallies WHERE question_id IN (SELECT id FROM questions WHERE survey_id = ?)",
        [survey_id],
    )
    db.execute("DELETE FROM questions WHERE survey_id = ?", [survey_id])
    db.execute(
        "UPDATE designs SET survey_id = (SELECT min(s.id) FROM surveys s "
        "WHERE s.design = designs.fingerprint AND s.id != :survey) "
        "WHERE survey_id = :survey AND EXISTS (SELECT 1 FROM surveys s "
        "WHERE s.design = designs.fingerprint AND s.id != :survey)",
        {"survey": survey_id},
    )
    db.execute("DELETE FROM designs WHERE survey_id = ?", [survey_id])


def written_decimal(value: Fraction | None) -> str | None:
    """A number from the survey file (an ε in thousandths), kept as the decimal it was
    written as; None where the file gives none."""
    return None if value is None else decimal_text(value)


def survey_definition(survey: Survey) -> SurveyDefinition:
    """The definition that stores as this survey: the same words in every language, the
    same ε as written, and each mechanism named as stored (what ``auto`` chose), so the
    re-imported survey has the same design."""
    survey = survey.localized(survey.languages[0])
    return SurveyDefinition(
        slug=survey.slug,
        title=survey.title,
        description=survey.description,
        questions=tuple(
            QuestionDefinition(
                key=q.key,
                text=q.text,
                type=q.type,
                epsilon=Fraction(q.requested_epsilon) if q.requested_epsilon else None,
                mechanism=file_mechanism_name(q.mechanism),
                options=q.options,
                scores=q.scores,
                min=q.min,
                max=q.max,
                sensitive=q.sensitive,
                required=q.required,
                show_if=q.show_if,
                option_order=q.option_order,
                fixed_options=q.fixed_options,
                translations=q.translations,
            )
            for q in survey.questions
        ),
        access=survey.access,
        max_epsilon=Fraction(survey.max_epsilon) if survey.max_epsilon else None,
        consent=survey.consent,
        contact=survey.contact,
        thank_you=survey.thank_you,
        completion=survey.completion,
        languages=survey.languages,
        translations=survey.translations,
        question_order=survey.question_order,
        sections=survey.sections,
    )


_SURVEY_COLUMNS = (
    "id, slug, title, description, status, access, owner_id, consent, contact, max_epsilon, "
    "design, languages, translations, listed, retain_until, keep_public_figures, destroyed_on, "
    "thank_you, completion, question_order, sections"
)
_QUESTION_COLUMNS = (
    "id, key, text, type, sensitive, required, options, min, max, requested_epsilon, parameters, "
    "translations, option_order, fixed_options, show_if, joint_tallies_complete"
)


def get_survey(db: Database, slug: str) -> Survey | None:
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
            type=QuestionType(q["type"]),
            mechanism=mechanism_from_parameters(json.loads(q["parameters"])),
            sensitive=bool(q["sensitive"]),
            required=bool(q["required"]),
            **_options_and_scores(q["options"]),
            min=q["min"],
            max=q["max"],
            requested_epsilon=q["requested_epsilon"],
            show_if=ShowIf.from_written(json.loads(q["show_if"])) if q["show_if"] else None,
            option_order=q["option_order"],
            fixed_options=tuple(json.loads(q["fixed_options"])),
            translations={
                code: QuestionTexts(texts["text"], tuple(texts["options"]))
                for code, texts in json.loads(q["translations"]).items()
            },
            joint_tallies_complete=bool(q["joint_tallies_complete"]),
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
        languages=tuple(json.loads(row[11])),
        translations={code: SurveyTexts(**texts) for code, texts in json.loads(row[12]).items()},
        listed=bool(row[13]),
        retain_until=_date_or_none(row[14]),
        keep_public_figures=bool(row[15]),
        destroyed_on=_date_or_none(row[16]),
        thank_you=row[17],
        completion=_completion_or_none(row[18]),
        question_order=row[19],
        sections=_sections_from_json(row[20]),
    )


def _completion_json(completion: Completion | None) -> str | None:
    """``{"code": ...}`` or ``{"redirect": ...}``, as the survey file writes it."""
    return None if completion is None else json.dumps({completion.kind: completion.value})


def _completion_or_none(stored: str | None) -> Completion | None:
    if stored is None:
        return None
    ((kind, value),) = json.loads(stored).items()
    return Completion(kind, value)


def _date_or_none(text: str | None) -> datetime.date | None:
    return None if text is None else datetime.date.fromisoformat(text)


# Who may see a survey's results: its owner and researchers it is shared with. A survey
# nobody owns (imported before any account existed, until the first account adopts it)
# is visible to administrators only.
_VISIBLE_TO = (
    "(s.owner_id = :researcher OR EXISTS (SELECT 1 FROM survey_viewers v "
    "WHERE v.survey_id = s.id AND v.researcher_id = :researcher) OR (s.owner_id IS NULL "
    "AND EXISTS (SELECT 1 FROM researchers a WHERE a.id = :researcher AND a.role = 'admin')))"
)
_SUMMARY = "SELECT s.slug, s.title, s.status, s.access, s.responses FROM surveys s"


_ANSWERABLE = "s.status = 'open' AND s.access = 'open'"
# Titles in byte order on both backends ("Zeta" before "alpha"), as SQLite compares them;
# PostgreSQL would otherwise follow its database's locale (postgresql_dialect).
_BY_TITLE = "ORDER BY s.title COLLATE BINARY"


def list_public_surveys(db: Database) -> list[dict[str, object]]:
    """The front page's surveys: open, not by invitation only, and listed by their owner."""
    return list(db.query(f"{_SUMMARY} WHERE {_ANSWERABLE} AND s.listed = 1 {_BY_TITLE}"))


def answerable_slugs(db: Database) -> list[str]:
    """Every survey anyone with its address may answer, listed on the front page or not."""
    sql = f"SELECT s.slug FROM surveys s WHERE {_ANSWERABLE}"  # noqa: S608 (constants)
    return [row[0] for row in db.execute(sql)]


def list_visible_surveys(db: Database, researcher_id: int) -> list[dict[str, object]]:
    """The surveys whose results this researcher may see, with response counts."""
    return list(
        db.query(
            f"{_SUMMARY} WHERE {_VISIBLE_TO} {_BY_TITLE}",
            {"researcher": researcher_id},
        )
    )


def can_see(db: Database, survey: Survey, researcher_id: int) -> bool:
    row = db.execute(
        f"SELECT 1 FROM surveys s WHERE s.id = :survey AND {_VISIBLE_TO}",  # noqa: S608
        {"survey": survey.id, "researcher": researcher_id},
    ).fetchone()
    return row is not None


def set_status(db: Database, survey: Survey, status: str) -> None:
    """Open, close (or return to draft) a survey. Raises ``SurveyDestroyedError`` when one
    whose answers were destroyed would leave ``closed`` (checked under the write lock)."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    with write_transaction(db):
        cursor = db.execute(
            "UPDATE surveys SET status = :status WHERE id = :survey "
            "AND (destroyed_on IS NULL OR :status = 'closed')",
            {"status": status, "survey": survey.id},
        )
        if cursor.rowcount == 0:
            raise SurveyDestroyedError(f"the answers of {survey.slug!r} were destroyed")


def share_survey(db: Database, survey: Survey, researcher_id: int) -> None:
    """Let another researcher view a survey's results (idempotent)."""
    with write_transaction(db):
        db.execute(
            "INSERT OR IGNORE INTO survey_viewers (survey_id, researcher_id) VALUES (?, ?)",
            [survey.id, researcher_id],
        )


def unshare_survey(db: Database, survey: Survey, researcher_id: int) -> None:
    """Stop letting a researcher view a survey's results (idempotent)."""
    with write_transaction(db):
        db.execute(
            "DELETE FROM survey_viewers WHERE survey_id = ? AND researcher_id = ?",
            [survey.id, researcher_id],
        )


def survey_response_count(db: Database, survey: Survey) -> int:
    row = db.execute("SELECT responses FROM surveys WHERE id = ?", [survey.id]).fetchone()
    return int(row[0])


def count_surveys(db: Database) -> int:
    return int(db.execute("SELECT count(*) FROM surveys").fetchone()[0])


def adopt_ownerless_surveys(db: Database, owner_id: int) -> int:
    """Give every survey nobody owns to this researcher (the first account): surveys
    stored before any account existed, such as the example. Call inside the write
    transaction that creates the account. Returns how many were adopted."""
    cursor = db.execute("UPDATE surveys SET owner_id = ? WHERE owner_id IS NULL", [owner_id])
    return int(cursor.rowcount)
