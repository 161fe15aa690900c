"""The per-response data as SPSS (.sav) and Stata (.dta) files, read back with pyreadstat:
the CSV's rows and values, the labels within each format's limits, the design in the
notes, who may download them, and no temporary file left behind."""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pyreadstat
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.definitions import load_definition
from survey_app.domain.labelled_exports import Limit, variable_names
from survey_app.storage.accounts import create_researcher
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey, share_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.researchers import PASSWORD, log_in

SLUG = "labelled"
LONG_TEXT = (
    "지난 한 달 동안 처방 없이 다음 중 어느 것을 가장 자주 사용했습니까? 하나만 고르십시오. "
    "기억나지 않으면 가장 가까운 것을 고르십시오. 이 질문의 답은 저장되기 전에 무작위로 "
    "바뀌므로 누구도 여러분의 실제 답을 알 수 없습니다."
)
LONG_NAME = "substance_used_most_often_in"  # cut to 29, no "_" at the end
REPORT_OPTION = (
    "수면제나 진정제가 아닌 그 밖의 것으로서 이름을 모르거나 기억하지 못하는 약 또는 보조제"
)
LONG_KEY = "substance_used_most_often_in_the_past_month"  # 43 characters: past Stata's 32
SURVEY = f"""\
slug: {SLUG}
title: 학생 생활 조사
languages: [ko]
questions:
  - key: year
    text: 몇 학년입니까?
    type: choice
    options: ["=1학년", "+2학년", "-3학년", "@4학년 이상"]
    sensitive: false
  - key: 2fa
    text: 시험에서 부정행위를 한 적이 있습니까?
    type: yes_no
    epsilon: 2
  - key: in
    text: 이번 학기에 돈이 없어 끼니를 거른 적이 있습니까?
    type: yes_no
    required: false
  - key: {LONG_KEY}
    text: {LONG_TEXT}
    type: choice
    options: ["없음", "대마", "=각성제", "{REPORT_OPTION}"]
    mechanism: grr
    epsilon: 1
  - key: device
    text: 어떤 기기를 가장 많이 씁니까?
    type: choice
    options: ["휴대폰", "노트북", "태블릿"]
    mechanism: oue
    epsilon: 2
  - key: drinks
    text: 지난주 몇 잔 마셨습니까?
    type: number
    min: 0
    max: 20
    mechanism: laplace
    epsilon: 3
  - key: hours
    text: 하루에 몇 시간 잡니까?
    type: number
    min: 0
    max: 12
    mechanism: duchi
    epsilon: 1
  - key: age
    text: 나이가 몇입니까?
    type: number
    min: 17
    max: 40
    sensitive: false
"""
# Reports as the mechanisms store them (the CSV's source): a plain option's index, 1/0,
# a GRR option's index, OUE's bits, Laplace's noisy integer, Duchi's bit, a plain number.
REPORTS: list[dict[str, Any]] = [
    {
        "year": i % 4,
        "2fa": i % 2 == 0,
        "in": None if i % 3 == 0 else i % 2 == 1,
        LONG_KEY: i % 4,
        "device": None if i == 4 else tuple(int(j == i % 3 or j == 2) for j in range(3)),
        "drinks": 25 - 7 * i,  # noise takes a report out of [min, max]
        "hours": i % 2,
        "age": 18 + i,
    }
    for i in range(9)
]
FORMATS = ("sav", "dta")
READERS = {"sav": pyreadstat.read_sav, "dta": pyreadstat.read_dta}


@pytest.fixture
def labelled(app: Flask, researcher: str, tmp_path: Path) -> Flask:
    """The Korean survey, owned by ada, shared with bob, with nine responses; carol is a
    stranger."""
    path = tmp_path / "labelled.yaml"
    path.write_text(SURVEY, encoding="utf-8")
    with app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        store_survey(db, load_definition(path), ada[0], "open")
        survey = get_survey(db, SLUG)
        assert survey is not None
        share_survey(db, survey, create_researcher(db, "bob", PASSWORD).id)
        create_researcher(db, "carol", PASSWORD)
        for i, reports in enumerate(REPORTS):
            record_response(db, survey, reports, f"labelled-{i}")
    return app


def as_user(app: Flask, username: str) -> FlaskClient:
    client = app.test_client()
    assert log_in(client, username).status_code == 302
    return client


def read_back(data: bytes, extension: str, tmp_path: Path) -> tuple[dict[str, list[Any]], Any]:
    """A downloaded file as pyreadstat reads it: the columns by name, and the metadata."""
    path = tmp_path / f"read.{extension}"
    path.write_bytes(data)
    columns, meta = READERS[extension](path, output_format="dict")
    return {name: list(values) for name, values in columns.items()}, meta


