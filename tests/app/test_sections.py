"""Sections in the survey file: what parses, what is refused (file, line, field), and the
round trip through storage and back out as YAML."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.domain.survey_limits import MAX_QUESTIONS, MAX_SECTIONS
from survey_app.domain.survey_model import SectionDefinition, SectionTexts, SurveyDefinitionError
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.storage.backends import Database
from survey_app.storage.surveys import get_survey, store_survey, survey_definition, survey_source
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "sections.yaml"

# Line numbers below refer to this text.
SECTIONED = """\
slug: sleep
title: Sleep
sections:
  - title: About you
    description: Not randomized.
    questions:
      - {key: year, text: Which year, type: choice, options: ["1", "2"], sensitive: false}
  - title: Nights
    questions:
      - {key: awake, text: Awake all night}
      - {key: naps, text: Naps, required: false}
"""

TWO_LANGUAGES = """\
slug: sleep
languages: [en, ko]
title: {en: Sleep, ko: 수면}
sections:
  - title: {en: First, ko: 첫째}
    questions:
      - {key: awake, text: {en: Awake, ko: 깨어}}
  - title: {en: Second, ko: 둘째}
    description: {en: The last, ko: 마지막}
    questions:
      - {key: naps, text: {en: Naps, ko: 낮잠}}
