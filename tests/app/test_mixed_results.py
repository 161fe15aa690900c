"""The researcher's side of every question type: dashboard, exports, codebook, ledger,
planner, and a seeded simulation that the intervals cover the truth at their nominal rate."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.question_estimates import question_estimate
from survey_app.privacy import simulate
from survey_app.storage.tallies import increments
from tests.support.examples import MIXED_SLUG
from tests.support.respondents import mixed_form

# Browser reports (already randomized) from 8 respondents; stress skipped by half.
REPORTS = [
    {
        "year": str(i % 4),
        "cheated": "y" if i < 5 else "n",
        "skipped_meals": "n",
        "substance": str(i % 5),
        "drinks": "1" if i < 6 else "0",
        **({"stress": "y"} if i % 2 else {}),
        "randomized": "client",
    }
    for i in range(8)
]


@pytest.fixture
def answered(mixed_app: Flask) -> Flask:
    for reports in REPORTS:
        client = mixed_app.test_client()
        response = client.post(f"/s/{MIXED_SLUG}", data={**mixed_form(client), **reports})
        assert response.status_code == 200
    return mixed_app


def aggregate(client: FlaskClient) -> list[dict[str, str]]:
    text = client.get(f"/research/surveys/{MIXED_SLUG}/export.csv").get_data(as_text=True)
    return list(csv.DictReader(io.StringIO(text)))


def test_aggregate_csv_has_a_row_per_option_and_a_mean_per_number(
    answered: Flask, logged_in: FlaskClient
) -> None:
    rows = aggregate(logged_in)
    by_question: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_question.setdefault(row["question"], []).append(row)
    assert [r["category"] for r in by_question["year"]] == ["1", "2", "3", "4+"]
    assert [r["reported"] for r in by_question["year"]] == ["2", "2", "2", "2"]
    assert {r["mechanism"] for r in by_question["year"]} == {"none"}
    assert {r["epsilon"] for r in by_question["year"]} == {"0.0"}
    substance = by_question["substance"]
    assert [r["category"] for r in substance] == [
        "None of these",
        "Cannabis",
        "Prescription stimulants",
        "Sleeping pills or sedatives",
        "Something else",
    ]
    assert {r["mechanism"] for r in substance} == {"generalized_randomized_response"}
    # ε rounded up as people are shown it: the float from the parameters is 0.9999999999999998
    assert {r["epsilon"] for r in substance} == {"1.0"}
    for row in substance:  # simultaneous intervals contain the per-option ones
        low, high = float(row["ci_low"]), float(row["ci_high"])
        assert float(row["simultaneous_low"]) <= low < high <= float(row["simultaneous_high"])
    assert sum(float(r["display_estimate"]) for r in substance) == pytest.approx(1, abs=1e-5)
    [drinks] = by_question["drinks"]
    assert drinks["category"] == "mean" and drinks["n"] == "8"
    assert 0 <= float(drinks["ci_low"]) <= float(drinks["estimate"]) <= 50
    [stress] = by_question["stress"]
    assert stress["n"] == "4" and stress["reported"] == "4"  # n per question: skips excluded
    assert json.loads(stress["parameters"])["truth_probability"] == "1/2"
    [cheated] = by_question["cheated"]
    assert cheated["epsilon"] == "0.5"  # the float from the parameters is 0.4999999999999999


def test_estimates_json_and_csv_agree(answered: Flask, logged_in: FlaskClient) -> None:
    data = logged_in.get(f"/research/surveys/{MIXED_SLUG}/estimates.json").get_json()
    rows = aggregate(logged_in)
    assert len(data["rows"]) == len(rows)
    for from_json, from_csv in zip(data["rows"], rows, strict=True):
        assert (from_json["question"], from_json["category"]) == (
            from_csv["question"],
            from_csv["category"],
        )
        if from_json["estimate"] is not None:
            assert f"{from_json['estimate']:.6f}" == from_csv["estimate"]


def test_dashboard_shows_every_type(answered: Flask, logged_in: FlaskClient) -> None:
    page = logged_in.get(f"/research/surveys/{MIXED_SLUG}").get_data(as_text=True)
    assert "<strong>8 responses.</strong>" in page
    assert "Which of these have you used most often" in page and "Every option" in page
    assert re.search(r'plot\.svg\?[^"]*question=substance', page)
    # Mechanisms in words, not identifiers.
    assert "Estimated mean" in page and "Duchi et al.’s one-bit mechanism, ε = 1.00" in page
    assert "duchi_binary" not in page and "duchi binary" not in page
    assert "not randomized (stored as given)" in page
    assert "Smallest ε for 1,000 respondents" in page
    svg = logged_in.get(f"/research/surveys/{MIXED_SLUG}/plot.svg?question=substance")
    assert svg.status_code == 200 and b"<svg" in svg.data
    assert (
        logged_in.get(f"/research/surveys/{MIXED_SLUG}/plot.svg?question=drinks").status_code == 404
    )


def test_planner_answers_both_ways(answered: Flask, logged_in: FlaskClient) -> None:
    """Fair coins, ±5 points, 95%: 1,574 respondents; and 1,574 respondents allow ε = ln 3
    (1.099 to three decimals, rounded up to the next thousandth that suffices)."""
    page = logged_in.get(
        f"/research/surveys/{MIXED_SLUG}?half_width=0.05&respondents=1574"
    ).get_data(as_text=True)
    stress_row = page[page.index("Have you felt overwhelmed", page.index('id="planner"')) :]
    stress_row = stress_row[: stress_row.index("</tr>")]
    assert "<strong>1,574</strong>" in stress_row and ">1.099<" in stress_row


def test_codebook_lists_every_questions_mechanism(answered: Flask, logged_in: FlaskClient) -> None:
    book = logged_in.get(f"/research/surveys/{MIXED_SLUG}/codebook.json?kind=responses").get_json()
    by_key = {q["key"]: q for q in book["questions"]}
    assert set(by_key) == {"year", "cheated", "skipped_meals", "substance", "drinks", "stress"}
    assert by_key["drinks"]["mechanism"] == "duchi_binary"
    assert "unbiased mean" in by_key["drinks"]["encoding"]
    assert by_key["year"]["sensitive"] is False and by_key["year"]["epsilon"] == 0
    # 5 + ln 3 - 0.5 = 5.5986…, rounded up as people are shown it
    assert book["epsilon_per_respondent"] == 5.599
    assert book["columns"] == [
        "survey", "answered_on", "design",
        "year", "cheated", "skipped_meals", "substance", "drinks", "stress",
    ]  # fmt: skip


def test_responses_csv_encodes_each_type(answered: Flask, logged_in: FlaskClient) -> None:
    text = logged_in.get(f"/research/surveys/{MIXED_SLUG}/responses.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(REPORTS)
    assert [row["year"] for row in rows[:4]] == ["1", "2", "3", "4+"]
    assert [row["stress"] for row in rows[:2]] == ["", "1"]
    r = math.tanh(0.5)
    high, low = 25 + 25 / r, 25 - 25 / r  # Duchi's report on the answer's scale
    assert {round(float(row["drinks"]), 6) for row in rows} == {round(high, 6), round(low, 6)}


def test_ledger_command(answered: Flask, runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["ledger", MIXED_SLUG])
    assert result.exit_code == 0
    out = result.output
    assert "cheated: two_coin_randomized_response, ε = 0.50" in out
    assert "substance: generalized_randomized_response, ε = 1.00" in out
    assert "year: none, not randomized" in out
    assert "Total per respondent: ε = 5.599 (limit 6)" in out
    data = json.loads(runner.invoke(args=["ledger", MIXED_SLUG, "--json"]).output)
    assert [q["key"] for q in data["questions"]][:2] == ["year", "cheated"]


# ----------------------------------------------------------------------------------------
# Seeded simulation: the whole estimation path (tallies -> estimates) covers known truths.

SURVEYS = 400
RESPONDENTS = 300


def _cells(question, reports) -> dict[str, int]:  # type: ignore[no-untyped-def]
    cells: dict[str, int] = {}
    for report in reports:
        for cell, amount in increments(question, report):
            cells[cell] = cells.get(cell, 0) + amount
    return cells


def _as_report(question, value):  # type: ignore[no-untyped-def]
    if question.type == "yes_no":
        return bool(value)
    if isinstance(value, np.ndarray):
        return tuple(int(bit) for bit in value)
    return int(value)


@pytest.mark.slow
def test_intervals_cover_known_truths_at_their_nominal_rate(mixed_app: Flask) -> None:
    """400 simulated surveys of 300 respondents per question with fixed true answers.

    Each 95% interval must cover its truth in at least 95% - 5 standard errors of 400
    surveys (≈ 0.95 - 0.054); intervals that do not account for the coins (or a wrong
    p_true/p_false) cover far less, and the exact Clopper-Pearson ones cover at least 0.95
    in expectation. The simultaneous intervals of a choice must all cover at once just as
    often.
    """
    from survey_app.storage.surveys import get_survey
    from survey_app.web.database_session import get_db

    with mixed_app.app_context():
        survey = get_survey(get_db(), MIXED_SLUG)
    assert survey is not None
    rng = np.random.default_rng(20261121)
    truths = {
        "cheated": rng.random(RESPONDENTS) < 0.3,
        "skipped_meals": rng.random(RESPONDENTS) < 0.1,
        "substance": rng.choice(5, RESPONDENTS, p=[0.6, 0.2, 0.1, 0.07, 0.03]),
        "drinks": rng.integers(0, 51, RESPONDENTS) * (rng.random(RESPONDENTS) < 0.5),
        "year": rng.integers(0, 4, RESPONDENTS),
    }
    covered: dict[str, int] = {}
    for _ in range(SURVEYS):
        for question in survey.questions:
            if question.key not in truths:
                continue
            values = truths[question.key]
            reports = simulate(question.mechanism, values, rng)
            cells = _cells(question, (_as_report(question, r) for r in reports))
            result = question_estimate(question, cells, 0.95, "clopper-pearson")
            if question.type == "number":
                mean = float(np.mean(np.asarray(values, dtype=float)))
                hit = result.mean is not None and result.mean.low <= mean <= result.mean.high
                covered[question.key] = covered.get(question.key, 0) + hit
                continue
            shares = (
                [float(np.mean(np.asarray(values, dtype=float)))]
                if question.type == "yes_no"
                else [float(np.mean(np.asarray(values) == j)) for j in range(len(question.options))]
            )
            every = True
            for j, (category, share) in enumerate(zip(result.categories, shares, strict=True)):
                assert category.estimate is not None and category.simultaneous is not None
                label = f"{question.key}[{j}]"
                single = category.estimate.low <= share <= category.estimate.high
                covered[label] = covered.get(label, 0) + single
                every &= category.simultaneous.low <= share <= category.simultaneous.high
            covered[f"{question.key}[all]"] = covered.get(f"{question.key}[all]", 0) + every
    floor = 0.95 - 5 * math.sqrt(0.95 * 0.05 / SURVEYS)
    rates = {label: hits / SURVEYS for label, hits in covered.items()}
    assert min(rates.values()) >= floor, sorted(rates.items(), key=lambda item: item[1])[:5]
