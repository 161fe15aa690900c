"""The joint counts kept as responses arrive, so that no analysis ever waits for a scan.

Every analysis across questions (estimates by group, the regression, a public page's
figures) asks ``crosstabs.joint_counts`` for the joint counts of a few plain questions
and at most one sensitive one. Counted from the responses, the first such request reads
every row's JSON: 73 s for a by-group and 117 s for a regression at ten million responses
on PostgreSQL (benchmarks/TEN_MILLION.md), 95% of it parsing JSON text. So, for each
sensitive question, the responses' combinations of *every* plain question's stored value
with that question's stored value are counted in the response's own transaction, like
the tallies: one upsert per sensitive question per response. Any set of plain questions
with that sensitive question is then these counts summed down (``crosstabs._project``),
whatever the number of responses.

What is kept is what the responses table already holds, summed: the plain answers as
given and the sensitive question's randomized report, without ids, days or order. A
response's transaction writes it with the response row, so nothing here is in the
database (or its WAL) that the row is not; a destruction deletes it with the responses.

Not every question gets them. Their rows grow with the combinations that occur, at most
one per response; ``JOINT_CELLS_LIMIT`` bounds what is expected (each plain question's
answers, times the sensitive question's possible reports), so a survey with many
many-valued plain questions does not double its storage for counts no faster to read
than a scan. Those questions are counted from the responses as before.

A question stored before this version (``joint_tallies_complete`` null) has its counts
kept from the upgrade on, but they lack the responses before it; they are read only once
``survey-app recount`` rebuilt them from every response (``rebuild``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from survey_app.domain.answers import Stored
from survey_app.domain.display_logic import NOT_APPLICABLE
from survey_app.privacy.wire import ReportFormat
from survey_app.storage import backends
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.surveys import Question, Survey

# A survey's expected combinations per sensitive question (``expected_cells``) up to which
# its joint counts are kept. A million rows read in about a second here, and hold at most
# a few tens of megabytes. Raising it would make questions whose counts were never kept
# look complete: that needs a migration setting their ``joint_tallies_complete`` to null.
JOINT_CELLS_LIMIT = 1_000_000
# A sensitive number's reports spread beyond its range by the noise: a guess for sizing.
_NUMBER_SPREAD = 4
_KEPT_COUNTS = "SELECT combination, n FROM joint_tallies WHERE survey_id = ? AND question_id = ?"
_ROWS_AFTER = "SELECT id, answers FROM responses WHERE survey_id = ? AND id > ?"

Combination = tuple[Stored, ...]


def expected_cells(survey: Survey, question: Question) -> int:
    """How many combinations of the plain answers with ``question``'s reports can occur,
    as far as the definition says (a skip or a question that did not apply is one more
    value of each)."""
    cells = _values(question) + 1
    for plain in survey.plain_questions:
        cells *= _values(plain) + 1
    return cells


def _values(question: Question) -> int:
    """How many stored values a question's reports take (a number's sensitive reports: a
    guess, since the noise is unbounded)."""
    k = len(question.options)
    if question.type.is_number:
        width = (question.max or 0) - (question.min or 0) + 1
        return width * (_NUMBER_SPREAD if question.sensitive else 1)
    report = question.mechanism.report_format
    if report is ReportFormat.YES_NO:
        return 2
    if report is ReportFormat.OPTION_BIT:
        return 2 * k
    if report.marks_options:
        return 1 << k
    return k


def kept(survey: Survey, question: Question) -> bool:
    """Whether joint counts are kept for ``question`` as responses arrive."""
    return question.sensitive and expected_cells(survey, question) <= JOINT_CELLS_LIMIT


def combination_key(values: Iterable[Stored]) -> str:
    """The stored form of one combination: a JSON list (a value that did not apply counts
    as a skip, None, as in every analysis across questions)."""
    return json.dumps([None if value == NOT_APPLICABLE else value for value in values])


def add_to_joint_tallies(db: Database, survey: Survey, stored: Mapping[str, Stored]) -> None:
    """Add one response (``stored``: each question's value as stored); call inside its
    write transaction."""
    plain = [stored[q.key] for q in survey.plain_questions]
    rows = [
        (survey.id, q.id, combination_key([*plain, stored[q.key]]))
        for q in survey.sensitive_questions
        if kept(survey, q)
    ]
    db.conn.executemany(
        "INSERT INTO joint_tallies (survey_id, question_id, combination, n) VALUES (?, ?, ?, 1) "
        "ON CONFLICT (survey_id, question_id, combination) DO UPDATE SET n = joint_tallies.n + 1",
        rows,
    )


def joint_counts_kept(
    db: Database, survey: Survey, keys: Sequence[str]
) -> dict[Combination, int] | None:
    """The joint counts of ``keys`` (in that order) from the kept counts, or None when
    they are not kept: two sensitive questions among ``keys``, or one without complete
    counts (nor, for plain questions alone, any sensitive question with them)."""
    by_key = {q.key: q for q in survey.questions}
    sensitive = [by_key[key] for key in set(keys) if by_key[key].sensitive]
    if len(sensitive) > 1:
        return None
    candidates = sensitive or list(survey.sensitive_questions)
    source = next((q for q in candidates if _complete(survey, q)), None)
    if source is None:
        return None
    held = [q.key for q in survey.plain_questions] + [source.key]
    where = [held.index(key) for key in keys]
    counts: Counter[Combination] = Counter()
    for combination, n in db.execute(
        _KEPT_COUNTS,
        [survey.id, source.id],
    ):
        values = json.loads(combination)
        counts[tuple(values[i] for i in where)] += n
    return dict(counts)


def _complete(survey: Survey, question: Question) -> bool:
    return question.joint_tallies_complete and kept(survey, question)


def forget(db: Database, survey: Survey) -> None:
    """Drop the survey's kept counts and mark them incomplete, as after an upgrade: for
    responses stored other than by ``record_response`` (a bulk load), which they lack.
    ``rebuild`` makes them whole again; meanwhile they are counted from the responses."""
    with write_transaction(db):
        db.execute("DELETE FROM joint_tallies WHERE survey_id = ?", [survey.id])
        db.execute(
            "UPDATE questions SET joint_tallies_complete = NULL WHERE survey_id = ?", [survey.id]
        )


@dataclass(frozen=True)
class JointRecount:
    """What ``rebuild`` found: per sensitive question key, whether the kept counts equalled
    the responses' (None: they were incomplete, from before they were kept)."""

    matched: dict[str, bool | None]

    @property
    def all_matched(self) -> bool:
        """Whether every question's kept counts were complete and equal."""
        return all(self.matched.values())


def rebuild(db: Database, survey: Survey) -> JointRecount:
    """Rebuild the kept counts from every response and mark them complete.

    The same two steps as ``tallies.recount``, so submissions never wait for the long
    part: every response is read in one ``SELECT`` (one snapshot) on a connection of its
    own, streamed on PostgreSQL so that ten million rows never sit in memory; then, under
    the write lock, the responses stored since are added and the result put in place.
    """
    questions = [q for q in survey.sensitive_questions if kept(survey, q)]
    reader = backends.connect(backends.setting_of(db), streaming=True)
    try:
        counts, last_id = _count(survey, questions, reader.execute(_ROWS_AFTER, [survey.id, 0]))
    finally:
        reader.conn.close()
    with write_transaction(db):
        newer, _ = _count(survey, questions, db.execute(_ROWS_AFTER, [survey.id, last_id]))
        matched = {q.key: _replace(db, survey, q, counts[q.id] + newer[q.id]) for q in questions}
    return JointRecount(matched)


def _count(
    survey: Survey, questions: Sequence[Question], rows: Iterable[tuple[int, str]]
) -> tuple[dict[int, Counter[str]], int]:
    """Each question's counts over ``rows``, and the last id among them (one JSON parse
    per response, whatever the number of questions)."""
    plain = [q.key for q in survey.plain_questions]
    counts: dict[int, Counter[str]] = {q.id: Counter() for q in questions}
    last_id = 0
    for response_id, answers in rows:
        last_id = max(last_id, response_id)
        stored = json.loads(answers)
        values = [stored.get(key) for key in plain]
        for q in questions:
            counts[q.id][combination_key([*values, stored.get(q.key)])] += 1
    return counts, last_id


def _replace(db: Database, survey: Survey, question: Question, counts: Counter[str]) -> bool | None:
    """Put ``counts`` in place of the question's kept counts and mark them complete;
    whether they were equal (None: not complete before, so not compared)."""
    before = dict(
        db.execute(
            _KEPT_COUNTS,
            [survey.id, question.id],
        ).fetchall()
    )
    db.execute(
        "DELETE FROM joint_tallies WHERE survey_id = ? AND question_id = ?",
        [survey.id, question.id],
    )
    db.conn.executemany(
        "INSERT INTO joint_tallies (survey_id, question_id, combination, n) VALUES (?, ?, ?, ?)",
        [(survey.id, question.id, key, n) for key, n in counts.items()],
    )
    db.execute("UPDATE questions SET joint_tallies_complete = 1 WHERE id = ?", [question.id])
    return before == dict(counts) if question.joint_tallies_complete else None
