"""Survey definition files: what parses, and that every bad file says where it went wrong."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from flask.testing import FlaskCliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from survey_app.domain import survey_validation
from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.domain.survey_limits import (
    DEFAULT_CHOICE_NUMBER_EPSILON,
    DEFAULT_YES_NO_EPSILON,
    EPSILON_MAX,
    EPSILON_MIN,
    MAX_EPSILON_MAX,
    MAX_NUMBER_MAGNITUDE,
    MAX_NUMBER_RANGE,
    MAX_OPTION_LENGTH,
    MAX_OPTIONS,
    MECHANISMS,
    MIN_OPTIONS,
    QUESTION_TYPES,
)
from survey_app.domain.survey_model import (
    QuestionDefinition,
    SurveyDefinition,
    SurveyDefinitionError,
)
from survey_app.privacy import QuestionType
from tests.support.examples import EXAMPLE

# Line numbers below refer to this text.
VALID_YAML = """\
slug: campus-health
title: Campus health survey
description: Optional text.
questions:
  - key: cheated
    text: Have you cheated?
    type: yes_no
  - key: drugs
    text: Have you used drugs?
"""

VALID_JSON = """\
{
  "slug": "campus-health",
  "title": "Campus health survey",
  "description": "Optional text.",
  "questions": [
    {"key": "cheated", "text": "Have you cheated?", "type": "yes_no"},
    {"key": "drugs", "text": "Have you used drugs?"}
  ]
}
"""

EXPECTED = SurveyDefinition(
    slug="campus-health",
    title="Campus health survey",
    description="Optional text.",
    questions=(
        QuestionDefinition(key="cheated", text="Have you cheated?", type=QuestionType.YES_NO),
        QuestionDefinition(key="drugs", text="Have you used drugs?", type=QuestionType.YES_NO),
    ),
)


def yaml_with(old: str, new: str) -> str:
    assert old in VALID_YAML
    return VALID_YAML.replace(old, new, 1)


def json_with(old: str, new: str) -> str:
    assert old in VALID_JSON
    return VALID_JSON.replace(old, new, 1)


def raised(text: str, source: str = "<string>", fmt: str | None = None) -> SurveyDefinitionError:
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition(text, source, fmt)
    return caught.value


def test_bundled_example_loads() -> None:
    survey = load_definition(EXAMPLE)
    assert survey.slug == "campus-health"
    assert [q.key for q in survey.questions] == ["cheated", "drugs", "skipped_meals"]
    assert all(q.type == "yes_no" for q in survey.questions)
    assert survey.description.startswith("A short anonymous survey")


def test_yaml_and_json_give_the_same_definition() -> None:
    assert parse_definition(VALID_YAML) == EXPECTED
    assert parse_definition(VALID_JSON, fmt="json") == EXPECTED


def test_json_equivalent_of_the_bundled_example_parses_the_same(tmp_path: Path) -> None:
    survey = load_definition(EXAMPLE)
    as_json = {
        "slug": survey.slug,
        "title": survey.title,
        "description": survey.description,
        "questions": [{"key": q.key, "text": q.text, "type": q.type} for q in survey.questions],
    }
    path = tmp_path / "campus-health.json"
    path.write_text(json.dumps(as_json, indent=2), encoding="utf-8")
    assert load_definition(path) == survey


@pytest.mark.parametrize(
    ("source", "fmt"),
    [("survey.json", None), ("SURVEY.JSON", None), ("survey.yaml", "json"), ("<string>", "json")],
)
def test_format_comes_from_fmt_or_else_the_suffix(source: str, fmt: str | None) -> None:
    assert parse_definition(VALID_JSON, source, fmt) == EXPECTED


def test_yaml_is_the_default_format() -> None:
    assert parse_definition(VALID_YAML, "survey.yml") == EXPECTED
    assert parse_definition(VALID_YAML, "survey.json", fmt="yaml") == EXPECTED


def test_unknown_fmt_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="fmt"):
        parse_definition(VALID_YAML, fmt="toml")


def test_optional_fields_default() -> None:
    survey = parse_definition("slug: s\ntitle: T\nquestions:\n  - key: q\n    text: Q?\n")
    assert survey.description == ""
    assert survey.questions == (QuestionDefinition(key="q", text="Q?", type=QuestionType.YES_NO),)


def test_surrounding_whitespace_is_dropped_from_texts() -> None:
    survey = parse_definition(
        'slug: s\ntitle: "  T  "\ndescription: |\n  Two\n  lines\n'
        'questions:\n  - {key: q, text: " Q? "}\n'
    )
    assert (survey.title, survey.description, survey.questions[0].text) == ("T", "Two\nlines", "Q?")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("slug: campus-health", "slug: " + "a" * 64),
        ("slug: campus-health", "slug: 2024-survey-v2"),
        ("title: Campus health survey", "title: " + "t" * 200),
        ("description: Optional text.", "description: " + "d" * 5000),
        ("description: Optional text.\n", ""),
        ("key: cheated", "key: " + "k" * 64),
        ("key: cheated", "key: q_1"),
        ("text: Have you cheated?", "text: " + "x" * 1000),
        ("text: Have you cheated?", 'text: "yes"'),
        ("    type: yes_no\n", ""),
    ],
)
def test_values_at_the_limits_are_accepted(old: str, new: str) -> None:
    parse_definition(yaml_with(old, new))


def test_one_hundred_questions_are_accepted_and_order_kept() -> None:
    questions = "".join(f"  - key: q{i}\n    text: Question {i}?\n" for i in range(100))
    survey = parse_definition(f"slug: s\ntitle: T\nquestions:\n{questions}")
    assert [q.key for q in survey.questions] == [f"q{i}" for i in range(100)]


TOO_MANY_QUESTIONS = "slug: s\ntitle: T\nquestions:\n" + "".join(
    f"  - key: q{i}\n    text: Question {i}?\n" for i in range(101)
)

BAD_YAML = [
    # id, text, field, line, part of the message
    ("slug-case", yaml_with("campus-health", "Campus Health"), "slug", 1, "lowercase"),
    ("slug-double-hyphen", yaml_with("campus-health", "campus--health"), "slug", 1, "hyphens"),
    ("slug-trailing-hyphen", yaml_with("campus-health", "campus-"), "slug", 1, "hyphens"),
    ("slug-space", yaml_with("campus-health", "'campus health'"), "slug", 1, "hyphens"),
    ("slug-empty", yaml_with("campus-health", "''"), "slug", 1, "must not be empty"),
    ("slug-too-long", yaml_with("campus-health", "a" * 65), "slug", 1, "at most 64"),
    ("slug-number", yaml_with("campus-health", "2024"), "slug", 1, "got a number"),
    ("slug-list", yaml_with("campus-health", "[a, b]"), "slug", 1, "got a list"),
    ("slug-null", yaml_with("campus-health", ""), "slug", 1, "got an empty value"),
    ("slug-missing", yaml_with("slug: campus-health\n", ""), "slug", None, "required"),
    ("title-blank", yaml_with("Campus health survey", "'   '"), "title", 2, "must not be empty"),
    ("title-boolean", yaml_with("Campus health survey", "yes"), "title", 2, "got a boolean"),
    ("title-date", yaml_with("Campus health survey", "2024-13-45"), "title", 2, "got a date"),
    ("title-too-long", yaml_with("Campus health survey", "t" * 201), "title", 2, "at most 200"),
    (
        "title-mapping",
        yaml_with("Campus health survey", "{a: b}"),
        "title.a",
        2,
        "'a' is not one of the survey's languages (en)",
    ),
    ("title-missing", yaml_with("title: Campus health survey\n", ""), "title", None, "required"),
    ("description-null", yaml_with("Optional text.", "~"), "description", 3, "empty value"),
    ("description-long", yaml_with("Optional text.", "d" * 5001), "description", 3, "at most 5000"),
    ("questions-empty", "slug: s\ntitle: T\nquestions: []\n", "questions", 3, "at least one"),
    ("questions-missing", "slug: s\ntitle: T\n", "questions", None, "required"),
    ("questions-string", "slug: s\ntitle: T\nquestions: none\n", "questions", 3, "got a string"),
    ("questions-mapping", "slug: s\ntitle: T\nquestions: {key: a}\n", "questions", 3, "a mapping"),
    ("questions-too-many", TOO_MANY_QUESTIONS, "questions", 3, "at most 100"),
    (
        "question-not-mapping",
        yaml_with("  - key: drugs\n", "  - drugs\n  - key: drugs\n"),
        "questions[1]",
        8,
        "must be a mapping",
    ),
    ("key-pattern", yaml_with("key: drugs", "key: Cheated!"), "questions[1].key", 8, "[a-z0-9_]+"),
    ("key-hyphen", yaml_with("key: cheated", "key: cheat-ed"), "questions[0].key", 5, "[a-z0-9_]+"),
    ("key-empty", yaml_with("key: cheated", "key: ''"), "questions[0].key", 5, "[a-z0-9_]+"),
    ("key-too-long", yaml_with("key: cheated", "key: " + "k" * 65), "questions[0].key", 5, "64"),
    ("key-number", yaml_with("key: cheated", "key: 12"), "questions[0].key", 5, "in quotes"),
    (
        "key-reserved",
        yaml_with("key: cheated", "key: csrf_token"),
        "questions[0].key",
        5,
        "reserved",
    ),
    (
        "key-duplicate",
        yaml_with("key: drugs", "key: cheated"),
        "questions[1].key",
        8,
        "duplicate question key 'cheated'",
    ),
    (
        "key-missing",
        yaml_with("  - key: drugs\n    text:", "  - text:"),
        "questions[1].key",
        8,
        "required",
    ),
    (
        "text-missing",
        yaml_with("    text: Have you used drugs?\n", ""),
        "questions[1].text",
        8,
        "required",
    ),
    ("text-empty", yaml_with("Have you cheated?", "''"), "questions[0].text", 6, "empty"),
    ("text-too-long", yaml_with("Have you cheated?", "x" * 1001), "questions[0].text", 6, "1000"),
    ("text-boolean", yaml_with("Have you cheated?", "no"), "questions[0].text", 6, "boolean"),
    (
        "type-unknown",
        yaml_with("type: yes_no", "type: likert"),
        "questions[0].type",
        7,
        "one of: yes_no",
    ),
    ("type-null", yaml_with("type: yes_no", "type:"), "questions[0].type", 7, "empty value"),
    (
        "question-unknown-key",
        yaml_with("    type: yes_no\n", "    type: yes_no\n    colour: red\n"),
        "questions[0].colour",
        8,
        "unknown key 'colour' (allowed: key, text, type, sensitive, required, show_if, epsilon, "
        "mechanism, options, scores, option_order, fixed_options, min, max)",
    ),
    (
        "top-unknown-key",
        VALID_YAML + "tittle: x\n",
        "tittle",
        10,
        "unknown key 'tittle' (allowed: slug, languages, title, description, access, consent, "
        "contact, max_epsilon, thank_you, completion, question_order, questions, sections)",
    ),
    ("top-duplicate-key", yaml_with("title:", "slug: other\ntitle:"), "slug", 2, "duplicate key"),
    (
        "question-duplicate-field",
        yaml_with("    type: yes_no\n", "    type: yes_no\n    text: b\n"),
        "questions[0].text",
        8,
        "first given on line 6",
    ),
    ("top-list", "- slug: a\n", "", None, "must be a mapping"),
    ("top-scalar", "just some words\n", "", None, "must be a mapping"),
    ("empty", "", "", None, "empty"),
    ("blank", "  \n\n", "", None, "empty"),
    ("comments-only", "# nothing here\n", "", None, "empty"),
    (
        "syntax",
        yaml_with("title: Campus health survey", 'title: "unterminated'),
        "",
        10,
        "while scanning a quoted scalar, which began on line 2",
    ),
    (
        "bad-indent",
        yaml_with("    text: Have you used drugs?", "   text: Have you used drugs?"),
        "",
        9,
        "not valid YAML",
    ),
    ("tab", yaml_with("  - key: drugs", "\t- key: drugs"), "", 8, "not valid YAML"),
    ("two-documents", VALID_YAML + "---\nslug: other\n", "", 10, "single document"),
    ("nul-character", yaml_with("Optional text.", "Optional\x00text."), "", 3, "U+0000"),
    (
        "alias",
        yaml_with("description: Optional text.", "description: &d x\nextra: *d"),
        "",
        4,
        "aliases",
    ),
    ("complex-key", "? [a, b]\n: c\n", "", 1, "plain names"),
    ("too-deep", "[" * 5000, "", None, "nested too deeply"),
]


@pytest.mark.parametrize(
    ("text", "field", "line", "message"),
    [case[1:] for case in BAD_YAML],
    ids=[case[0] for case in BAD_YAML],
)
def test_bad_yaml_names_field_and_line(
    text: str, field: str, line: int | None, message: str
) -> None:
    err = raised(text, "campus.yaml")
    assert (err.field, err.line, err.source) == (field, line, "campus.yaml")
    assert message in err.message


BAD_JSON = [
    ("slug-number", json_with('"campus-health"', "5"), "slug", 2, "got a number"),
    ("slug-exponent", json_with('"campus-health"', "1e5"), "slug", 2, "got a number"),
    ("slug-boolean", json_with('"campus-health"', "true"), "slug", 2, "got a boolean"),
    ("slug-null", json_with('"campus-health"', "null"), "slug", 2, "got null"),
    (
        "title-missing",
        json_with('  "title": "Campus health survey",\n', ""),
        "title",
        None,
        "required",
    ),
    (
        "questions-object",
        '{\n  "slug": "s",\n  "title": "T",\n  "questions": {}\n}',
        "questions",
        4,
        "got a mapping",
    ),
    ("key-pattern", json_with('"cheated"', '"Cheated!"'), "questions[0].key", 6, "[a-z0-9_]+"),
    ("key-duplicate", json_with('"drugs"', '"cheated"'), "questions[1].key", 7, "duplicate"),
    (
        "question-list",
        json_with('{"key": "drugs", "text": "Have you used drugs?"}', "[]"),
        "questions[1]",
        7,
        "must be a mapping",
    ),
    ("unknown-key", json_with('"slug"', '"colour": "red",\n  "slug"'), "colour", 2, "unknown key"),
    ("duplicate-key", json_with('"title"', '"slug": "x",\n  "title"'), "slug", 3, "duplicate key"),
    ("trailing-comma", json_with("}\n  ]", "},\n  ]"), "", 8, "not valid JSON"),
    ("top-list", "[]", "", None, "must be a mapping"),
    ("empty", "", "", None, "empty"),
    ("huge-integer", "1" * 5000, "", None, "not valid JSON"),
    ("too-deep", "[" * 100_000, "", None, "nested too deeply"),
]


@pytest.mark.parametrize(
    ("text", "field", "line", "message"),
    [case[1:] for case in BAD_JSON],
    ids=[case[0] for case in BAD_JSON],
)
def test_bad_json_names_field_and_line(
    text: str, field: str, line: int | None, message: str
) -> None:
    err = raised(text, "campus.json")
    assert (err.field, err.line, err.source) == (field, line, "campus.json")
    assert message in err.message


def test_json_that_pyyaml_cannot_read_still_validates_without_lines() -> None:
    tabbed = VALID_JSON.replace("  ", "\t")
    assert parse_definition(tabbed, fmt="json") == EXPECTED
    err = raised(tabbed.replace('"Have you cheated?"', '""'), fmt="json")
    assert (err.field, err.line) == ("questions[0].text", None)
    err = raised(tabbed.replace('"title"', '"slug": "x",\n\t"title"'), fmt="json")
    assert (err.field, err.message) == ("slug", "duplicate key")


@pytest.mark.parametrize(
    "key", ["csrf_token", "submission_id", "randomized", "invitation", "design", "agreed"]
)
def test_reserved_form_field_names_are_refused_as_question_keys(key: str) -> None:
    err = raised(yaml_with("key: drugs", f"key: {key}"))
    assert (err.field, err.line) == ("questions[1].key", 8)


def test_error_message_format() -> None:
    err = raised(yaml_with("key: drugs", "key: Cheated!"), "campus.yaml")
    assert str(err) == "campus.yaml:8: questions[1].key: must match [a-z0-9_]+ (got 'Cheated!')"
    assert isinstance(err, ValueError)
    missing = raised("slug: s\ntitle: T\n")
    assert str(missing) == "<string>: questions: is required but missing"
    empty = raised("", "x.yaml")
    assert str(empty) == "x.yaml: the definition is empty (it needs slug, title and questions)"


# Nine mistakes in one file, each at its own field; question 4's options are not judged,
# since its type is wrong.
SEVERAL_MISTAKES = """\
slug: Campus Health
title: ""
questions:
  - key: cheated
    text: Have you cheated?
    epsilon: 20
  - key: cheated
    text: ""
    type: choice
    options: [a]
  - key: drinks
    type: number
    text: Drinks?
    min: 5
    max: 1
    colour: red
  - key: mood
    type: feelings
    text: How do you feel?
    options: [good, bad]