def the_csv(client: FlaskClient) -> list[list[str]]:
    text = client.get(f"/research/surveys/{SLUG}/responses.csv").get_data(as_text=True)
    return list(csv.reader(io.StringIO(text)))


def codebook(client: FlaskClient) -> dict[str, dict[str, Any]]:
    book = client.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    return {question["key"]: question for question in book["questions"]}


def missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def same_cell(cell: str, value: Any, levels: list[str] | None) -> bool:
    """A file's value against the CSV's cell: empty is missing; a coded option is the
    option the CSV writes (its ``csv_levels``, the ' before "=" included); a date is its
    ISO text; a number agrees to the CSV's six decimals."""
    if cell == "":
        return missing(value)
    if levels is not None:
        return levels[int(value)] == cell
    if isinstance(value, str):
        return value == cell
    if hasattr(value, "isoformat"):
        return bool(value.isoformat() == cell)
    return abs(float(cell) - float(value)) < 5e-7


@pytest.mark.parametrize("extension", FORMATS)
def test_the_file_holds_the_csvs_rows_and_values(
    labelled: Flask, extension: str, tmp_path: Path
) -> None:
    owner = as_user(labelled, "ada")
    response = owner.get(f"/research/surveys/{SLUG}/responses.{extension}")
    assert response.status_code == 200
    disposition = response.headers["Content-Disposition"]
    assert disposition == f"attachment; filename={SLUG}-responses.{extension}"
    columns, _meta = read_back(response.get_data(), extension, tmp_path)
    header, *rows = the_csv(owner)
    names = variable_names(header)
    assert list(columns) == names
    assert names[3:5] == ["year", "q_2fa"] and "q_in" in names and "device_0" in names
    book = codebook(owner)
    levels = {"year": book["year"]["csv_levels"], LONG_NAME: book[LONG_KEY]["csv_levels"]}
    assert levels["year"][0] == "'=1학년" and levels[LONG_NAME][2] == "'=각성제"
    assert len(rows) == len(REPORTS)
    for column, name in enumerate(names):
        values = columns[name]
        for row, value in zip(rows, values, strict=True):
            assert same_cell(row[column], value, levels.get(name)), (name, row[column], value)


@pytest.mark.parametrize("extension", FORMATS)
def test_the_labels_are_the_surveys_korean_texts(
    labelled: Flask, extension: str, tmp_path: Path
) -> None:
    owner = as_user(labelled, "ada")
    data = owner.get(f"/research/surveys/{SLUG}/responses.{extension}").get_data()
    _columns, meta = read_back(data, extension, tmp_path)
    labels = meta.column_names_to_labels
    assert labels["year"] == "몇 학년입니까?"
    assert labels["device_1"] == "[노트북] 어떤 기기를 가장 많이 씁니까?"
    long_label = labels[LONG_NAME]
    assert (len(LONG_TEXT), len(LONG_TEXT.encode())) == (129, 311)  # past both limits
    if extension == "dta":
        assert long_label == LONG_TEXT[:79] + "…"
    else:
        assert long_label.endswith("…") and long_label[:-1] == LONG_TEXT[: len(long_label) - 1]
        assert 250 < len(long_label.encode()) <= 256
    value_labels = meta.variable_value_labels
    assert value_labels["q_2fa"] == {0: "no", 1: "yes"}
    assert value_labels["year"] == {0: "=1학년", 1: "+2학년", 2: "-3학년", 3: "@4학년 이상"}
    last = value_labels[LONG_NAME][3]
    assert len(REPORT_OPTION.encode()) == 123  # past SPSS's 120
    if extension == "sav":
        assert len(last.encode()) <= 120 and last.endswith("…") and last[:-1] in REPORT_OPTION
    else:
        assert last == REPORT_OPTION
    assert "drinks" not in value_labels and "device_0" not in value_labels
    assert meta.file_label == "Randomized reports (design in the notes): 학생 생활 조사"


@pytest.mark.parametrize("extension", FORMATS)
def test_the_notes_hold_the_design(labelled: Flask, extension: str, tmp_path: Path) -> None:
    """Every question's mechanism, exact parameters, ε and estimator, its full text and
    options; SPSS's lines at most 80 bytes; Stata's count in ``_dta[note0]``, as Stata's
    ``notes`` keeps it (pyreadstat lists only the notes themselves)."""
    owner = as_user(labelled, "ada")
    data = owner.get(f"/research/surveys/{SLUG}/responses.{extension}").get_data()
    _columns, meta = read_back(data, extension, tmp_path)
    if extension == "sav":
        assert max(len(line.encode()) for line in meta.notes) <= 80
    else:
        count = b"_dta".ljust(129, b"\0") + b"note0".ljust(129, b"\0") + b"%d\0</ch>"
        assert count % len(meta.notes) in data and len(meta.notes) == 3 + 8
    notes = " ".join(meta.notes)
    for key, question in codebook(owner).items():
        assert f"question {key} ({question['type']}, {question['mechanism']}" in notes
        assert f"epsilon {question['epsilon']}," in notes
        assert json.dumps(question["parameters"], sort_keys=True) in notes
    assert LONG_TEXT in notes and REPORT_OPTION in notes
    # Two coins at ε = 2: p_false = (1 - tanh 1)/2, p_true - p_false = tanh 1.
    assert "(share of reports of yes (1) - 0.11920292202211" in notes
    assert "/ 0.76159415595576" in notes
    assert "the column's mean is an unbiased estimate of the mean answer" in notes
    assert "at most epsilon" in notes and "stored as given" in notes


