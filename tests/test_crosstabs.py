"""Joint counts of stored values: exact against the rows, kept up to date as responses
arrive, and never mixed up between two databases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from flask import Flask

from survey_app import crosstabs
from survey_app.db import get_db
from survey_app.responses import record_response
from survey_app.surveys import get_survey

from .conftest import MIXED_SLUG


def store(app: Flask, how_many: int, start: int = 0) -> None:
    """Responses with every combination of year, a yes/no report and a skip."""
    with app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        for i in range(start, start + how_many):
            reported: dict[str, Any] = {q.key: None for q in survey.questions}
            reported |= {"year": i % 4, "cheated": i % 3 == 0, "substance": i % 5 % 4}
            reported["skipped_meals"] = None if i % 7 == 0 else bool(i % 2)
            record_response(db, survey, reported, f"submission-{i}")


def recount(database: sqlite_utils.Database, keys: tuple[str, ...]) -> Counter[tuple]:
    """The same counts the slow way: every row's JSON read in Python."""
    rows = database.execute("SELECT answers FROM responses").fetchall()
    return Counter(tuple(json.loads(row[0]).get(key) for key in keys) for row in rows)


def counts(app: Flask, keys: tuple[str, ...]) -> dict[tuple, int]:
    with app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        return crosstabs.joint_counts(db, survey, keys)


@pytest.mark.parametrize(
    "keys", [("year",), ("year", "cheated"), ("skipped_meals", "year", "substance")]
)
def test_counts_match_the_rows_and_follow_new_responses(
    mixed_app: Flask, database: sqlite_utils.Database, keys: tuple[str, ...]
) -> None:
    store(mixed_app, 60)
    first = counts(mixed_app, keys)
    assert first == recount(database, keys)
    assert sum(first.values()) == 60
    store(mixed_app, 25, start=60)  # counted since: only the new rows are scanned
    assert counts(mixed_app, keys) == recount(database, keys)
    assert sum(counts(mixed_app, keys).values()) == 85


def test_a_skipped_answer_counts_as_none(mixed_app: Flask) -> None:
    store(mixed_app, 14)
    skipped = sum(
        n for (value,), n in counts(mixed_app, ("skipped_meals",)).items() if value is None
    )
    assert skipped == 2  # responses 0 and 7


def test_an_unknown_key_is_refused(mixed_app: Flask) -> None:
    with pytest.raises(ValueError, match="not questions"):
        counts(mixed_app, ("year", "nonsense"))


def test_two_databases_never_share_counts(mixed_app: Flask, tmp_path: Path) -> None:
    from survey_app import create_app
    from survey_app.definitions import load_definition
    from survey_app.surveys import store_survey

    from .conftest import MIXED

    store(mixed_app, 10)
    other = create_app({"TESTING": True, "DATABASE": str(tmp_path / "other.db")})
    with other.app_context():
        store_survey(get_db(), load_definition(MIXED))
    store(other, 3)
    assert sum(counts(mixed_app, ("year",)).values()) == 10
    assert sum(counts(other, ("year",)).values()) == 3


def test_another_process_starts_from_the_stored_snapshot(
    mixed_app: Flask, database: sqlite_utils.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a scan has read SNAPSHOT_ROWS rows its counts are stored; a process with no
    counts of its own (here: the cache emptied) reads them and scans only newer rows."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    keys = ("year", "cheated")
    store(mixed_app, 40)
    assert counts(mixed_app, keys) == recount(database, keys)
    [(through_id, _stored)] = database.execute(
        "SELECT through_id, counts FROM count_snapshots WHERE keys = ?", [json.dumps(keys)]
    ).fetchall()
    assert through_id == database.execute("SELECT max(id) FROM responses").fetchone()[0]

    crosstabs.forget_counts()
    store(mixed_app, 5, start=40)
    scanned_from = []
    real_scan = crosstabs._scan

    def recording_scan(db, survey, keys, counted, newest):
        scanned_from.append(counted.through_id)
        return real_scan(db, survey, keys, counted, newest)

    monkeypatch.setattr(crosstabs, "_scan", recording_scan)
    assert counts(mixed_app, keys) == recount(database, keys)
    assert scanned_from == [through_id]  # only the 5 new rows were read


def test_small_catch_ups_write_nothing(mixed_app: Flask, database: sqlite_utils.Database) -> None:
    store(mixed_app, 10)
    counts(mixed_app, ("year",))
    assert database.execute("SELECT count(*) FROM count_snapshots").fetchone()[0] == 0
