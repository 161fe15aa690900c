"""Exports: the aggregate CSV, the randomized per-response CSV, JSON and the codebook.

CSVs are produced as a stream of lines so memory stays flat however many rows; the HTTP
routes and ``survey-app export`` iterate the same generators, so both give the same bytes.
The aggregate rows are built once, as mappings keyed by column name, and the CSV and the
JSON both read them: a new column is one edit.
"""

from __future__ import annotations

import csv
import datetime
import io
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any

from survey_app.domain.display_logic import NOT_APPLICABLE, population
from survey_app.domain.question_estimates import CategoryEstimate, QuestionEstimate
from survey_app.domain.question_privacy import shown_epsilon, survey_ledger
from survey_app.privacy import MeanEstimate
from survey_app.storage.backends import Database
from survey_app.storage.responses import iter_response_rows
from survey_app.storage.surveys import Question, Survey

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
    "simultaneous_low",
    "simultaneous_high",
    "display_estimate",
    "parameters",
)
#: Added after ``AGGREGATE_COLUMNS`` for a survey with display logic (``show_if``): the
#: responses a question did not apply to, outside its n, and whom its estimate describes.
#: Only then, so a survey without conditions keeps its file's shape.
CONDITION_COLUMNS = ("not_applicable", "population")
RESPONSE_COLUMNS = ("survey", "answered_on", "design")
ESTIMATOR = (
    "shares: unbiased moment estimator (count/n - p_false)/(p_true - p_false), clipped to "
    "[0, 1]; numbers: mean of the reports mapped to the answer's scale, clipped to [min, max]; "
    "tick all that apply: each option's share by the same estimator among the n reports "
    "about that option (its row's n), with reported = those saying ticked"
)
INTERVAL_DESCRIPTIONS = {
    "wilson": "Wilson score interval for the reported rate, mapped through "
    "(rate - p_false)/(p_true - p_false) and clipped to [0, 1]; never zero width",
    "clopper-pearson": "Clopper-Pearson exact interval for the reported rate, mapped "
    "through (rate - p_false)/(p_true - p_false) and clipped to [0, 1]; never zero width",
}
MEAN_INTERVAL = (
    "Student t interval from the reports' sample variance (discrete_laplace, plain numbers); "
    "Clopper-Pearson on the count of 1s, mapped to the answer's scale (duchi_binary)"
)
MEAN_SCORE = (
    "a scale's row with category mean: the mean score sum(s_i * estimate_i) over its options "
    "(scores in the codebook's questions), unbiased; std_error from the covariance of the "
    "option estimates, s' Cov s, at the shares projected onto the simplex; interval_method "
    "score: every mean m within the scores' range with |estimate - m| - h <= t(n-1) * SE(m), "
    "SE(m) at the shares moved towards the end score on m's side until their mean is m, h "
    "half the estimate's step (continuity correction)"
)
SIMULTANEOUS = (
    "simultaneous_low/high: each option's interval at level 1 - (1 - confidence)/k, so with "
    "the stated confidence every option of a choice question is within its bounds at once"
)
DISPLAY = (
    "display_estimate: the choice estimates projected onto the simplex by norm-sub "
    "(one common amount subtracted from the positive estimates, negatives set to 0, summing "
    "to 1); for display only, the unbiased values are in estimate; a tick-all question's "
    "shares need not sum to 1: its display_estimate is the clipped estimate"
)
# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Spreadsheets set to a locale whose decimal mark is a comma (German, French, ...) split a
# CSV line at ";" as well as at ",", and Python's csv module quotes a cell for "," but
# not for ";": opened there, "a;=cmd|..." becomes two cells, the second a formula. So
# each piece after a ";" is guarded as if it began a cell (OWASP's CSV injection advice:
# mind the separators, not only a cell's first character). Read that way, a quoted
# cell's line break ends the row too (the quote does not open a cell there), so the piece
# after a "\r" or "\n" begins a cell as well.
CELL_STARTS = re.compile(r"(;|\r\n|\r|\n)")
CHUNK_CHARACTERS = 64 * 1024


