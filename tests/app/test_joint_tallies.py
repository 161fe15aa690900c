"""The joint counts kept as responses arrive (``joint_tallies``): exact against the rows
for every set of questions an analysis asks for, on every question type, with skips and
questions that did not apply; left to the scan where they are not kept or not complete;
rebuilt by ``recount`` after an upgrade, with responses arriving meanwhile; gone with the
answers."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner

from survey_app.domain.definitions import parse_definition
from survey_app.domain.display_logic import NOT_APPLICABLE, not_applicable
from survey_app.storage import crosstabs, joint_tallies
from survey_app.storage.backends import Database
from survey_app.storage.destruction import destroy_expired
from survey_app.storage.joint_tallies import joint_counts_kept, rebuild
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.every_type import EVERY_TYPE, reports, stored_answers
from tests.support.paths import ROOT

PLACEMENTS = ROOT / "examples" / "clinical-placements.yaml"


def true_answers(survey: Survey, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Any valid true answers, ``n`` of each question (the counts, not the truths, are
    what this module checks)."""
    truths: dict[str, np.ndarray] = {}
    for q in survey.questions:
        if q.type.is_yes_no:
            truths[q.key] = rng.random(n) < 0.3
        elif q.type.is_number:
            truths[q.key] = rng.integers(q.min or 0, (q.max or 0) + 1, n)
        elif q.type.is_multiple:
            truths[q.key] = (rng.random((n, len(q.options))) < 0.3).astype(int)
        else:
            truths[q.key] = rng.integers(0, len(q.options), n)
    return truths


def answer(db: Database, survey: Survey, n: int, seed: int, start: int = 0) -> None:
    """``n`` responses through ``record_response``, as the app stores them: randomized by
    each question's mechanism, a few optional questions skipped, and each question whose
    condition failed stored as not applicable."""
    rng = np.random.default_rng(seed)
    stored = stored_answers(survey, true_answers(survey, n, rng), rng)
    for i, reported in enumerate(reports(survey, stored)):
        hidden = not_applicable(survey.questions, reported)
        for q in survey.questions:
            if q.key in hidden or (not q.required and rng.random() < 0.1):
                reported[q.key] = None
        record_response(db, survey, reported, f"s-{start + i}", not_applicable=hidden)


def from_rows(db: Database, survey: Survey, keys: tuple[str, ...]) -> Counter[tuple]:
    """The same counts the slow way: every row's JSON read in Python (not applicable and
    absent read as a skip)."""
    rows = db.execute("SELECT answers FROM responses WHERE survey_id = ?", [survey.id])
    combinations: Counter[tuple] = Counter()
    for (answers,) in rows:
        values = json.loads(answers)
        combinations[tuple(_skip(values.get(key)) for key in keys)] += 1
    return combinations


def _skip(value: object) -> object:
    return None if value == NOT_APPLICABLE else value


def asked_sets(survey: Survey) -> Iterator[tuple[str, ...]]:
    """Every kind of set a caller asks for: each question alone, each plain question with
    each sensitive one (by group), and all plain ones with each sensitive one in caller
    order (the regression), reversed too."""
    plain = [q.key for q in survey.questions if not q.sensitive]
    for q in survey.questions:
        yield (q.key,)
    for s in survey.sensitive_questions:
        for p in plain:
            yield (p, s.key)
        yield (*plain, s.key)
        yield (s.key, *reversed(plain))


@pytest.fixture
def every_type(app: Flask) -> Iterator[tuple[Database, Survey]]:
    with app.app_context():
        db = get_db()
        yield db, store_survey(db, parse_definition(EVERY_TYPE.read_text()))


def test_kept_counts_equal_the_rows_for_every_set_an_analysis_asks(
    every_type: tuple[Database, Survey],
) -> None:
    db, survey = every_type
    answer(db, survey, 300, seed=1)
    assert all(joint_tallies.kept(survey, q) for q in survey.sensitive_questions)
    for keys in asked_sets(survey):
        kept = joint_counts_kept(db, survey, keys)
        assert kept == from_rows(db, survey, keys), keys
        assert crosstabs.joint_counts(db, survey, keys) == kept


def test_questions_that_did_not_apply_count_as_skips(app: Flask) -> None:
    with app.app_context():
        db = get_db()
        survey = store_survey(db, parse_definition(PLACEMENTS.read_text()))
        answer(db, survey, 200, seed=2)
        harassed = from_rows(db, survey, ("year", "harassed"))
        assert any(year in (0, 1) for year, _ in harassed)  # some did not apply
        assert all(report is None for year, report in harassed if year in (0, 1))
        for keys in asked_sets(survey):
            assert joint_counts_kept(db, survey, keys) == from_rows(db, survey, keys), keys


def test_two_sensitive_questions_are_counted_from_the_responses(
    every_type: tuple[Database, Survey],
) -> None:
    db, survey = every_type
    answer(db, survey, 50, seed=3)
    keys = ("cheated", "substance")
    assert joint_counts_kept(db, survey, keys) is None
    assert crosstabs.joint_counts(db, survey, keys) == from_rows(db, survey, keys)


def test_too_many_plain_combinations_keep_nothing_and_scan_instead(app: Flask) -> None:
    """A plain number with a million values: counts kept for it would be as many rows as
    responses, so none are, and the analyses count from the responses."""
    definition = EVERY_TYPE.read_text().replace(
        "questions:\n",
        "questions:\n  - key: income\n    text: Income?\n    type: number\n"
        "    min: 0\n    max: 1000000\n    sensitive: false\n",
        1,
    )
    with app.app_context():
        db = get_db()
        survey = store_survey(db, parse_definition(definition))
        assert not any(joint_tallies.kept(survey, q) for q in survey.questions)
        answer(db, survey, 40, seed=4)
        assert db.execute("SELECT count(*) FROM joint_tallies").fetchone()[0] == 0
        keys = ("income", "year", "cheated")
        assert joint_counts_kept(db, survey, keys) is None
        assert crosstabs.joint_counts(db, survey, keys) == from_rows(db, survey, keys)