"""


@pytest.fixture
def db(new_database: Callable[[], Database]) -> Database:
    return new_database()


def raised(text: str) -> SurveyDefinitionError:
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition(text, "sleep.yaml")
    return caught.value


def test_sections_keep_one_flat_list_of_questions_and_say_where_each_starts() -> None:
    survey = parse_definition(SECTIONED)
    assert [q.key for q in survey.questions] == ["year", "awake", "naps"]
    assert survey.sections == (
        SectionDefinition(0, "About you", "Not randomized."),
        SectionDefinition(1, "Nights"),
    )


def test_a_survey_without_sections_has_none() -> None:
    one_page = "slug: s\ntitle: T\nquestions:\n  - {key: a, text: A}\n"
    assert parse_definition(one_page).sections == ()


def test_section_texts_are_translatable() -> None:
    survey = parse_definition(TWO_LANGUAGES)
    first, second = survey.sections
    assert (first.title, first.translations) == ("First", {"ko": SectionTexts("첫째", "")})
    assert second.texts("ko") == SectionTexts("둘째", "마지막")
    assert second.start == 1


@pytest.mark.parametrize(
    "old, new, field, line, message",
    [
        (
            "sections:",
            "questions: [{key: q, text: Q}]\nsections:",
            "sections",
            4,
            "under questions (one page) or under sections (a page each), not both",
        ),
        ("  - title: Nights\n", "  - description: Nights\n", "sections[1].title", 8, "required"),
        (
            "      - {key: naps,",
            "      - {key: year,",
            "sections[1].questions[1].key",
            11,
            "duplicate question key 'year' (already used by sections[0].questions[0].key)",
        ),
        (
            "      - {key: awake, text: Awake all night}\n      - {key: naps, text: Naps, "
            "required: false}\n",
            "      []\n",
            "sections[1].questions",
            9,
            "must list at least one question",
        ),
        (
            "  - title: Nights\n",
            "  - title: Nights\n    colour: blue\n",
            "sections[1].colour",
            9,
            "unknown key 'colour' (allowed: title, description, question_order, questions)",
        ),
        (
            "{key: awake, text: Awake all night}",
            "{key: awake, text: Awake, type: maybe}",
            "sections[1].questions[0].type",
            10,
            "must be one of",
        ),
        (
            "    description: Not randomized.\n",
            "    description: [1]\n",
            "sections[0].description",
            5,
            "must be a string",
        ),
        ("  - title: About you\n", "  - title: ''\n", "sections[0].title", 4, "must not be empty"),
    ],
    ids=[
        "both",
        "no-title",
        "duplicate-key",
        "no-questions",
        "unknown-key",
        "question-rule",
        "description-type",
        "empty-title",
    ],
)
def test_bad_sections_name_file_line_and_field(
    old: str, new: str, field: str, line: int, message: str
) -> None:
    assert old in SECTIONED
    err = raised(SECTIONED.replace(old, new, 1))
    assert (err.field, err.line, err.source) == (field, line, "sleep.yaml"), str(err)
    assert message in err.message


def test_sections_must_be_a_list_of_one_to_max_sections() -> None:
    assert raised("slug: s\ntitle: T\nsections: {}\n").field == "sections"
    assert "at least one section" in raised("slug: s\ntitle: T\nsections: []\n").message
    many = "".join(
        f"  - {{title: S{i}, questions: [{{key: q{i}, text: Q}}]}}\n"
        for i in range(MAX_SECTIONS + 1)
    )
    err = raised(f"slug: s\ntitle: T\nsections:\n{many}")
    assert (err.field, err.line) == ("sections", 3)
    assert f"at most {MAX_SECTIONS} sections" in err.message


def test_the_question_limit_counts_every_section() -> None:
    half = MAX_QUESTIONS // 2 + 1
    sections = "".join(
        f"  - title: S{s}\n    questions:\n"
        + "".join(f"      - {{key: q{s}_{i}, text: Q}}\n" for i in range(half))
        for s in range(2)
    )
    err = raised(f"slug: s\ntitle: T\nsections:\n{sections}")
    assert err.field == "sections"
    assert f"at most {MAX_QUESTIONS} questions together (got {2 * half})" in err.message


def test_a_section_text_must_be_given_in_every_language() -> None:
    err = raised(TWO_LANGUAGES.replace("{en: Second, ko: 둘째}", "{en: Second}"))
    assert (err.field, err.line) == ("sections[1].title.ko", 8)


def test_max_epsilon_counts_the_questions_of_every_section() -> None:
    text = SECTIONED.replace("title: Sleep\n", "title: Sleep\nmax_epsilon: 2\n")
    err = raised(text)  # two yes/no questions at ln 3 each: 2.198 > 2
    assert err.field == "max_epsilon"
    assert parse_definition(text.replace("max_epsilon: 2", "max_epsilon: 2.2")).sections


def test_the_example_has_three_sections_and_a_plain_covariate_first() -> None:
    survey = load_definition(EXAMPLE)
    assert len(survey.sections) == 3
    first = survey.questions[: survey.sections[1].start]
    assert [q.sensitive for q in first] == [False]


@pytest.mark.parametrize("text", [SECTIONED, TWO_LANGUAGES, EXAMPLE.read_text("utf-8")])
def test_sections_round_trip_through_storage_and_the_generated_yaml(
    db: Database, new_database: Callable[[], Database], text: str
) -> None:
    """import → export (the YAML generated from the stored survey) → import: equal."""
    stored = store_survey(db, parse_definition(text))
    assert stored.sections == parse_definition(text).sections
    db.execute("UPDATE surveys SET source = NULL")
    generated = survey_source(db, stored)
    assert "sections:" in generated and "\nquestions:" not in generated
    other = new_database()
    again = store_survey(other, parse_definition(generated))
    assert again == stored
    assert survey_definition(again).sections == stored.sections
    assert parse_definition(definition_yaml(survey_definition(again))) == survey_definition(again)


def test_a_stored_survey_gives_each_section_its_questions_in_every_language(
    db: Database,
) -> None:
    stored = store_survey(db, parse_definition(TWO_LANGUAGES))
    survey = get_survey(db, "sleep")
    assert survey is not None and survey == stored
    korean = survey.localized("ko")
    assert [s.title for s in korean.sections] == ["첫째", "둘째"]
    assert korean.sections[1].description == "마지막"
    assert [q.text for q in korean.section_questions(1)] == ["낮잠"]
    assert korean.localized("en").sections == survey.sections


def test_a_survey_of_one_page_stores_no_sections(db: Database) -> None:
    store_survey(db, parse_definition("slug: s\ntitle: T\nquestions:\n  - {key: a, text: A}\n"))
    assert db.execute("SELECT sections FROM surveys WHERE slug = 's'").fetchone() == ("[]",)
