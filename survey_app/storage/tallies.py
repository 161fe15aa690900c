"""The running tallies: per question, the counts and sums every estimate is made from.

A tally cell is a (question, name) pair holding an integer. Which cells a question has,
and what each adds up, its mechanism says (``tally_cells``): ``n`` counts the question's
answered responses (skips excluded); ``yes`` counts reported "yes"; a choice question
has one cell per option index (for unary encoding: per bit set; for a set of options:
per member); a number question has ``sum`` and ``sum_squares`` of its reports. They
change in the same transaction as each response, so estimates never scan the responses;
``recount`` rebuilds them from the responses to check that, in SQL written here from
each cell's rule.

A question with a condition (``show_if``) has one more cell, ``not_applicable``: the
responses it did not apply to, stored as ``display_logic.NOT_APPLICABLE``. They are no
answers: no mechanism's cell counts them (``n`` excludes them, as it excludes skips).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from survey_app.domain.answers import Report, to_stored
from survey_app.domain.display_logic import NOT_APPLICABLE
from survey_app.privacy.mechanisms.cells import CellRule, TallyCell
from survey_app.storage import backends
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.surveys import Question, Survey

Cells = dict[str, int]
#: The cell counting the responses a conditioned question did not apply to.
NOT_APPLICABLE_CELL = "not_applicable"


def increments(question: Question, report: Report | None) -> Iterator[tuple[str, int]]:
    """The cells one report adds to; nothing for a skipped question."""
    stored = to_stored(question, report)
    if stored is None:
        return
    for cell in question.mechanism.tally_cells():
        amount = cell.amount(stored)
        if amount or not cell.counts_matches:
            yield cell.name, amount


def add_to_tallies(
    db: Database,
    survey: Survey,
    reports: dict[str, Report | None],
    not_applicable: frozenset[str] = frozenset(),
) -> None:
    """Add one response; call inside its write transaction. ``not_applicable``: the
    questions it did not apply to (their reports are None)."""
    rows = [
        (question.id, cell, amount)
        for question in survey.questions
        for cell, amount in increments(question, reports[question.key])
    ]
    rows += [(q.id, NOT_APPLICABLE_CELL, 1) for q in survey.questions if q.key in not_applicable]
    db.conn.executemany(
        "INSERT INTO tallies (question_id, cell, value) VALUES (?, ?, ?) "
        "ON CONFLICT (question_id, cell) DO UPDATE SET value = tallies.value + excluded.value",
        rows,
    )


def read_tallies(db: Database, survey: Survey) -> dict[int, Cells]:
    """Every question's cells (a missing cell is 0)."""
    tallies: dict[int, Cells] = {question.id: {} for question in survey.questions}
    for question_id, cell, value in db.execute(
        "SELECT t.question_id, t.cell, t.value FROM tallies t JOIN questions q "
        "ON q.id = t.question_id WHERE q.survey_id = ?",
        [survey.id],
    ):
        tallies[question_id][cell] = value
    return tallies


def _cell_sums(question: Question, squares: str = "sum") -> list[tuple[str, str]]:
    """(cell, SQL aggregate over the stored answers) for recounting one question.

    The SQL reads the question's answer through slots (``_ANSWER_SLOT``) that
    ``backends.AnswerSql`` fills: ``{text}`` and ``{number}`` read a question that did not
    apply as null (no answer, like a skip); a conditioned question counts those in
    ``NOT_APPLICABLE_CELL``, from the value as ``{stored}``. ``squares`` sums the squares
    of numbers: ``sum`` exactly, in 64-bit integers. Written in SQL both backends run.
    """
    answers = [(cell.name, _aggregate(cell, squares)) for cell in question.mechanism.tally_cells()]
    if question.show_if is None:
        return answers
    return [*answers, (NOT_APPLICABLE_CELL, _count_where(f"{{stored}} = '{NOT_APPLICABLE}'"))]


def _aggregate(cell: TallyCell, squares: str) -> str:
    """The SQL that adds up ``cell`` over the stored answers, as ``cell.amount`` adds one."""
    if cell.rule is CellRule.COUNT:
        return "count({text})"
    if cell.rule is CellRule.SUM:
        return "sum({number})"
    if cell.rule is CellRule.SUM_SQUARES:
        return f"{squares}({{number}} * {{number}})"
    if cell.rule is CellRule.BIT:
        return _count_where(f"substr({{text}}, {cell.index + 1}, 1) = '1'")
    if cell.rule is CellRule.MEMBER:
        # A set is stored as "0,3,11": commas on both sides of the index and of the set,
        # or option 1 would be found in "11" and option 3 in "13".
        return _count_where(f"',' || {{text}} || ',' LIKE '%,{cell.index},%'")
    return _count_where(f"{{number}} = {cell.index}")