def neutralize(text: str) -> str:
    """Survey text as a spreadsheet shows it, never runs it: a leading ' stops formulas,
    at the start of the cell and after every ";" or line break (``CELL_STARTS``)."""
    pieces = CELL_STARTS.split(text)  # text, separator, text, …
    return "".join(
        "'" + piece if index % 2 == 0 and piece.startswith(FORMULA_PREFIXES) else piece
        for index, piece in enumerate(pieces)
    )


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


def aggregate_rows(
    survey: Survey, estimates: Iterable[QuestionEstimate]
) -> Iterator[dict[str, Any]]:
    """One mapping per question and category (an option, "yes", or "mean"), full precision;
    None where a question has no responses yet."""
    ledger = survey_ledger(survey)
    options = {question.key: question.options for question in survey.questions}
    for item in estimates:
        question = item.question
        condition = question.show_if
        common = {
            "survey": survey.slug,
            "question": question.key,
            "question_text": question.text,
            "mechanism": question.mechanism.name,
            "epsilon": _epsilon_at_most(ledger.entry(question.key).epsilon_bound),
            "n": item.n,
            "parameters": question.mechanism.parameters(),
            # Display logic: who n counts, and the responses left out as not applicable.
            "not_applicable": item.not_applicable,
            "population": (
                "all respondents"
                if condition is None
                else population(condition, options[condition.question])
            ),
        }
        for category in item.categories:
            # Tick all that apply: an option's n is the reports about it (n_j).
            about = {} if category.about is None else {"n": category.about}
            yield {**common, **about, **_share_row(item, category)}
        if question.type.estimates_mean or question.type.has_scores:
            yield {**common, **_mean_row(item.mean)}


def _mean_row(mean: MeanEstimate | None) -> dict[str, Any]:
    """A number's mean answer, or a scale's mean score after its options' rows."""
    return {
        "category": "mean",
        "reported": None,
        "reported_rate": None,
        **_interval(mean),
        "simultaneous_low": None,
        "simultaneous_high": None,
        "display_estimate": mean and mean.point,
    }


def _share_row(item: QuestionEstimate, category: CategoryEstimate) -> dict[str, Any]:
    joint = category.simultaneous
    return {
        "category": category.category,
        "reported": category.reported,
        "reported_rate": item.reported_rate(category),
        **_interval(category.estimate),
        "simultaneous_low": joint and joint.low,
        "simultaneous_high": joint and joint.high,
        "display_estimate": category.display,
    }


def _interval(estimate: Any) -> dict[str, Any]:
    """The point, standard error and interval of an Estimate or a MeanEstimate."""
    return {
        "estimate": estimate and estimate.point,
        "unclipped_estimate": estimate and estimate.unclipped,
        "std_error": estimate and estimate.std_error,
        "ci_low": estimate and estimate.low,
        "ci_high": estimate and estimate.high,
        "confidence": estimate and estimate.confidence,
        "interval_method": estimate and getattr(estimate, "method", "t"),
    }


def _csv_cell(column: str, value: Any) -> object:
    if value is None:
        return ""
    if column in {"question_text", "category", "population"}:
        return neutralize(str(value))
    if column == "parameters":
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    if column == "confidence":
        return f"{value:g}"
    if column == "epsilon" and value is not None:
        return repr(value)  # the 3 decimals people are shown ("1.099"), no padding
    if isinstance(value, float):
        return _decimal(value)
    return value


def aggregate_csv(survey: Survey, estimates: Iterable[QuestionEstimate]) -> Iterator[str]:
    """The aggregate rows as CSV with ``aggregate_columns``; empty cells where n = 0."""
    columns = aggregate_columns(survey)
    rows = (
        [_csv_cell(column, row[column]) for column in columns]
        for row in aggregate_rows(survey, estimates)
    )
    return csv_chunks(itertools.chain([columns], rows))


def aggregate_columns(survey: Survey) -> tuple[str, ...]:
    """The aggregate CSV's header: ``CONDITION_COLUMNS`` too when a question has a
    condition."""
    conditioned = any(question.show_if is not None for question in survey.questions)
    return AGGREGATE_COLUMNS + CONDITION_COLUMNS if conditioned else AGGREGATE_COLUMNS


