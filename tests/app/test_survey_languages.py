"""Surveys in several languages: checked at import, stored, shown per language, given back
as YAML; drafts replaced or deleted only while nobody has answered them."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.domain.survey_model import QuestionTexts, SurveyDefinitionError, SurveyTexts
from survey_app.storage.backends import Database
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import (
    Survey,
    SurveyExistsError,
    SurveyNotDraftError,
    delete_draft,
    get_survey,
    replace_draft,
    set_status,
    store_survey,
    survey_source,
)
from tests.support.paths import ROOT
from tests.support.stored import INTEGRITY_ERRORS, broken_references

MULTILINGUAL = ROOT / "examples" / "multilingual-survey.yaml"
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

TWO_LANGUAGES = """\
slug: sleep
languages: [en, ko]
title: {en: Sleep, ko: 수면}
questions:
  - key: often
    text: {en: 'How often?', ko: '얼마나 자주?'}
    type: choice
    options:
      - {en: Never, ko: 전혀}
      - {en: Daily, ko: 매일}
  - key: hours
    text: {en: 'How many hours?', ko: '몇 시간?'}
    type: number
    min: 0
    max: 12
"""


@pytest.fixture
def db(new_database: Callable[[], Database]) -> Database:
    return new_database()


def raised(text: str, fmt: str = "yaml") -> SurveyDefinitionError:
    with pytest.raises(SurveyDefinitionError) as info:
        parse_definition(text, f"survey.{fmt}", fmt)
    return info.value


def two_languages_with(old: str, new: str) -> str:
    assert old in TWO_LANGUAGES
    return TWO_LANGUAGES.replace(old, new, 1)


# Import: every text in every declared language.


def test_the_multilingual_example_keeps_the_main_language_in_the_plain_fields() -> None:
    definition = load_definition(MULTILINGUAL)
    assert definition.languages == ("en", "ko", "zh")
    assert definition.title == "Campus wellbeing survey"
    assert definition.translations["ko"].title == "캠퍼스 생활 및 건강 설문조사"
    assert set(definition.translations) == {"ko", "zh"}
    sleep = next(q for q in definition.questions if q.key == "sleep")
    assert sleep.options[3] == "Almost every day"
    assert sleep.translations["zh"].options == ("从不", "一两次", "每周", "几乎每天")
    assert sleep.texts("ko").text == "지난 한 달 동안 얼마나 자주 5시간 미만으로 잤습니까?"
    for code in definition.languages:
        texts = definition.texts(code)
        assert texts.title and texts.description and texts.consent and texts.contact
        # A folded line break in Chinese must not have become a space.
        assert " " not in definition.texts("zh").description


def test_a_one_language_survey_may_give_its_texts_plainly_or_by_language() -> None:
    plain = parse_definition("slug: s\ntitle: Hi\nquestions: [{key: q, text: 'Q?'}]\n")
    mapped = parse_definition("slug: s\ntitle: {en: Hi}\nquestions: [{key: q, text: {en: 'Q?'}}]\n")
    assert plain == mapped
    assert plain.languages == ("en",) and plain.translations == {}
    korean = parse_definition(
        "slug: s\nlanguages: [ko]\ntitle: 안녕\nquestions: [{key: q, text: {ko: '질문?'}}]\n"
    )
    assert (korean.languages, korean.title, korean.questions[0].text) == (
        ("ko",),
        "안녕",
        "질문?",
    )


@pytest.mark.parametrize(
    ("old", "new", "field", "line", "message"),
    [
        (
            "      - {en: Daily, ko: 매일}",
            "      - {en: Daily}",
            "questions[0].options[1].ko",
            10,
            "the text in ko is missing",
        ),
        (
            "ko: '몇 시간?'}",
            "ko: '몇 시간?', zh: 几个小时？}",
            "questions[1].text.zh",
            12,
            "'zh' is not one of the survey's languages (en, ko)",
        ),
        ("title: {en: Sleep, ko: 수면}", "title: Sleep", "title", 3, "as {en: ..., ko: ...}"),
        ("title: {en: Sleep, ko: 수면}", "title: {en: Sleep, ko: ' '}", "title.ko", 3, "empty"),
        (
            "title: {en: Sleep, ko: 수면}",
            "title: {en: Sleep, ko: " + "잠" * 201 + "}",
            "title.ko",
            3,
            "at most 200 characters (got 201)",
        ),
        (
            "      - {en: Daily, ko: 매일}",
            "      - {en: Daily, ko: 전혀}",
            "questions[0].options[1].ko",
            10,
            "duplicate option '전혀' (already questions[0].options[0].ko)",
        ),
        (
            "questions:",
            "description: {en: About sleep, ko: ''}\nquestions:",
            "description.ko",
            4,
            "must not be empty when the text is given in en",
        ),
        ("languages: [en, ko]", "languages: [en, fr]", "languages[1]", 2, "one of: en, ko, zh"),
        ("languages: [en, ko]", "languages: [ko, ko]", "languages[1]", 2, "listed twice"),
        ("languages: [en, ko]", "languages: []", "languages", 2, "a list of language codes"),
        ("languages: [en, ko]", "languages: en", "languages", 2, "a list of language codes"),
        (
            "      - {en: Never, ko: 전혀}",
            "      - 1",
            "questions[0].options[0]",
            9,
            "as {en: ..., ko: ...} (got a number)",
        ),
    ],
    ids=[
        "option-missing-language",
        "text-extra-language",
        "plain-title",
        "blank-in-one-language",
        "too-long-in-one-language",
        "duplicate-option-in-one-language",
        "optional-text-empty-in-one-language",
        "unknown-language",
        "language-twice",
        "no-languages",
        "languages-not-a-list",
        "plain-option",
    ],
)
def test_a_text_not_given_in_exactly_the_declared_languages_is_refused_where_it_is(
    old: str, new: str, field: str, line: int, message: str
) -> None:
    err = raised(two_languages_with(old, new))
    assert (err.field, err.line) == (field, line)
    assert message in err.message


def test_json_definitions_are_checked_alike() -> None:
    data = {
        "slug": "sleep",
        "languages": ["en", "zh"],
        "title": {"en": "Sleep", "zh": "睡眠"},
        "questions": [{"key": "q", "text": {"en": "Slept well?"}}],
    }
    err = raised(json.dumps(data, indent=2, ensure_ascii=False), "json")
    assert (err.field, err.line, err.message) == (
        "questions[0].text.zh",
        14,
        "the text in zh is missing (the survey's languages are en, zh)",
    )


def test_options_may_repeat_across_languages_but_not_within_one() -> None:
    text = two_languages_with("{en: Never, ko: 전혀}", "{en: OK, ko: OK}")
    assert parse_definition(text).questions[0].translations["ko"].options == ("OK", "매일")


# Storage and the localized survey.


def test_a_stored_survey_keeps_every_language_and_shows_each(db: Database) -> None:
    stored = store_survey(db, load_definition(MULTILINGUAL))
    assert stored.languages == ("en", "ko", "zh")
    assert get_survey(db, stored.slug) == stored
    korean = stored.localized("ko")
    assert korean.title == "캠퍼스 생활 및 건강 설문조사"
    assert korean.contact == "학생 복지 연구팀, wellbeing-study@example.edu"
    sleep = next(q for q in korean.questions if q.key == "sleep")
    assert sleep.text == "지난 한 달 동안 얼마나 자주 5시간 미만으로 잤습니까?"
    assert sleep.options == ("전혀 없음", "한두 번", "매주", "거의 매일")
    # Only words change: what is sent, randomized and stored is the same in every language.
    assert korean.design == stored.design
    assert [(q.id, q.key, q.mechanism, len(q.options)) for q in korean.questions] == [
        (q.id, q.key, q.mechanism, len(q.options)) for q in stored.questions
    ]
    assert korean.parameters_by_key() == stored.parameters_by_key()


def test_localizing_again_reaches_every_language_and_falls_back_to_the_main_one(
    db: Database,
) -> None:
    stored = store_survey(db, load_definition(MULTILINGUAL))
    assert stored.localized("en") is stored
    assert stored.localized("fr") is stored
    chinese = stored.localized("ko").localized("zh")
    assert chinese.title == "校园身心健康调查"
    assert chinese.questions[0].options[0] == "一年级"
    assert chinese.localized("fr") == stored
    assert stored.localized("ko").localized("en") == stored
    assert stored.localized("zh").localized("zh") == stored.localized("zh")


def test_a_one_language_survey_is_itself_in_every_language(db: Database) -> None:
    stored = store_survey(db, load_definition(ROOT / "examples" / "mixed-survey.yaml"))
    assert (stored.languages, stored.translations) == (("en",), {})
    assert stored.localized("ko") is stored


# The definition as text.


def test_survey_source_gives_back_the_file_as_written(db: Database) -> None:
    text = MULTILINGUAL.read_text(encoding="utf-8")
    stored = store_survey(db, parse_definition(text, "multilingual-survey.yaml"))
    assert survey_source(db, stored) == text


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_a_survey_without_its_file_is_given_back_as_yaml_that_imports_the_same(
    db: Database, new_database: Callable[[], Database], example: Path
) -> None:
    stored = store_survey(db, load_definition(example))
    db.execute("UPDATE surveys SET source = NULL")
    generated = survey_source(db, stored)
    assert generated != example.read_text(encoding="utf-8")
    other = new_database()
    again = store_survey(other, parse_definition(generated, "generated.yaml"))
    assert again == stored


def test_a_survey_from_json_that_yaml_cannot_read_comes_back_as_generated_yaml(
    db: Database,
) -> None:
    data = {"slug": "tabbed", "title": "Tabbed", "questions": [{"key": "q", "text": "Q?"}]}
    tabbed = json.dumps(data, indent="\t")
    stored = store_survey(db, parse_definition(tabbed, "tabbed.json"))
    source = survey_source(db, stored)
    assert "\t" not in source
    assert parse_definition(source) == parse_definition(tabbed, fmt="json")


def test_the_generated_yaml_names_the_mechanism_auto_chose(db: Database) -> None:
    stored = store_survey(db, parse_definition(TWO_LANGUAGES))
    db.execute("UPDATE surveys SET source = NULL")
    generated = parse_definition(survey_source(db, stored))
    assert [q.mechanism for q in generated.questions] == ["grr", "piecewise"]
    assert generated.translations == {"ko": SurveyTexts("수면")}
    assert generated.questions[0].translations == {
        "ko": QuestionTexts("얼마나 자주?", ("전혀", "매일"))
    }


# Drafts: replaced or deleted, all or nothing, only while nobody has answered.


def draft(db: Database, text: str = TWO_LANGUAGES) -> Survey:
    return store_survey(db, parse_definition(text), status="draft")


def test_a_draft_is_replaced_in_place_with_a_new_slug(db: Database) -> None:
    first = draft(db)
    db.execute(
        "INSERT INTO researchers (id, username, password_hash, created_on) "
        "VALUES (1, 'ada', 'x', '2026-01-01')"
    )
    db.execute("INSERT INTO survey_viewers (survey_id, researcher_id) VALUES (?, 1)", [first.id])
    text = two_languages_with("slug: sleep", "slug: rest").replace("max: 12", "max: 16")
    replaced = replace_draft(db, first, parse_definition(text))
    assert (replaced.id, replaced.slug, replaced.status) == (first.id, "rest", "draft")
    assert replaced.questions[1].max == 16
    assert replaced.design != first.design
    assert get_survey(db, "sleep") is None
    assert survey_source(db, replaced) == text
    assert db.execute("SELECT count(*) FROM survey_viewers").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM questions").fetchone()[0] == 2
    assert [row[0] for row in db.execute("SELECT fingerprint FROM designs")] == [replaced.design]
    assert broken_references(db) == []


def test_replacing_onto_a_taken_slug_changes_nothing(db: Database) -> None:
    store_survey(db, load_definition(MULTILINGUAL))
    first = draft(db)
    taken = parse_definition(two_languages_with("slug: sleep", "slug: campus-wellbeing"))
    with pytest.raises(SurveyExistsError):
        replace_draft(db, first, taken)
    assert get_survey(db, "sleep") == first
    assert survey_source(db, first) == TWO_LANGUAGES


def test_a_replacement_that_fails_half_way_leaves_the_draft_as_it_was(
    db: Database,
) -> None:
    """Two questions with one key pass no import; built by hand, the second insert fails
    after the old questions are gone, and the whole replacement is rolled back."""
    first = draft(db)
    definition = parse_definition(two_languages_with("slug: sleep", "slug: renamed"))
    clash = dataclasses.replace(definition, questions=definition.questions[:1] * 2)
    with pytest.raises(INTEGRITY_ERRORS):
        replace_draft(db, first, clash)
    assert get_survey(db, "renamed") is None
    assert get_survey(db, "sleep") == first
    assert survey_source(db, first) == TWO_LANGUAGES


def test_a_draft_that_shares_its_design_hands_it_over(db: Database) -> None:
    """Designs are stored once per fingerprint, under the first survey that stored them."""
    first = draft(db)
    twin = store_survey(db, parse_definition(two_languages_with("slug: sleep", "slug: twin")))
    assert twin.design == first.design
    record_response(db, twin, {"often": 1, "hours": True}, "submission-000000000001")
    delete_draft(db, first)
    assert db.execute("SELECT survey_id FROM designs").fetchall() == [(twin.id,)]
    assert broken_references(db) == []


@pytest.mark.parametrize("change", [replace_draft, delete_draft], ids=["replace", "delete"])
def test_an_open_or_answered_survey_is_no_draft_to_change(db: Database, change: object) -> None:
    def attempt(survey: Survey) -> None:
        if change is replace_draft:
            replace_draft(db, survey, parse_definition(TWO_LANGUAGES))
        else:
            delete_draft(db, survey)

    survey = draft(db)
    set_status(db, survey, "open")
    with pytest.raises(SurveyNotDraftError, match="is open, not a draft"):
        attempt(survey)
    record_response(db, survey, {"often": 0, "hours": None}, "submission-000000000002")
    set_status(db, survey, "draft")
    with pytest.raises(SurveyNotDraftError, match="already has responses"):
        attempt(survey)
    assert get_survey(db, "sleep") == dataclasses.replace(survey, status="draft")
    assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 1


def test_deleting_a_draft_leaves_nothing_of_it(db: Database) -> None:
    kept = store_survey(db, load_definition(MULTILINGUAL))
    survey = draft(db)
    db.execute("INSERT INTO invitations (token_hash, survey_id) VALUES ('h', ?)", [survey.id])
    delete_draft(db, survey)
    assert get_survey(db, "sleep") is None
    assert get_survey(db, kept.slug) == kept
    for table in ("questions", "designs", "invitations"):
        rows = db.execute(f"SELECT count(*) FROM {table} WHERE survey_id = ?", [survey.id])  # noqa: S608
        assert rows.fetchone()[0] == 0
    with pytest.raises(SurveyNotDraftError, match="no longer exists"):
        delete_draft(db, survey)