"""


def test_every_mistake_in_a_file_is_reported_at_once_in_file_order() -> None:
    err = raised(SEVERAL_MISTAKES, "campus.yaml")
    assert [(p.line, p.field) for p in err.problems] == [
        (1, "slug"),
        (2, "title"),
        (6, "questions[0].epsilon"),
        (7, "questions[1].key"),
        (8, "questions[1].text"),
        (10, "questions[1].options"),
        (15, "questions[2].max"),
        (16, "questions[2].colour"),
        (18, "questions[3].type"),
    ]
    # The error reads as its first problem, and prints one line per problem.
    assert (err.field, err.line, err.source) == ("slug", 1, "campus.yaml")
    assert str(err).splitlines() == [problem.located() for problem in err.problems]
    assert str(err).splitlines()[3:5] == [
        "campus.yaml:7: questions[1].key: duplicate question key 'cheated' (already used by "
        "questions[0].key)",
        "campus.yaml:8: questions[1].text: must not be empty",
    ]


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        # The languages are wrong: no text is judged against them.
        (
            "description: Optional text.\n",
            "languages: [en, xx]\ndescription: {en: a, ko: b}\n",
            "languages[1]",
        ),
        # The type is wrong: no options, bounds or mechanism are asked of it.
        ("    type: yes_no\n", "    type: feelings\n    min: 1\n", "questions[0].type"),
        # A yes/no question cannot be plain; its ε is not then called a plain question's.
        ("    type: yes_no\n", "    sensitive: false\n    epsilon: 1\n", "questions[0].sensitive"),
        # Unreadable YAML stops at that.
        ("slug: campus-health\n", "slug: [campus-health\ntitle: ''\n", ""),
    ],
)
def test_a_mistake_is_not_reported_again_as_the_mistakes_it_causes(
    old: str, new: str, field: str
) -> None:
    err = raised(yaml_with(old, new))
    assert [problem.field for problem in err.problems] == [field]


def test_the_import_command_prints_every_problem_on_a_line_of_its_own(
    runner: FlaskCliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "campus.yaml"
    path.write_text(SEVERAL_MISTAKES, encoding="utf-8")
    result = runner.invoke(args=["import-survey", str(path)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"Error: {path}:1: slug: must be lowercase letters and digits in words " + (
        "joined by single hyphens, like campus-health (got 'Campus Health')"
    )
    assert [line.split(": ", 2)[1] for line in lines[1:]] == [
        "title",
        "questions[0].epsilon",
        "questions[1].key",
        "questions[1].text",
        "questions[1].options",
        "questions[2].max",
        "questions[2].colour",
        "questions[3].type",
    ]
    assert all(line.startswith(f"{path}:") for line in lines[1:])


def test_yaml_non_string_suggests_quoting() -> None:
    err = raised(yaml_with("Have you cheated?", "no"))
    assert (
        err.message == "must be a string (got a boolean; put no in quotes if you meant it as text)"
    )


def test_long_values_are_shortened_in_messages() -> None:
    err = raised(yaml_with("key: cheated", "key: " + "K" * 500))
    assert len(err.message) < 120


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(SurveyDefinitionError) as caught:
        load_definition(path)
    assert caught.value.source == str(path)
    assert "cannot read the file" in caught.value.message


def test_directory_is_not_a_definition(tmp_path: Path) -> None:
    with pytest.raises(SurveyDefinitionError, match="cannot read the file"):
        load_definition(tmp_path)


def test_non_utf8_file_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(VALID_YAML.replace("Optional text.", "Caf\u00e9").encode("latin-1"))
    with pytest.raises(SurveyDefinitionError) as caught:
        load_definition(path)
    assert (caught.value.line, caught.value.source) == (3, str(path))
    assert "UTF-8" in caught.value.message


@pytest.mark.parametrize(("name", "text"), [("s.yaml", VALID_YAML), ("s.json", VALID_JSON)])
def test_byte_order_mark_and_crlf_are_accepted(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert load_definition(path) == EXPECTED


def test_line_numbers_survive_crlf() -> None:
    err = raised(yaml_with("key: drugs", "key: Drugs").replace("\n", "\r\n"))
    assert (err.field, err.line) == ("questions[1].key", 8)


YAML_ISH = st.text(
    alphabet=st.sampled_from(list("ab-_:,[]{}&*!|>'\"#?%@`\t\n -~0.")) | st.characters()
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
)


@given(text=st.text() | YAML_ISH, fmt=st.sampled_from(["yaml", "json"]))
def test_arbitrary_text_only_ever_raises_survey_definition_error(text: str, fmt: str) -> None:
    try:
        parse_definition(text, fmt=fmt)
    except SurveyDefinitionError:
        pass


@pytest.mark.slow
# No per-example deadline: on a loaded two-core CI machine generating one structure can
# take longer than Hypothesis's 200 ms; what is checked is the exception type, not time.
@settings(deadline=None)
@given(
    data=st.fixed_dictionaries(
        {},
        optional={
            "slug": JSON_VALUES,
            "title": JSON_VALUES,
            "description": JSON_VALUES,
            "max_epsilon": JSON_VALUES,
            "questions": st.lists(
                st.dictionaries(
                    st.sampled_from(
                        [
                            "key",
                            "text",
                            "type",
                            "epsilon",
                            "mechanism",
                            "options",
                            "min",
                            "max",
                            "sensitive",
                            "required",
                        ]
                    ),
                    JSON_VALUES,
                )
            ),
        },
    )
    | JSON_VALUES,
    fmt=st.sampled_from(["yaml", "json"]),
)
def test_arbitrary_structures_only_ever_raise_survey_definition_error(
    data: object, fmt: str
) -> None:
    # JSON is close enough to YAML that both parsers get a real workout on the same text.
    try:
        parse_definition(json.dumps(data, indent=1), fmt=fmt)
    except SurveyDefinitionError:
        pass


@pytest.mark.parametrize(("value", "expected"), [("open", "open"), ("invitation", "invitation")])
def test_access_mode(value: str, expected: str) -> None:
    text = f"slug: s\ntitle: T\naccess: {value}\nquestions:\n  - key: q\n    text: Q?\n"
    assert parse_definition(text).access == expected


def test_access_defaults_to_open_and_refuses_others() -> None:
    assert parse_definition("slug: s\ntitle: T\nquestions:\n  - {key: q, text: 'Q?'}\n").access == (
        "open"
    )
    err = raised(
        "slug: s\ntitle: T\naccess: secret\nquestions:\n  - {key: q, text: 'Q?'}\n", "x.yaml"
    )
    assert (err.field, err.line) == ("access", 3)


# Question types, ε and the survey's privacy settings. Line numbers below refer to these
# texts; every bad case states the whole message, as the author would read it.

MIXED_EXAMPLE = EXAMPLE.parent / "mixed-survey.yaml"

MIXED_YAML = """\
slug: s
title: T
max_epsilon: 6
consent: Agree?
contact: me@example.org
questions:
  - key: cheated
    text: Cheated?
    epsilon: 0.5
  - key: substance
    text: Which?
    type: choice
    options: [none, cannabis, other]
    mechanism: grr
  - key: drinks
    text: How many?
    type: number
    min: 0
    max: 50
  - key: year
    text: Year?
    type: choice
    options: ["1", "2", "3", "4+"]
    sensitive: false
    required: false
