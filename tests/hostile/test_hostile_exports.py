"""Hostile survey text in exports and pages: CSV cells never start a formula (at a cell's
start, or after a ";" where a spreadsheet's locale splits there too), and markup is
always escaped.
"""

from __future__ import annotations

import csv
import io
import json
import re
import secrets
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape

from tests.support.hostile import hostile
from tests.support.respondents import fresh_form

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


# --------------------------------------------------------------------------------------
# CSV injection and markup in survey text: exports neutralize, pages escape.

FORMULAS = [
    "=cmd|' /C calc'!A0",
    "+SUM(1)",
    "-2+3",
    "@SUM(A1)",
    '=HYPERLINK("http://evil.example","click")',
    "-",
    "=",
]


def _formula_cells(text: str) -> list[tuple[str, int, int, str]]:
    """Cells a spreadsheet would run: start with a formula prefix and are not numbers,
    read with "," and with ";" as the separator (spreadsheets in decimal-comma locales)."""
    bad = []
    for delimiter in (",", ";"):
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                if cell.startswith(FORMULA_PREFIXES) and not NUMBER.fullmatch(cell):
                    bad.append((delimiter, r, c, cell))
    return bad


def _import(runner: FlaskCliRunner, tmp_path: Path, definition: dict) -> str:
    path = tmp_path / f"{definition['slug']}.json"
    path.write_text(json.dumps(definition), encoding="utf-8")
    result = runner.invoke(args=["import-survey", str(path)])
    assert result.exit_code == 0, result.output
    return definition["slug"]


def _respond(app: Flask, slug: str, keys: list[str], times: int = 3) -> None:
    for i in range(times):
        respondent = app.test_client()
        reported = {key: "y" if i % 2 else "n" for key in keys}
        response = respondent.post(
            f"/s/{slug}",
            data={**fresh_form(respondent, slug), **reported, "randomized": "client"},
        )
        assert response.status_code == 200


def _all_exports(client: FlaskClient, runner: FlaskCliRunner, slug: str) -> dict[str, str]:
    exports = {}
    for name in ("export.csv", "responses.csv"):
        response = client.get(f"/research/surveys/{slug}/{name}")
        assert response.status_code == 200
        exports[f"http {name}"] = response.get_data(as_text=True)
    for args in ([], ["--responses"]):
        result = runner.invoke(args=["export", slug, *args])
        assert result.exit_code == 0, result.output
        exports[f"cli export {' '.join(args)}"] = result.output
    return exports


@pytest.mark.slow
@pytest.mark.parametrize("formula", FORMULAS)
def test_exports_never_hold_a_formula_cell(
    app: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, tmp_path: Path, formula: str
) -> None:
    definition = {
        "slug": "formulas",
        "title": formula,
        "description": formula,
        "questions": [
            {"key": "q1", "text": formula},
            {"key": "q2", "text": f"  {formula}"},
            {"key": "q3", "text": "An ordinary question?"},
        ],
    }
    slug = _import(runner, tmp_path, definition)
    _respond(app, slug, ["q1", "q2", "q3"])
    for name, text in _all_exports(logged_in, runner, slug).items():
        assert _formula_cells(text) == [], name
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        if "question_text" in rows[0]:
            # Neutralized, not mangled: the text is there after one leading quote.
            assert [row["question_text"].removeprefix("'") for row in rows] == [
                formula.strip(),
                formula.strip(),
                "An ordinary question?",
            ]


@pytest.mark.slow
@hostile(max_examples=40)
@given(
    prefix=st.sampled_from(
        ["=", "+", "-", "@", " =", "\t=", "\r\n+", "\u00a0@", "'=", "a;=", "x;;-", "'=;@"]
    ),
    rest=st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
)
def test_any_formula_like_question_text_is_neutralized(
    app: Flask,
    logged_in: FlaskClient,
    runner: FlaskCliRunner,
    tmp_path: Path,
    prefix: str,
    rest: str,
) -> None:
    text = (prefix + rest)[:1000]
    slug = "f-" + secrets.token_hex(4)
    definition = {"slug": slug, "title": text or "t", "questions": [{"key": "q", "text": text}]}
    path = tmp_path / f"{slug}.json"
    path.write_text(json.dumps(definition), encoding="utf-8")
    result = runner.invoke(args=["import-survey", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    if result.exit_code != 0:
        return  # refused (e.g. empty after stripping): nothing to export
    _respond(app, slug, ["q"], times=1)
    for name, exported in _all_exports(logged_in, runner, slug).items():
        assert _formula_cells(exported) == [], (name, text)


MARKUP = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</legend><script>alert(1)</script>",
    "{{ 7*7 }}<b>bold</b>",
]


@pytest.mark.slow
@pytest.mark.parametrize("markup", MARKUP)
def test_survey_text_is_escaped_on_every_page(
    app: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, tmp_path: Path, markup: str
) -> None:
    definition = {
        "slug": "markup",
        "title": f"Title {markup}",
        "description": f"Description {markup}",
        "questions": [{"key": "q1", "text": f"Question {markup}"}],
    }
    slug = _import(runner, tmp_path, definition)
    respondent = app.test_client()
    pages = {
        "index": respondent.get("/"),
        "survey": respondent.get(f"/s/{slug}"),
    }
    pages["refused"] = respondent.post(f"/s/{slug}", data={"q1": "maybe"})
    pages["thanks"] = respondent.post(
        f"/s/{slug}",
        data={**fresh_form(respondent, slug), "q1": "y", "randomized": "client"},
    )
    pages["already answered"] = respondent.get(f"/s/{slug}")
    pages["research index"] = logged_in.get("/research/")
    pages["dashboard"] = logged_in.get(f"/research/surveys/{slug}")
    for name, response in pages.items():
        page = response.get_data(as_text=True)
        assert response.status_code < 500, name
        assert markup not in page, name
    for name in ("survey", "dashboard"):
        page = pages[name].get_data(as_text=True)
        assert str(escape(f"Question {markup}")) in page, name
        assert str(escape(f"Title {markup}")) in page, name
