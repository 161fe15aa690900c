"""Survey definition files: what parses, and that every bad file says where it went wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from survey_app.definitions import (
    QuestionDefinition,
    SurveyDefinition,
    SurveyDefinitionError,
    load_definition,
    parse_definition,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "campus-health.yaml"

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
        QuestionDefinition(key="cheated", text="Have you cheated?", type="yes_no"),
        QuestionDefinition(key="drugs", text="Have you used drugs?", type="yes_no"),
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
    assert survey.questions == (QuestionDefinition(key="q", text="Q?", type="yes_no"),)


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
    ("title-mapping", yaml_with("Campus health survey", "{a: b}"), "title", 2, "got a mapping"),
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
        "unknown key 'colour' (allowed: key, text, type)",
    ),
    (
        "top-unknown-key",
        VALID_YAML + "tittle: x\n",
        "tittle",
        10,
        "unknown key 'tittle' (allowed: slug, title, description, access, questions)",
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


@pytest.mark.parametrize("key", ["csrf_token", "submission_id", "randomized", "invitation"])
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


@given(
    data=st.fixed_dictionaries(
        {},
        optional={
            "slug": JSON_VALUES,
            "title": JSON_VALUES,
            "description": JSON_VALUES,
            "questions": st.lists(
                st.dictionaries(st.sampled_from(["key", "text", "type"]), JSON_VALUES)
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
