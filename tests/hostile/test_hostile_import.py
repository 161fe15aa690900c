"""Hostile survey files through ``survey-app import-survey``, property-based: exit 0 or 1,
never a traceback, and nothing stored on exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskCliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.hostile import hostile
from tests.support.stored import StoredState

# --------------------------------------------------------------------------------------
# Arbitrary survey definition files through `survey-app import-survey`: exit 0 or 1,
# never a traceback, and nothing stored on exit 1.

# Strings a survey might hold, including the ones that sink storage or rendering:
# lone surrogates (valid in JSON and YAML escapes, not in UTF-8), NULs, markup, formulas.
nasty_text = st.one_of(
    st.text(max_size=30),
    st.text(st.characters(codec=None, categories=None), max_size=10),
    st.sampled_from(
        [
            "\ud800",
            "a\udfffb",
            "\x00",
            "<script>alert(1)</script>",
            "=1+1",
            "yes",
            "",
            " ",
            "\u2028",
            "\ufeff",
            "x" * 1001,
            "campus-health",
        ]
    ),
)
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), nasty_text)
structure = st.recursive(
    scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(
                nasty_text, st.sampled_from(["slug", "key", "text", "languages", "en", "ko"])
            ),
            children,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


def _in_languages(draw: st.DrawFn, languages: list[str], fallback: str) -> object:
    """A text as a survey in ``languages`` needs it: plain for one language, else one per
    language; sometimes with a language missing, one too many, or given plainly."""
    texts = {code: draw(nasty_text) or f"{fallback} ({code})" for code in languages}
    twist = draw(st.sampled_from(["none", "none", "none", "missing", "extra", "plain"]))
    if twist == "missing":
        texts.pop(draw(st.sampled_from(languages)))
    elif twist == "extra":
        texts[draw(st.sampled_from(["en", "ko", "zh", "fr"]))] = draw(nasty_text)
    elif twist == "plain" or (len(languages) == 1 and draw(st.booleans())):
        return texts.get(languages[0], fallback)
    return texts


@st.composite
def near_valid_definition(draw: st.DrawFn) -> dict:
    """A valid definition, in one to three languages, with a few of its parts replaced by
    anything at all."""
    slug = draw(
        st.one_of(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True), nasty_text)
    )
    languages = draw(st.sampled_from([["en"], ["en"], ["ko"], ["en", "ko"], ["zh", "ko", "en"]]))
    questions: list[dict[str, Any]] = [
        {
            "key": draw(st.sampled_from(["q1", "q2", "a_b", "z9"])) + str(i),
            "text": _in_languages(draw, languages, "A question?"),
            "type": "yes_no",
        }
        for i in range(draw(st.integers(1, 4)))
    ]
    if draw(st.booleans()):
        questions.append(
            {
                "key": "choice",
                "text": _in_languages(draw, languages, "Which?"),
                "type": "choice",
                "options": [_in_languages(draw, languages, f"Option {i}") for i in range(3)],
            }
        )
    definition: dict[str, Any] = {
        "slug": slug,
        "title": _in_languages(draw, languages, "A title"),
        "description": _in_languages(draw, languages, ""),
        "questions": questions,
    }
    if languages != ["en"] or draw(st.booleans()):
        definition["languages"] = languages
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from(["survey", "question"]))
        holder = (
            definition if target == "survey" or not questions else draw(st.sampled_from(questions))
        )
        key = draw(st.one_of(st.sampled_from(sorted(holder)), nasty_text))
        if draw(st.booleans()):
            holder.pop(key, None)
        else:
            holder[key] = draw(structure)
    return definition


def _dump(value: object, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(value, ensure_ascii=True)
    if fmt == "json-utf8":
        return json.dumps(value, ensure_ascii=False)
    return yaml.safe_dump(value, allow_unicode=fmt == "yaml-utf8")


definition_file = st.one_of(
    st.tuples(
        st.one_of(near_valid_definition(), structure),
        st.sampled_from(["json", "json-utf8", "yaml", "yaml-utf8"]),
        st.sampled_from([".json", ".yaml", ".yml", ".txt"]),
    ),
    st.tuples(
        st.one_of(st.text(max_size=200), st.binary(max_size=200)),
        st.just("raw"),
        st.sampled_from([".json", ".yaml"]),
    ),
)


@pytest.mark.slow
@hostile(max_examples=200)
@given(spec=definition_file)
# Regression (found by this property): a string holding a surrogate code point passed
# validation, then sqlite3 could not encode it as UTF-8 and the command died with a
# traceback. Now pairs are joined and lone surrogates refused with the field and line.
# JSON allows a lone "\ud800" escape; and PyYAML decodes each half of an escaped pair
# separately, so an ordinary emoji written by json.dump (ensure_ascii) into a .yaml file
# ("\ud83d\ude00") turns into two lone surrogates.
@example(
    spec=(
        {"slug": "lone-surrogate", "title": "T", "questions": [{"key": "q", "text": "\ud800"}]},
        "json",
        ".json",
    )
)
# A NUL in a text: PostgreSQL stores none, SQLite would; refused alike on both, naming it.
@example(
    spec=(
        {"slug": "nul", "title": "T", "questions": [{"key": "q", "text": "a\x00b"}]},
        "json",
        ".json",
    )
)
@example(
    spec=(
        '{"slug": "emoji", "title": "Hi \\ud83d\\ude00", '
        '"questions": [{"key": "q", "text": "Ok?"}]}',
        "raw",
        ".yaml",
    )
)
def test_import_survey_exits_0_or_1_and_stores_all_or_nothing(
    app: Flask, stored: StoredState, runner: FlaskCliRunner, tmp_path: Path, spec: tuple
) -> None:
    value, fmt, suffix = spec
    path = tmp_path / f"definition{suffix}"
    if fmt == "raw":
        if isinstance(value, bytes):
            path.write_bytes(value)
        else:
            path.write_text(value, encoding="utf-8", errors="surrogatepass")
    else:
        try:
            text = _dump(value, fmt)
        except (UnicodeEncodeError, yaml.YAMLError):
            return  # the generator cannot write it; nothing to import
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = stored.table_sizes()
    result = runner.invoke(args=["import-survey", str(path)])
    after = stored.table_sizes()
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback on {path.read_bytes()[:300]!r}: {result.exception!r}"
    )
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        assert after == before, result.output
        assert "Error" in result.output
    else:
        surveys, questions = after
        assert surveys == before[0] + 1
        assert questions > before[1]