def estimates_json(survey: Survey, estimates: Iterable[QuestionEstimate]) -> dict[str, Any]:
    """The aggregate rows as JSON (full float precision, null for no data)."""
    return {
        "survey": survey.slug,
        "title": survey.title,
        "rows": list(aggregate_rows(survey, estimates)),
    }


def response_columns(survey: Survey) -> list[str]:
    """The per-response CSV's header: the columns each question's mechanism writes (one,
    or one per option for unary encoding: ``key.index``)."""
    columns = list(RESPONSE_COLUMNS)
    for question in survey.questions:
        columns += question.mechanism.export_columns(question.key)
    return columns


def _response_cells(question: Question) -> Callable[[Any], list[object]]:
    """How one question's stored value becomes its cells in the per-response CSV: as its
    mechanism writes them, empty for a skip, ``NOT_APPLICABLE`` ("n/a") in each for a
    question that did not apply; text guarded against formulas, floats at six decimals."""
    mechanism, options = question.mechanism, question.options
    width = len(mechanism.export_columns(question.key))
    skipped: list[object] = [""] * width
    left_out: list[object] = [NOT_APPLICABLE] * width

    def cells(value: Any) -> list[object]:
        if value is None:
            return skipped
        if value == NOT_APPLICABLE:
            return left_out
        return [_cell(c) for c in mechanism.export_cells(value, options)]

    return cells


def _cell(value: object) -> object:
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, float):
        return _decimal(value)
    return value


def responses_csv(db: Database, survey: Survey) -> Iterator[str]:
    """The randomized per-response CSV: one row a response; the codebook says how each
    question's column is encoded. Values are reports, never true answers."""
    encoders = [_response_cells(q) for q in survey.questions]

    def cells(row: list[Any]) -> list[object]:
        answered_on, design, *values = row
        out: list[object] = [survey.slug, answered_on, design]
        for encode, value in zip(encoders, values, strict=True):
            out += encode(value)
        return out

    rows = map(cells, iter_response_rows(db, survey))
    return csv_chunks(itertools.chain([response_columns(survey)], rows))


# Names R's read.csv cannot keep as they are (make.names appends a dot to them).
R_RESERVED = frozenset({"if", "else", "repeat", "while", "function", "for", "next", "break", "in"})


def r_name(column: str) -> str:
    """A column's name once R's ``read.csv`` has read it (``make.names``): an "X" before a
    name that starts with a digit or "_", a dot after a reserved word. Keys are
    ``[a-z0-9_]+``, so nothing else changes."""
    name = "X" + column if column[:1].isdigit() or column.startswith("_") else column
    return name + "." if name in R_RESERVED else name


def reports_one_option(question: Question) -> bool:
    """Whether the question's one per-response column holds the reported option (k-ary
    randomized response, a plain choice), rather than a bit per option (unary encoding)
    or no option at all."""
    columns = question.mechanism.export_columns(question.key)
    return question.type.has_options and columns == [question.key]


def rrreg_design(question: Question, rr: dict[str, Any]) -> dict[str, Any]:
    """R ``RRreg``'s forced-response design (``model = "FR"``) for the 0/1 outcome of
    ``rr`` (``r_rr_package``: rr's ``p0``, forced "no", and ``p1``, forced "yes").

    RRreg's FR takes the chance of being told to answer each code 0, 1, … whatever the
    truth, in the order of the codes (RRreg 0.7.6, R/RRlin_getPW.R, the "FR" case:
    P(respond i | true j) = p[i] for i ≠ j, 1 - sum(p[-i]) for i = j): for a 0/1
    outcome, p = c(p0, p1). A choice whose column is the reported option also gets
    ``p_options``: its share mechanism reports each other option with the same chance,
    p_false (rr's ``p1``), so every option's forced probability is that one, and
    ``RRuni(model = "FR", p = p_options)`` estimates every option's share at once from
    the reported option's index (0 for the first; the .sav and .dta codes).
    """
    design: dict[str, Any] = {"model": "FR", "p": [rr["p0"], rr["p1"]]}
    if reports_one_option(question):
        design["p_options"] = [rr["p1"]] * len(question.options)
    return design