def upgraded(db: Database, survey: Survey) -> Survey:
    """The survey as migration 19 leaves one that had responses: its questions' counts
    kept from then on, but incomplete (here: those before it forgotten)."""
    joint_tallies.forget(db, survey)
    again = get_survey(db, survey.slug)
    assert again is not None
    return again


def test_counts_from_before_an_upgrade_are_read_once_recount_rebuilt_them(
    every_type: tuple[Database, Survey],
) -> None:
    db, survey = every_type
    answer(db, survey, 60, seed=5)
    survey = upgraded(db, survey)
    answer(db, survey, 30, seed=6, start=60)  # kept from the upgrade on: 30 of 90
    asked = ("year", "satisfied", "cheated")
    assert joint_counts_kept(db, survey, asked) is None
    assert crosstabs.joint_counts(db, survey, asked) == from_rows(db, survey, asked)
    result = rebuild(db, survey)
    assert set(result.matched.values()) == {None}  # incomplete: rebuilt, not compared
    survey = get_survey(db, survey.slug)  # type: ignore[assignment]
    for keys in asked_sets(survey):
        assert joint_counts_kept(db, survey, keys) == from_rows(db, survey, keys), keys
    assert rebuild(db, survey).all_matched


def test_recount_notices_a_wrong_joint_count_and_repairs_it(
    every_type: tuple[Database, Survey], app: Flask, runner: FlaskCliRunner
) -> None:
    db, survey = every_type
    answer(db, survey, 40, seed=7)
    assert "Counters matched" in runner.invoke(args=["recount", survey.slug]).output
    db.execute(
        "UPDATE joint_tallies SET n = n + 1 WHERE question_id = ? AND combination = "
        "(SELECT min(combination) FROM joint_tallies WHERE question_id = ?)",
        [survey.questions[1].id, survey.questions[1].id],
    )
    output = runner.invoke(args=["recount", survey.slug]).output
    assert "cheated: joint counts did not match" in output
    assert "did not match; they now equal the recount" in output
    assert "Counters matched" in runner.invoke(args=["recount", survey.slug]).output


def test_a_rebuild_counts_the_responses_stored_during_its_scan(
    every_type: tuple[Database, Survey], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan holds no write lock, so answers keep arriving; the catch-up under the
    lock adds them, and none is counted twice."""
    db, survey = every_type
    answer(db, survey, 40, seed=8)
    survey = upgraded(db, survey)
    real_count = joint_tallies._count
    calls: list[int] = []

    def count_then_answer(*args):  # type: ignore[no-untyped-def]
        result = real_count(*args)
        if not calls:
            answer(db, survey, 5, seed=9, start=40)  # after the scan, before the lock
        calls.append(result[1])
        return result

    monkeypatch.setattr(joint_tallies, "_count", count_then_answer)
    rebuild(db, survey)
    assert len(calls) == 2 and calls[0] > 0
    survey = get_survey(db, survey.slug)  # type: ignore[assignment]
    keys = ("year", "satisfied", "drinks")
    assert sum(from_rows(db, survey, keys).values()) == 45
    assert joint_counts_kept(db, survey, keys) == from_rows(db, survey, keys)


def test_destroying_the_answers_removes_the_kept_counts(
    every_type: tuple[Database, Survey],
) -> None:
    db, survey = every_type
    answer(db, survey, 20, seed=10)
    assert db.execute("SELECT count(*) FROM joint_tallies").fetchone()[0] > 0
    db.execute("UPDATE surveys SET retain_until = '2000-01-01' WHERE id = ?", [survey.id])
    assert [removal.slug for removal in destroy_expired(db)] == [survey.slug]
    assert db.execute("SELECT count(*) FROM joint_tallies").fetchone()[0] == 0
    assert joint_counts_kept(db, survey, ("year", "cheated")) == {}


def test_migration_19_marks_only_answered_surveys_incomplete(tmp_path: Path) -> None:
    """Questions of a survey with responses get null (their counts lack those responses);
    those of a survey nobody answered are complete from the start."""
    from survey_app.storage.database import MIGRATIONS, connect, migrate, write_transaction

    db = connect(tmp_path / "v18.db")
    for version, step in enumerate(MIGRATIONS[:18]):
        with write_transaction(db):
            step(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
    for survey_id in (1, 2):
        db.execute(
            "INSERT INTO surveys (id, slug, title, created_on, design) "
            "VALUES (?, ?, 'Old', '2026-01-01', 'f')",
            [survey_id, f"old-{survey_id}"],
        )
        db.execute(
            "INSERT INTO designs (fingerprint, survey_id, questions) VALUES (?, ?, '{}')",
            [f"f{survey_id}", survey_id],
        )
        db.execute(
            "INSERT INTO questions (survey_id, position, key, text, type, parameters) "
            "VALUES (?, 0, 'q', 'Q?', 'yes_no', '{}')",
            [survey_id],
        )
    db.execute(
        "INSERT INTO responses (survey_id, submission_id, answered_on, design, answers) "
        "VALUES (1, 'a', '2026-01-01', 'f1', '{}')"
    )
    assert migrate(db) == len(MIGRATIONS)
    marks = dict(db.execute("SELECT survey_id, joint_tallies_complete FROM questions"))
    assert marks == {1: None, 2: 1}
