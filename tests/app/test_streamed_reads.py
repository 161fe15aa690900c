"""Exports read their rows as a stream on either backend: a streamed export gives exactly
the rows an ordinary read gives, in order, and on PostgreSQL the worker holds only a few
rows of the result at a time (psycopg's ordinary cursor receives all of it first: ten
million responses would be gigabytes in the worker; benchmarks/TEN_MILLION.md)."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from survey_app.storage import backends, postgresql
from survey_app.storage.responses import iter_response_rows, record_response
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from tests.support.examples import MIXED_SLUG
from tests.support.postgresql import Cluster

ROWS = 11  # more than the few rows each fetch takes below, and not a multiple of them


def test_a_streamed_export_reads_every_row_in_order(
    mixed_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgresql, "STREAM_ROWS", 3)
    with mixed_app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        for i in range(ROWS):
            reported: dict[str, Any] = {q.key: None for q in survey.questions}
            reported |= {"year": i % 4, "cheated": i % 3 == 0}
            record_response(db, survey, reported, f"streamed-{i}")
        expected = list(iter_response_rows(db, survey))
    streamed = list(
        backends.stream_rows(
            mixed_app.config["DATABASE"], lambda db: iter_response_rows(db, survey)
        )
    )
    assert len(expected) >= ROWS
    assert streamed == expected


def test_a_streaming_postgresql_connection_holds_a_few_rows_at_a_time(
    postgresql_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgresql, "STREAM_ROWS", 4)
    sql = "SELECT n FROM generate_series(1, ?) AS n ORDER BY n"

    def first_row_and_rows_held(db: backends.Database) -> Any:
        cursor = db.execute(sql, [ROWS])
        rows = iter(cursor)
        yield next(rows), cursor.pgresult.ntuples  # type: ignore[union-attr]
        yield from ((row, None) for row in rows)

    read = list(backends.stream_rows(postgresql_cluster.new_database(), first_row_and_rows_held))
    assert read[0] == ((1,), 4)
    assert [row for row, _ in read] == [(n,) for n in range(1, ROWS + 1)]