def _epsilon_at_most(bound: Fraction) -> float:
    """An ε for an export: the 3-decimal figure people are shown, rounded up. A float
    computed from the parameters can sit just below the truth (1.0 printed as
    0.9999999999999998); the float of a 3-decimal number prints as those decimals."""
    return float(shown_epsilon(bound))


def codebook(
    survey: Survey, kind: str, confidence: float, method: str, app_version: str
) -> dict[str, Any]:
    """Provenance for an export: enough to analyse it without this app.

    Every question's mechanism with its exact parameters and ε (the ledger): ``epsilon``
    is the decimal people are shown, rounded up (likewise the per-respondent total); the
    exact parameters are there for anyone who needs more digits. For a sensitive yes/no
    question or choice option, ``r_rr_package`` gives R's ``rr`` forced-response
    parameters (each mechanism's ``r_rr_design``) and ``r_rrreg_package`` RRreg's
    (``rrreg_design``); per-response codebooks name each question's columns as R's
    ``read.csv`` will (``r_columns``). ``csv_levels`` are a choice's options exactly as
    the CSVs write them (``neutralize``): what ``factor(levels = …)`` must be given.
    """
    ledger = survey_ledger(survey)
    questions = []
    for question, entry in zip(survey.questions, ledger, strict=True):
        described: dict[str, Any] = {
            "key": entry.key,
            "text": entry.text,
            "type": entry.type,
            "sensitive": entry.sensitive,
            "required": question.required,
            "mechanism": entry.mechanism,
            "parameters": entry.parameters,
            "epsilon": _epsilon_at_most(entry.epsilon_bound),
            "how": entry.how,
        }
        if question.type.has_options:
            described["options"] = list(question.options)
            described["csv_levels"] = [neutralize(option) for option in question.options]
        if question.type.has_scores:
            described["scores"] = list(question.scores)
        if question.type.has_range:
            described["min"], described["max"] = question.min, question.max
        if question.show_if is not None:
            described["show_if"] = question.show_if.written()
            plain = next(q for q in survey.questions if q.key == question.show_if.question)
            described["population"] = population(question.show_if, plain.options)
        rr = question.mechanism.r_rr_design(r_name(question.key))
        if rr is not None:
            described["r_rr_package"] = rr
            described["r_rrreg_package"] = rrreg_design(question, rr)
        if kind == "responses":
            mechanism = question.mechanism
            described["encoding"] = mechanism.export_encoding(question.key, question.options)
            columns = mechanism.export_columns(question.key)
            described["r_columns"] = [r_name(column) for column in columns]
        questions.append(described)
    book: dict[str, Any] = {
        "survey": survey.slug,
        "title": survey.title,
        "export": kind,
        "exported_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "app_version": app_version,
        "design": survey.design,
        "epsilon_per_respondent": _epsilon_at_most(ledger.epsilon_bound),
        "composition": "basic: the per-respondent ε is the sum of the questions' ε",
        "questions": questions,
    }
    if kind == "aggregate":
        book["estimator"] = ESTIMATOR
        book["interval_method"] = method
        book["interval"] = INTERVAL_DESCRIPTIONS[method]
        book["mean_interval"] = MEAN_INTERVAL
        if any(question.type.has_scores for question in survey.questions):
            book["mean_score"] = MEAN_SCORE
        book["simultaneous"] = SIMULTANEOUS
        book["display_estimate"] = DISPLAY
        book["confidence"] = confidence
        book["columns"] = list(aggregate_columns(survey))
    else:
        book["columns"] = response_columns(survey)
        book["values"] = (
            "randomized reports, not true answers; empty = question skipped; "
            f"{NOT_APPLICABLE} = not applicable (the question's show_if condition on a plain "
            "answer did not hold, so it was not asked)"
        )
    return book