def _count_where(condition: str) -> str:
    """How many rows meet ``condition`` (PostgreSQL sums no booleans, as SQLite does)."""
    return f"count(CASE WHEN {condition} THEN 1 END)"


def _count_answers(db: Database, survey: Survey, after_id: int) -> tuple[int, dict[int, Cells]]:
    """Every question's cells over responses with id > after_id, and the last id seen.

    One pass: JSON is parsed in the database, not row by row in Python. Squares are summed
    as exact integers; only where their sum passes 2^63 (SQLite's "integer overflow") is
    the pass made again with total(), in floats, as SQLite's running tally turns REAL there
    too. (PostgreSQL sums 64-bit integers exactly as ``numeric``: no retry there.)
    """
    try:
        return _count_answers_with(db, survey, after_id, squares="sum")
    except sqlite3.OperationalError as err:
        if "integer overflow" not in str(err):
            raise
        return _count_answers_with(db, survey, after_id, squares="total")


_ANSWER_SLOT = re.compile(r"\{(stored|text|number)\}")


def _count_answers_with(
    db: Database, survey: Survey, after_id: int, squares: str
) -> tuple[int, dict[int, Cells]]:
    plan = [(q, cell, expr) for q in survey.questions for cell, expr in _cell_sums(q, squares)]
    answers = backends.answer_sql(db)
    params: list[object] = [after_id]

    def read(question: Question, expr: str) -> str:
        def slot(match: re.Match[str]) -> str:
            params.append(answers.parameter(question.key))
            return str(getattr(answers, match[1]))

        return _ANSWER_SLOT.sub(slot, expr)

    columns = ", ".join(f"coalesce({read(question, expr)}, 0)" for question, _, expr in plan)
    row = db.execute(
        f"SELECT coalesce(max(id), ?), {columns} FROM responses "  # noqa: S608 (placeholders only)
        "WHERE survey_id = ? AND id > ?",
        [*params, survey.id, after_id],
    ).fetchone()
    counts: dict[int, Cells] = {question.id: {} for question in survey.questions}
    for (question, cell, _expr), value in zip(plan, row[1:], strict=True):
        if value:
            # A float only where total() passed what a 64-bit integer holds.
            counts[question.id][cell] = int(value) if abs(value) < 2**63 else value
    return int(row[0]), counts


@dataclass(frozen=True)
class Recount:
    """The tallies as stored and as rebuilt from the responses, per question key."""

    before: dict[str, Cells]
    after: dict[str, Cells]

    @property
    def matched(self) -> bool:
        return self.before == self.after

    def differences(self) -> Iterable[tuple[str, Cells, Cells]]:
        return ((k, self.before[k], v) for k, v in self.after.items() if self.before[k] != v)


def recount(db: Database, survey: Survey) -> Recount:
    """Rebuild the tallies from the stored responses without stopping submissions.

    The long scan reads a snapshot and holds no write lock (a million rows take seconds,
    longer than a submission waits for the lock). The write transaction then adds only
    the responses that arrived since the snapshot, compares and stores: short, and exact.
    """
    db.execute("BEGIN")  # deferred: a consistent read snapshot, no write lock
    try:
        last_id, scanned = _count_answers(db, survey, after_id=0)
    finally:
        db.execute("COMMIT")
    with write_transaction(db):
        _, newer = _count_answers(db, survey, after_id=last_id)
        before = read_tallies(db, survey)
        after = {qid: _added(cells, newer[qid]) for qid, cells in scanned.items()}
        db.execute(
            "DELETE FROM tallies WHERE question_id IN "
            "(SELECT id FROM questions WHERE survey_id = ?)",
            [survey.id],
        )
        db.conn.executemany(
            "INSERT INTO tallies (question_id, cell, value) VALUES (?, ?, ?)",
            [(qid, cell, value) for qid, cells in after.items() for cell, value in cells.items()],
        )
    keys = {q.id: q.key for q in survey.questions}
    return Recount(
        before={keys[qid]: _nonzero(cells) for qid, cells in before.items()},
        after={keys[qid]: cells for qid, cells in after.items()},
    )


def _added(first: Cells, second: Cells) -> Cells:
    return {cell: first.get(cell, 0) + second.get(cell, 0) for cell in {*first, *second}}


def _nonzero(cells: Cells) -> Cells:
    return {cell: value for cell, value in cells.items() if value}