"""

MIXED_JSON = """\
{
  "slug": "s",
  "title": "T",
  "max_epsilon": 6,
  "consent": "Agree?",
  "contact": "me@example.org",
  "questions": [
    {"key": "cheated", "text": "Cheated?", "epsilon": 0.5},
    {"key": "substance", "text": "Which?", "type": "choice",
     "options": ["none", "cannabis", "other"], "mechanism": "grr"},
    {"key": "drinks", "text": "How many?", "type": "number", "min": 0, "max": 50},
    {"key": "year", "text": "Year?", "type": "choice", "options": ["1", "2", "3", "4+"],
     "sensitive": false, "required": false}
  ]
}
"""

MIXED = SurveyDefinition(
    slug="s",
    title="T",
    description="",
    questions=(
        QuestionDefinition(key="cheated", text="Cheated?", epsilon=Fraction(1, 2)),
        QuestionDefinition(
            key="substance",
            text="Which?",
            type=QuestionType.CHOICE,
            options=("none", "cannabis", "other"),
            mechanism="grr",
        ),
        QuestionDefinition(key="drinks", text="How many?", type=QuestionType.NUMBER, min=0, max=50),
        QuestionDefinition(
            key="year",
            text="Year?",
            type=QuestionType.CHOICE,
            options=("1", "2", "3", "4+"),
            sensitive=False,
            required=False,
        ),
    ),
    max_epsilon=Fraction(6),
    consent="Agree?",
    contact="me@example.org",
)


def mixed_yaml(old: str, new: str) -> str:
    assert MIXED_YAML.count(old) == 1, old
    return MIXED_YAML.replace(old, new)


def mixed_json(old: str, new: str) -> str:
    assert MIXED_JSON.count(old) == 1, old
    return MIXED_JSON.replace(old, new)


def message_of(text: str, source: str) -> str:
    return str(raised(text, source))


def test_mixed_types_parse_the_same_from_yaml_and_json() -> None:
    assert parse_definition(MIXED_YAML) == MIXED
    assert parse_definition(MIXED_JSON, fmt="json") == MIXED


def test_mixed_example_loads() -> None:
    survey = load_definition(MIXED_EXAMPLE)
    assert survey.slug == "student-life"
    assert [(q.key, q.type, q.sensitive, q.required) for q in survey.questions] == [
        ("year", "choice", False, True),
        ("cheated", "yes_no", True, True),
        ("skipped_meals", "yes_no", True, True),
        ("substance", "choice", True, True),
        ("drinks", "number", True, True),
        ("stress", "yes_no", True, False),
    ]
    year, cheated, skipped, substance, drinks, _ = survey.questions
    assert year.options == ("1", "2", "3", "4+")
    assert (cheated.epsilon, skipped.epsilon) == (Fraction(1, 2), Fraction(2))
    assert (len(substance.options), substance.mechanism) == (5, "auto")
    assert (drinks.min, drinks.max) == (0, 50)
    assert survey.max_epsilon == Fraction(6)
    assert survey.consent.startswith("This survey is voluntary")
    assert "@" in survey.contact


def test_new_keys_default() -> None:
    survey = parse_definition(VALID_YAML)
    assert (survey.max_epsilon, survey.consent, survey.contact) == (None, "", "")
    question = survey.questions[0]
    assert (question.epsilon, question.mechanism, question.options) == (None, "auto", ())
    assert (question.min, question.max, question.sensitive, question.required) == (
        None,
        None,
        True,
        True,
    )


def test_requested_epsilon_fills_in_the_defaults() -> None:
    survey = parse_definition(mixed_yaml("    epsilon: 0.5\n", ""))
    assert [q.requested_epsilon for q in survey.questions] == [
        math.log(3),
        Fraction(1),
        Fraction(1),
        None,
    ]
    assert DEFAULT_YES_NO_EPSILON == math.log(3)
    assert DEFAULT_CHOICE_NUMBER_EPSILON == 1


GOOD_EPSILON_YAML = [
    ("0.01", Fraction(1, 100)),
    ("10", Fraction(10)),
    ("0.125", Fraction(1, 8)),
    ("0.1", Fraction(1, 10)),  # exactly a tenth, not the float nearest it
    (".5", Fraction(1, 2)),
    ("0.500", Fraction(1, 2)),
    ("1.", Fraction(1)),
    ("+2", Fraction(2)),
    ("1.0e+1", Fraction(10)),
    ("1.5e-2", Fraction(15, 1000)),
]


@pytest.mark.parametrize(("written", "expected"), GOOD_EPSILON_YAML)
def test_epsilon_is_read_exactly_from_yaml(written: str, expected: Fraction) -> None:
    text = mixed_yaml("epsilon: 0.5", f"epsilon: {written}").replace("max_epsilon: 6\n", "")
    survey = parse_definition(text)
    assert survey.questions[0].epsilon == expected
    assert type(survey.questions[0].epsilon) is Fraction


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("0.01", Fraction(1, 100)),
        ("10", Fraction(10)),
        ("0.1", Fraction(1, 10)),
        ("0.3", Fraction(3, 10)),
        ("1e1", Fraction(10)),
        ("1E-2", Fraction(1, 100)),
        ("2.0", Fraction(2)),
    ],
)
def test_epsilon_is_read_exactly_from_json(written: str, expected: Fraction) -> None:
    text = mixed_json('"epsilon": 0.5', f'"epsilon": {written}')
    survey = parse_definition(text.replace('"max_epsilon": 6,\n', ""), fmt="json")
    assert survey.questions[0].epsilon == expected


EPSILON_RULE = "must be a number from 0.01 to 10 with at most 3 decimals"

BAD_EPSILON_YAML = [
    # written, what the message says it got
    ("0", "0"),
    ("0.009", "0.009"),
    ("10.001", "10.001"),
    ("0.0125", "0.0125"),
    ("-1", "-1"),
    ("1.0e+999", "1.0e+999"),
    ("1.0e-999", "1.0e-999"),
    ("1" * 41, "1" * 41),
    (".inf", ".inf"),
    (".nan", ".nan"),
    ("0x1", "0x1"),
    ("01", "01"),  # YAML 1.1 octal
    ("1_0", "1_0"),
    ("1:30", "1:30"),
    ("yes", "a boolean"),
    ("true", "a boolean"),
    ("'0.5'", "the text '0.5'"),
    ("1e-2", "the text '1e-2'"),  # YAML 1.1 needs a dot in a float
    ("", "an empty value"),
    ("[1]", "a list"),
    ("{a: 1}", "a mapping"),
    ("2024-01-01", "a date"),
]


@pytest.mark.parametrize(("written", "got"), BAD_EPSILON_YAML)
def test_bad_epsilon_in_yaml(written: str, got: str) -> None:
    text = mixed_yaml("epsilon: 0.5", f"epsilon: {written}")
    assert message_of(text, "s.yaml") == (
        f"s.yaml:9: questions[0].epsilon: {EPSILON_RULE} (got {got})"
    )


BAD_EPSILON_JSON = [
    ("0", "0"),
    ("-0.5", "-0.5"),
    ("0.0001", "0.0001"),
    ("1e-3", "0.001"),
    ("11", "11"),
    ("1.2345", "1.2345"),
    ("1e999", "inf"),
    ("NaN", "nan"),
    ("-Infinity", "-inf"),
    ("true", "a boolean"),
    ('"0.5"', "the text '0.5'"),
    ("null", "null"),
    ("[0.5]", "a list"),
]


@pytest.mark.parametrize(("written", "got"), BAD_EPSILON_JSON)
def test_bad_epsilon_in_json(written: str, got: str) -> None:
    text = mixed_json('"epsilon": 0.5', f'"epsilon": {written}')
    assert message_of(text, "s.json") == (
        f"s.json:8: questions[0].epsilon: {EPSILON_RULE} (got {got})"
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "    sensitive: false\n",
            "    sensitive: false\n    epsilon: 1\n",
            "s.yaml:25: questions[3].epsilon: a plain question (sensitive: false) has no ε: "
            "it is stored as given",
        ),
        (
            "    sensitive: false\n",
            "    sensitive: false\n    mechanism: grr\n",
            "s.yaml:25: questions[3].mechanism: a plain question (sensitive: false) has no "
            "mechanism: it is stored as given",
        ),
        (
            "    epsilon: 0.5\n",
            "    epsilon: 0.5\n    mechanism: auto\n",
            "s.yaml:10: questions[0].mechanism: yes/no questions always use two-coin "
            "randomized response: leave mechanism out",
        ),
        (
            "mechanism: grr",
            "mechanism: laplace",
            "s.yaml:14: questions[1].mechanism: must be one of: auto, grr, oue, subset "
            "(got 'laplace')",
        ),
        (
            "    max: 50\n",
            "    max: 50\n    mechanism: grr\n",
            "s.yaml:20: questions[2].mechanism: must be one of: auto, laplace, duchi, piecewise "
            "(got 'grr')",
        ),
        (
            "mechanism: grr",
            "mechanism: GRR",
            "s.yaml:14: questions[1].mechanism: must be one of: auto, grr, oue, subset (got 'GRR')",
        ),
        (
            "mechanism: grr",
            "mechanism: yes",
            "s.yaml:14: questions[1].mechanism: must be a string (got a boolean; put yes in "
            "quotes if you meant it as text)",
        ),
        (
            "    epsilon: 0.5\n",
            "    epsilon: 0.5\n    sensitive: false\n",
            "s.yaml:10: questions[0].sensitive: yes/no questions are always randomized: "
            "sensitive: false is only for choice and number questions",
        ),
        (
            "sensitive: false",
            "sensitive: 'false'",
            "s.yaml:24: questions[3].sensitive: must be true or false (got the text 'false')",
        ),
        (
            "sensitive: false",
            "sensitive: 0",
            "s.yaml:24: questions[3].sensitive: must be true or false (got a number)",
        ),
        (
            "sensitive: false",
            "sensitive:",
            "s.yaml:24: questions[3].sensitive: must be true or false (got an empty value)",
        ),
        (
            "required: false",
            "required: maybe",
            "s.yaml:25: questions[3].required: must be true or false (got the text 'maybe')",
        ),
        (
            "required: false",
            "required: [no]",
            "s.yaml:25: questions[3].required: must be true or false (got a list)",
        ),
    ],
)
def test_bad_sensitive_required_and_mechanism_in_yaml(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_yaml(old, new), "s.yaml") == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            '"sensitive": false',
            '"sensitive": false, "epsilon": 1',
            "s.json:13: questions[3].epsilon: a plain question (sensitive: false) has no ε: "
            "it is stored as given",
        ),
        (
            '"epsilon": 0.5',
            '"epsilon": 0.5, "mechanism": "auto"',
            "s.json:8: questions[0].mechanism: yes/no questions always use two-coin "
            "randomized response: leave mechanism out",
        ),
        (
            '"max": 50',
            '"max": 50, "mechanism": "oue"',
            "s.json:11: questions[2].mechanism: must be one of: auto, laplace, duchi, piecewise "
            "(got 'oue')",
        ),
        (
            '"epsilon": 0.5',
            '"epsilon": 0.5, "sensitive": false',
            "s.json:8: questions[0].sensitive: yes/no questions are always randomized: "
            "sensitive: false is only for choice and number questions",
        ),
        (
            '"sensitive": false',
            '"sensitive": "false"',
            "s.json:13: questions[3].sensitive: must be true or false (got the text 'false')",
        ),
        (
            '"required": false',
            '"required": 0',
            "s.json:13: questions[3].required: must be true or false (got a number)",
        ),
        (
            '"required": false',
            '"required": null',
            "s.json:13: questions[3].required: must be true or false (got null)",
        ),
    ],
)
def test_bad_sensitive_required_and_mechanism_in_json(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_json(old, new), "s.json") == expected


@pytest.mark.parametrize(
    ("old", "new", "question", "expected"),
    [
        ("mechanism: grr", "mechanism: oue", 1, {"mechanism": "oue"}),
        ("mechanism: grr", "mechanism: auto", 1, {"mechanism": "auto"}),
        ("    mechanism: grr\n", "", 1, {"mechanism": "auto"}),
        ("    max: 50\n", "    max: 50\n    mechanism: laplace\n", 2, {"mechanism": "laplace"}),
        ("    max: 50\n", "    max: 50\n    mechanism: duchi\n", 2, {"mechanism": "duchi"}),
        ("    max: 50\n", "    max: 50\n    epsilon: 3.5\n", 2, {"epsilon": Fraction(7, 2)}),
        ("sensitive: false", "sensitive: true", 3, {"sensitive": True}),
        ("sensitive: false", "sensitive: no", 3, {"sensitive": False}),
        ("sensitive: false", "sensitive: Off", 3, {"sensitive": False}),
        ("sensitive: false", "sensitive: YES", 3, {"sensitive": True}),
        ("    sensitive: false\n", "", 3, {"sensitive": True}),
        ("    max: 50\n", "    max: 50\n    sensitive: false\n", 2, {"sensitive": False}),
        ("required: false", "required: true", 3, {"required": True}),
        ("required: false", "required: on", 3, {"required": True}),
        ("    epsilon: 0.5\n", "    epsilon: 0.5\n    required: false\n", 0, {"required": False}),
        ("    required: false\n", "", 3, {"required": True}),
    ],
)
def test_good_sensitive_required_and_mechanism(
    old: str, new: str, question: int, expected: dict[str, object]
) -> None:
    parsed = parse_definition(mixed_yaml(old, new)).questions[question]
    assert {name: getattr(parsed, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("[a, b]", ("a", "b")),
        ("[1, 2, 3, 4+]", ("1", "2", "3", "4+")),  # integers are taken as their text
        ("[' a ', b]", ("a", "b")),
        ("[0, 00, '0.0']", ("0", "00", "0.0")),
        ("[A, a]", ("A", "a")),
        ("[" + ", ".join(f"o{i}" for i in range(20)) + "]", tuple(f"o{i}" for i in range(20))),
        ("[" + "x" * 200 + ", y]", ("x" * 200, "y")),
        ("\n      - first\n      - second", ("first", "second")),
    ],
)
def test_good_options_in_yaml(written: str, expected: tuple[str, ...]) -> None:
    text = mixed_yaml("options: [none, cannabis, other]", f"options: {written}")
    assert parse_definition(text).questions[1].options == expected


def test_integer_options_in_json_are_taken_as_their_text() -> None:
    text = mixed_json('["1", "2", "3", "4+"]', '[1, 2, 3, "4+"]')
    assert parse_definition(text, fmt="json").questions[3].options == ("1", "2", "3", "4+")


BAD_OPTIONS_YAML = [
    ("[a]", "s.yaml:13: questions[1].options: must list 2 to 20 options (got 1)"),
    ("[]", "s.yaml:13: questions[1].options: must list 2 to 20 options (got 0)"),
    (
        "[" + ", ".join(f"o{i}" for i in range(21)) + "]",
        "s.yaml:13: questions[1].options: must list 2 to 20 options (got 21)",
    ),
    ("none", "s.yaml:13: questions[1].options: must be a list of option texts (got a string)"),
    ("{a: b}", "s.yaml:13: questions[1].options: must be a list of option texts (got a mapping)"),
    ("", "s.yaml:13: questions[1].options: must be a list of option texts (got an empty value)"),
    ("[a, '']", "s.yaml:13: questions[1].options[1]: must not be empty"),
    ("[a, '  ']", "s.yaml:13: questions[1].options[1]: must not be empty"),
    (
        "[a, " + "x" * 201 + "]",
        "s.yaml:13: questions[1].options[1]: must be at most 200 characters (got 201)",
    ),
    (
        "[a, b, a]",
        "s.yaml:13: questions[1].options[2]: duplicate option 'a' (already "
        "questions[1].options[0])",
    ),
    (
        "[a, ' a']",
        "s.yaml:13: questions[1].options[1]: duplicate option 'a' (already "
        "questions[1].options[0])",
    ),
    (
        "[1, '1']",
        "s.yaml:13: questions[1].options[1]: duplicate option '1' (already "
        "questions[1].options[0])",
    ),
    (
        "[1.5, 2]",
        "s.yaml:13: questions[1].options[0]: must be a string (got a number; put 1.5 in "
        "quotes if you meant it as text)",
    ),
    (
        "[yes, no]",
        "s.yaml:13: questions[1].options[0]: must be a string (got a boolean; put yes in "
        "quotes if you meant it as text)\n"
        "s.yaml:13: questions[1].options[1]: must be a string (got a boolean; put no in "
        "quotes if you meant it as text)",
    ),
    (
        "[a, ~]",
        "s.yaml:13: questions[1].options[1]: must be a string (got an empty value; put ~ in "
        "quotes if you meant it as text)",
    ),
    ("[a, [b]]", "s.yaml:13: questions[1].options[1]: must be a string (got a list)"),
    (
        "\n      - a\n      - a",
        "s.yaml:15: questions[1].options[1]: duplicate option 'a' (already "
        "questions[1].options[0])",
    ),
]


@pytest.mark.parametrize(("written", "expected"), BAD_OPTIONS_YAML)
def test_bad_options_in_yaml(written: str, expected: str) -> None:
    text = mixed_yaml("options: [none, cannabis, other]", f"options: {written}")
    assert message_of(text, "s.yaml") == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "    options: [none, cannabis, other]\n",
            "",
            "s.yaml:10: questions[1].options: is required for a choice question",
        ),
        (
            "    epsilon: 0.5\n",
            "    epsilon: 0.5\n    options: [a, b]\n",
            "s.yaml:10: questions[0].options: only choice questions and rating scales have options "
            "(this one is yes_no)",
        ),
        (
            "    max: 50\n",
            "    max: 50\n    options: [a, b]\n",
            "s.yaml:20: questions[2].options: only choice questions and rating scales have options "
            "(this one is number)",
        ),
    ],
)
def test_options_only_on_choice_questions(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_yaml(old, new), "s.yaml") == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ('["a"]', "s.json:10: questions[1].options: must list 2 to 20 options (got 1)"),
        (
            '"a, b"',
            "s.json:10: questions[1].options: must be a list of option texts (got a string)",
        ),
        ('["a", ""]', "s.json:10: questions[1].options[1]: must not be empty"),
        (
            '["a", "b", "a"]',
            "s.json:10: questions[1].options[2]: duplicate option 'a' (already "
            "questions[1].options[0])",
        ),
        ('["a", 1.5]', "s.json:10: questions[1].options[1]: must be a string (got a number)"),
        ('["a", true]', "s.json:10: questions[1].options[1]: must be a string (got a boolean)"),
        ('["a", null]', "s.json:10: questions[1].options[1]: must be a string (got null)"),
    ],
)
def test_bad_options_in_json(written: str, expected: str) -> None:
    text = mixed_json('["none", "cannabis", "other"]', written)
    assert message_of(text, "s.json") == expected


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("0", "1"),
        ("-5", "5"),
        ("-1000000000", "-999000000"),
        ("999000000", "1000000000"),
        ("+3", "7"),
        ("0", "1000000"),
    ],
)
def test_good_number_bounds(low: str, high: str) -> None:
    question = parse_definition(
        mixed_yaml("min: 0\n    max: 50", f"min: {low}\n    max: {high}")
    ).questions[2]
    assert (question.min, question.max) == (int(low), int(high))
    json_question = parse_definition(
        mixed_json('"min": 0, "max": 50', f'"min": {int(low)}, "max": {int(high)}'), fmt="json"
    ).questions[2]
    assert json_question == question


WHOLE_RULE = "must be a whole number from -1000000000 to 1000000000"

BAD_BOUNDS_YAML = [
    ("min: 1.5", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got 1.5)"),
    ("min: 1.0", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got 1.0)"),
    ("min: '5'", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got the text '5')"),
    ("min: true", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got a boolean)"),
    ("min:", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got an empty value)"),
    ("min: 0x10", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got 0x10)"),
    ("min: 010", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got 010)"),
    ("min: 1_000", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got 1_000)"),
    ("min: .inf", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got .inf)"),
    ("min: -1000000001", f"s.yaml:18: questions[2].min: {WHOLE_RULE} (got -1000000001)"),
    ("max: 1000000001", f"s.yaml:19: questions[2].max: {WHOLE_RULE} (got 1000000001)"),
    ("max: 1" + "0" * 50, f"s.yaml:19: questions[2].max: {WHOLE_RULE} (got 1{'0' * 50})"),
    ("max: 0", "s.yaml:19: questions[2].max: must be greater than min (got min 0, max 0)"),
    ("max: -1", "s.yaml:19: questions[2].max: must be greater than min (got min 0, max -1)"),
    (
        "max: 1000001",
        "s.yaml:19: questions[2].max: must be at most 1000000 more than min "
        "(got max - min = 1000001)",
    ),
]


@pytest.mark.parametrize(("new", "expected"), BAD_BOUNDS_YAML)
def test_bad_number_bounds_in_yaml(new: str, expected: str) -> None:
    old = new.split(":")[0] + (": 0" if new.startswith("min") else ": 50")
    assert message_of(mixed_yaml(old, new), "s.yaml") == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('"min": 0', '"min": 1.0', f"s.json:11: questions[2].min: {WHOLE_RULE} (got 1.0)"),
        ('"min": 0', '"min": 1e3', f"s.json:11: questions[2].min: {WHOLE_RULE} (got 1000.0)"),
        ('"max": 50', '"max": true', f"s.json:11: questions[2].max: {WHOLE_RULE} (got a boolean)"),
        (
            '"max": 50',
            '"max": "50"',
            f"s.json:11: questions[2].max: {WHOLE_RULE} (got the text '50')",
        ),
        ('"max": 50', '"max": null', f"s.json:11: questions[2].max: {WHOLE_RULE} (got null)"),
        (
            '"min": 0',
            '"min": -1000000001',
            f"s.json:11: questions[2].min: {WHOLE_RULE} (got -1000000001)",
        ),
        (
            '"min": 0',
            '"min": 50',
            "s.json:11: questions[2].max: must be greater than min (got min 50, max 50)",
        ),
        (
            '"min": 0',
            '"min": -999951',
            "s.json:11: questions[2].max: must be at most 1000000 more than min "
            "(got max - min = 1000001)",
        ),
        (
            '"min": 0, ',
            "",
            "s.json:11: questions[2].min: is required for a number question",
        ),
        (
            ', "max": 50',
            "",
            "s.json:11: questions[2].max: is required for a number question",
        ),
        (
            '"epsilon": 0.5',
            '"epsilon": 0.5, "min": 0',
            "s.json:8: questions[0].min: only number questions have min and max "
            "(this one is yes_no)",
        ),
        (
            '"mechanism": "grr"',
            '"mechanism": "grr", "max": 3',
            "s.json:10: questions[1].max: only number questions have min and max "
            "(this one is choice)",
        ),
    ],
)
def test_bad_number_bounds_in_json(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_json(old, new), "s.json") == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("    min: 0\n", "", "s.yaml:15: questions[2].min: is required for a number question"),
        ("    max: 50\n", "", "s.yaml:15: questions[2].max: is required for a number question"),
        (
            "    epsilon: 0.5\n",
            "    epsilon: 0.5\n    max: 1\n",
            "s.yaml:10: questions[0].max: only number questions have min and max "
            "(this one is yes_no)",
        ),
        (
            "    sensitive: false\n",
            "    sensitive: false\n    min: 1\n",
            "s.yaml:25: questions[3].min: only number questions have min and max "
            "(this one is choice)",
        ),
    ],
)
def test_bounds_only_on_number_questions(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_yaml(old, new), "s.yaml") == expected


# The mixed texts' sensitive questions ask for 0.5 (cheated) + 1 (substance, default)
# + 1 (drinks, default) = 2.5; year is plain and adds nothing.


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("max_epsilon: 6", "max_epsilon: 2.5", Fraction(5, 2)),
        ("max_epsilon: 6", "max_epsilon: 1000", Fraction(1000)),
        ("max_epsilon: 6", "max_epsilon: 2.500", Fraction(5, 2)),
        ("max_epsilon: 6\n", "", None),
        # Without its epsilon, cheated asks for ln 3 ≈ 1.0986: 3.0986 in all.
        ("    epsilon: 0.5\n", "", Fraction(6)),
    ],
)
def test_good_max_epsilon(old: str, new: str, expected: Fraction | None) -> None:
    assert parse_definition(mixed_yaml(old, new)).max_epsilon == expected


def test_max_epsilon_allows_ln_3_just_below_it() -> None:
    text = mixed_yaml("max_epsilon: 6", "max_epsilon: 3.099").replace("    epsilon: 0.5\n", "")
    assert parse_definition(text).max_epsilon == Fraction("3.099")


MAX_EPSILON_RULE = "must be a number from 0.01 to 1000 with at most 3 decimals"

BAD_MAX_EPSILON_YAML = [
    (
        "max_epsilon: 6",
        "max_epsilon: 2.499",
        "s.yaml:3: max_epsilon: the questions add up to ε = 2.5 per respondent, more than "
        "max_epsilon = 2.499",
    ),
    (
        "    max: 50\n",
        "    max: 50\n    epsilon: 7.3\n",
        "s.yaml:3: max_epsilon: the questions add up to ε = 8.8 per respondent, more than "
        "max_epsilon = 6",
    ),
    ("max_epsilon: 6", "max_epsilon: 0", f"s.yaml:3: max_epsilon: {MAX_EPSILON_RULE} (got 0)"),
    (
        "max_epsilon: 6",
        "max_epsilon: 1000.001",
        f"s.yaml:3: max_epsilon: {MAX_EPSILON_RULE} (got 1000.001)",
    ),
    (
        "max_epsilon: 6",
        "max_epsilon: 6.0001",
        f"s.yaml:3: max_epsilon: {MAX_EPSILON_RULE} (got 6.0001)",
    ),
    (
        "max_epsilon: 6",
        "max_epsilon: six",
        f"s.yaml:3: max_epsilon: {MAX_EPSILON_RULE} (got the text 'six')",
    ),
    (
        "max_epsilon: 6",
        "max_epsilon: off",
        f"s.yaml:3: max_epsilon: {MAX_EPSILON_RULE} (got a boolean)",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), BAD_MAX_EPSILON_YAML)
def test_bad_max_epsilon_in_yaml(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_yaml(old, new), "s.yaml") == expected


def test_max_epsilon_counts_default_yes_no_questions_at_ln_3() -> None:
    text = mixed_yaml("max_epsilon: 6", "max_epsilon: 3.098").replace("    epsilon: 0.5\n", "")
    assert message_of(text, "s.yaml") == (
        "s.yaml:3: max_epsilon: the questions add up to ε ≈ 3.099 (with 1 yes/no question at "
        "the default ε = ln 3 ≈ 1.099) per respondent, more than max_epsilon = 3.098"
    )
    many = mixed_yaml("max_epsilon: 6", "max_epsilon: 4").replace(
        "    epsilon: 0.5\n", "  - {key: b, text: B}\n  - {key: c, text: C}\n"
    )
    assert message_of(many, "s.yaml") == (
        "s.yaml:3: max_epsilon: the questions add up to ε ≈ 5.296 (with 3 yes/no questions at "
        "the default ε = ln 3 ≈ 1.099) per respondent, more than max_epsilon = 4"
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            '"max_epsilon": 6',
            '"max_epsilon": 2.49',
            "s.json:4: max_epsilon: the questions add up to ε = 2.5 per respondent, more than "
            "max_epsilon = 2.49",
        ),
        (
            '"max_epsilon": 6',
            '"max_epsilon": 0.001',
            f"s.json:4: max_epsilon: {MAX_EPSILON_RULE} (got 0.001)",
        ),
        (
            '"max_epsilon": 6',
            '"max_epsilon": 1e4',
            f"s.json:4: max_epsilon: {MAX_EPSILON_RULE} (got 10000.0)",
        ),
        (
            '"max_epsilon": 6',
            '"max_epsilon": "6"',
            f"s.json:4: max_epsilon: {MAX_EPSILON_RULE} (got the text '6')",
        ),
        (
            '"max_epsilon": 6',
            '"max_epsilon": false',
            f"s.json:4: max_epsilon: {MAX_EPSILON_RULE} (got a boolean)",
        ),
    ],
)
def test_bad_max_epsilon_in_json(old: str, new: str, expected: str) -> None:
    assert message_of(mixed_json(old, new), "s.json") == expected


@pytest.mark.parametrize(
    ("old", "new", "consent", "contact"),
    [
        ("consent: Agree?", "consent: " + "c" * 5000, "c" * 5000, "me@example.org"),
        ("consent: Agree?\n", "", "", "me@example.org"),
        ("contact: me@example.org", "contact: ''", "Agree?", ""),
        ("contact: me@example.org", "contact: " + "m" * 500, "Agree?", "m" * 500),
        ("contact: me@example.org\n", "", "Agree?", ""),
        (
            "consent: Agree?",
            "consent: |\n  Line one.\n  Line two.",
            "Line one.\nLine two.",
            "me@example.org",
        ),
    ],
)
def test_good_consent_and_contact(old: str, new: str, consent: str, contact: str) -> None:
    survey = parse_definition(mixed_yaml(old, new))
    assert (survey.consent, survey.contact) == (consent, contact)


@pytest.mark.parametrize(
    ("text", "source", "expected"),
    [
        (
            mixed_yaml("consent: Agree?", "consent: ''"),
            "s.yaml",
            "s.yaml:4: consent: must not be empty",
        ),
        (
            mixed_yaml("consent: Agree?", "consent:"),
            "s.yaml",
            "s.yaml:4: consent: must be a string (got an empty value)",
        ),
        (
            mixed_yaml("consent: Agree?", "consent: " + "c" * 5001),
            "s.yaml",
            "s.yaml:4: consent: must be at most 5000 characters (got 5001)",
        ),
        (
            mixed_yaml("consent: Agree?", "consent: yes"),
            "s.yaml",
            "s.yaml:4: consent: must be a string (got a boolean; put yes in quotes if you "
            "meant it as text)",
        ),
        (
            mixed_yaml("contact: me@example.org", "contact: " + "m" * 501),
            "s.yaml",
            "s.yaml:5: contact: must be at most 500 characters (got 501)",
        ),
        (
            mixed_yaml("contact: me@example.org", "contact: [a]"),
            "s.yaml",
            "s.yaml:5: contact: must be a string (got a list)",
        ),
        (mixed_json('"Agree?"', '" "'), "s.json", "s.json:5: consent: must not be empty"),
        (
            mixed_json('"Agree?"', "null"),
            "s.json",
            "s.json:5: consent: must be a string (got null)",
        ),
        (
            mixed_json('"me@example.org"', "5"),
            "s.json",
            "s.json:6: contact: must be a string (got a number)",
        ),
    ],
)
def test_bad_consent_and_contact(text: str, source: str, expected: str) -> None:
    assert message_of(text, source) == expected


def test_limits_are_one_place() -> None:
    assert (MIN_OPTIONS, MAX_OPTIONS, MAX_OPTION_LENGTH) == (2, 20, 200)
    assert (EPSILON_MIN, EPSILON_MAX, MAX_EPSILON_MAX) == (
        Fraction(1, 100),
        Fraction(10),
        Fraction(1000),
    )
    assert (MAX_NUMBER_RANGE, MAX_NUMBER_MAGNITUDE) == (1_000_000, 10**9)
    assert set(MECHANISMS) == {"choice", "number", "scale", "multiple"}
    assert QUESTION_TYPES == ("yes_no", "choice", "number", "scale", "multiple")


@pytest.mark.parametrize("written", ["1.0e+9999999", "1.0e-9999999"])
def test_huge_exponents_are_refused_without_computing_them(
    written: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fraction("1.0e+9999999") takes tens of seconds: a definition must not stall the importer.
    def no_huge_fractions(value: int | str = 0) -> Fraction:
        assert not (isinstance(value, str) and "9999999" in value)
        return Fraction(value)

    monkeypatch.setattr(survey_validation, "Fraction", no_huge_fractions)
    text = mixed_yaml("epsilon: 0.5", f"epsilon: {written}")
    assert message_of(text, "s.yaml") == (
        f"s.yaml:9: questions[0].epsilon: {EPSILON_RULE} (got {written})"
    )
