"""Exports: the aggregate CSV, the randomized per-response CSV, JSON and the codebook.

CSVs are produced as a stream of lines so memory stays flat however many rows; the HTTP
routes and ``survey-app export`` iterate the same generators, so both give the same bytes.
"""

from __future__ import annotations

import csv
import datetime
import io
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import sqlite_utils

from .estimates import QuestionEstimate
from .privacy import MECHANISM_NAME
from .responses import iter_response_rows
from .surveys import Survey

AGGREGATE_COLUMNS = (
    "survey",
    "question",
    "category",
    "question_text",
    "mechanism",
    "epsilon",
    "n",
    "reported",
    "reported_rate",
    "estimate",
    "std_error",
    "ci_low",
    "ci_high",
    "confidence",
)
RESPONSE_COLUMNS = (
    "survey",
    "answered_on",
    "mechanism",
    "truth_probability",
    "forced_yes_probability",
)
ESTIMATOR = "unbiased moment estimator (Warner 1965), clipped to [0, 1] (the MLE)"
INTERVAL_DESCRIPTIONS = {
    "wilson": "Wilson score interval for the reported-yes rate, mapped through "
    "(rate - (1-t)f)/t and clipped to [0, 1]; never zero width",
    "clopper-pearson": "Clopper-Pearson exact interval for the reported-yes rate, mapped "
    "through (rate - (1-t)f)/t and clipped to [0, 1]; never zero width",
}
# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
CHUNK_CHARACTERS = 64 * 1024


def neutralize(text: str) -> str:
    """Survey text as a spreadsheet shows it, never runs it: a leading ' stops formulas."""
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def _decimal(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def csv_chunks(rows: Iterable[Iterable[object]]) -> Iterator[str]:
    """The rows as CSV text (RFC 4180 quoting, ``\\r\\n`` endings) in ~64 KB pieces.

    Pieces rather than lines: a million one-line HTTP chunks cost the server and the
    client far more than the CSV itself, while 64 KB keeps memory flat all the same.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow(row)
        if buffer.tell() >= CHUNK_CHARACTERS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def aggregate_csv(survey: Survey, estimates: Iterable[QuestionEstimate]) -> Iterator[str]:
    """One row per question and category, with DESIGN.md's columns; empty cells for n = 0."""

    def row(item: QuestionEstimate) -> list[object]:
        estimate = item.estimate
        return [
            survey.slug,
            item.question.key,
            "yes",
            neutralize(item.question.text),
            MECHANISM_NAME,
            _decimal(item.question.design.epsilon),
            item.n,
            item.reported_yes,
            _decimal(item.reported_rate),
            _decimal(estimate.point if estimate else None),
            _decimal(estimate.std_error if estimate else None),
            _decimal(estimate.low if estimate else None),
            _decimal(estimate.high if estimate else None),
            f"{estimate.confidence:g}" if estimate else "",
        ]

    return csv_chunks(itertools.chain([AGGREGATE_COLUMNS], map(row, estimates)))


def responses_csv(db: sqlite_utils.Database, survey: Survey) -> Iterator[str]:
    """The randomized per-response CSV: one row a response, a 1/0 column a question.

    Values are reported (randomized) answers, 1 = "yes"; analyse them with the design in
    the mechanism columns, never as true answers.
    """
    header = [*RESPONSE_COLUMNS, *(q.key for q in survey.questions)]
    rows = ([survey.slug, *row] for row in iter_response_rows(db, survey))
    return csv_chunks(itertools.chain([header], rows))


def estimates_json(survey: Survey, estimates: Iterable[QuestionEstimate]) -> dict[str, Any]:
    """The aggregate CSV's numbers as JSON (full float precision, null for no data)."""
    return {
        "survey": survey.slug,
        "title": survey.title,
        "questions": [
            {
                "question": item.question.key,
                "category": "yes",
                "question_text": item.question.text,
                "mechanism": MECHANISM_NAME,
                "epsilon": item.question.design.epsilon,
                "n": item.n,
                "reported": item.reported_yes,
                "reported_rate": item.reported_rate,
                "estimate": item.estimate and item.estimate.point,
                "unclipped_estimate": item.estimate and item.estimate.unclipped,
                "std_error": item.estimate and item.estimate.std_error,
                "ci_low": item.estimate and item.estimate.low,
                "ci_high": item.estimate and item.estimate.high,
                "confidence": item.estimate and item.estimate.confidence,
                "interval_method": item.estimate and item.estimate.method,
            }
            for item in estimates
        ],
    }


def codebook(
    survey: Survey, kind: str, confidence: float, method: str, app_version: str
) -> dict[str, Any]:
    """Provenance for an export: enough to analyse it without this app.

    R's ``rr`` package reads the per-response file with ``design = "forced-known"``,
    ``p`` = truth_probability, ``p1`` = (1-t)f and ``p0`` = (1-t)(1-f).
    """
    design = survey.questions[0].design
    t, f = design.truth_probability, design.forced_yes_probability
    book: dict[str, Any] = {
        "survey": survey.slug,
        "title": survey.title,
        "export": kind,
        "exported_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "app_version": app_version,
        "mechanism": {
            "name": MECHANISM_NAME,
            "truth_probability_t": t,
            "forced_yes_probability_f": f,
            "p_report_yes_given_yes": design.p_yes_given_yes,
            "p_report_yes_given_no": design.p_yes_given_no,
            "epsilon_per_answer": design.epsilon,
            "epsilon_per_respondent": survey.epsilon_total,
            "r_rr_package": {
                "design": "forced-known",
                "p": t,
                "p1": (1 - t) * f,
                "p0": (1 - t) * (1 - f),
            },
        },
        "questions": {q.key: q.text for q in survey.questions},
    }
    if kind == "aggregate":
        book["estimator"] = ESTIMATOR
        book["interval_method"] = method
        book["interval"] = INTERVAL_DESCRIPTIONS[method]
        book["confidence"] = confidence
        book["columns"] = list(AGGREGATE_COLUMNS)
    else:
        book["columns"] = [*RESPONSE_COLUMNS, *(q.key for q in survey.questions)]
        book["values"] = "1 = reported yes, 0 = reported no; randomized, not true answers"
    return book