def test_a_viewer_downloads_and_a_stranger_finds_nothing(labelled: Flask) -> None:
    viewer, stranger = as_user(labelled, "bob"), as_user(labelled, "carol")
    anonymous = labelled.test_client()
    for extension in FORMATS:
        path = f"/research/surveys/{SLUG}/responses.{extension}"
        assert viewer.get(path).status_code == 200
        assert stranger.get(path).status_code == 404
        assert anonymous.get(path).status_code == 302
        assert stranger.get(f"/research/surveys/no-such/responses.{extension}").status_code == 404


def test_the_dashboard_links_both_files(labelled: Flask) -> None:
    page = as_user(labelled, "bob").get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert f"/research/surveys/{SLUG}/responses.sav" in page
    assert f"/research/surveys/{SLUG}/responses.dta" in page


@pytest.mark.parametrize("extension", FORMATS)
def test_no_temporary_file_is_left_behind(
    labelled: Flask, extension: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not after a download, and not while one is abandoned before its first byte."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    owner = as_user(labelled, "ada")
    path = f"/research/surveys/{SLUG}/responses.{extension}"
    assert owner.get(path).status_code == 200
    abandoned = owner.get(path, buffered=False)
    assert list(scratch.iterdir()) == []
    abandoned.close()
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("extension", FORMATS)
def test_a_survey_without_responses_gives_a_labelled_file_without_rows(
    app: Flask, researcher: str, extension: str, tmp_path: Path
) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(SURVEY.replace(f"slug: {SLUG}", "slug: empty"), encoding="utf-8")
    with app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        store_survey(db, load_definition(path), ada[0], "open")
    response = as_user(app, "ada").get(f"/research/surveys/empty/responses.{extension}")
    columns, meta = read_back(response.get_data(), extension, tmp_path)
    assert list(columns)[:4] == ["survey", "answered_on", "design", "year"]
    assert all(values == [] for values in columns.values())
    assert meta.variable_value_labels["q_2fa"] == {0: "no", 1: "yes"}


@pytest.mark.parametrize("extension", FORMATS)
def test_the_command_writes_the_same_table(
    labelled: Flask, runner: FlaskCliRunner, extension: str, tmp_path: Path
) -> None:
    output = tmp_path / f"out.{extension}"
    result = runner.invoke(args=["export", SLUG, "--format", extension, "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert output.stat().st_mode & 0o777 == 0o600
    from_cli = READERS[extension](output, output_format="dict")
    over_http = as_user(labelled, "ada").get(f"/research/surveys/{SLUG}/responses.{extension}")
    from_http = read_back(over_http.get_data(), extension, tmp_path)
    assert {name: list(values) for name, values in from_cli[0].items()} == from_http[0]
    assert from_cli[1].column_names_to_labels == from_http[1].column_names_to_labels
    refused = runner.invoke(args=["export", SLUG, "--format", extension])
    assert refused.exit_code == 2 and "give -o FILE" in refused.output


def test_names_are_valid_and_distinct_in_spss_and_stata() -> None:
    columns = [
        "survey",
        "2fa",
        "_x",
        "in",
        "str12",
        "device.0",
        "device_0",
        "a" * 64,
        "a" * 40,
    ]
    names = variable_names(columns)
    assert names[:7] == ["survey", "q_2fa", "q_x", "q_in", "q_str12", "device_0", "device_0_2"]
    assert names[7:] == ["a" * 29, "a" * 27 + "_2"]
    assert variable_names(["b" * 28 + "_c"]) == ["b" * 28]  # cut, then no "_" at the end
    assert all(len(name) <= 29 and name[0].isalpha() for name in names)


def test_a_text_is_cut_between_characters_with_an_ellipsis() -> None:
    korean = "가" * 50  # 150 bytes
    assert Limit(120, in_bytes=True).fit(korean) == "가" * 39 + "…"  # 117 + 3 bytes
    assert Limit(80).fit(korean) == korean
    assert Limit(10).fit(korean) == "가" * 9 + "…"
    assert Limit(150, in_bytes=True).fit(korean) == korean
