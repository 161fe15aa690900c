"""Joint counts counted from the responses (questions whose counts are not kept as
responses arrive, ``joint_tallies``; here none is): exact against the rows, caught up as
responses arrive, never mixed up between two databases; one entry and one snapshot per
set of questions, a capped number of snapshots, and one cold scan per survey at a time."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from flask import Flask
from flask.testing import FlaskClient

from survey_app.storage import backends, crosstabs, joint_tallies
from survey_app.storage.backends import Database
from survey_app.storage.database import connect, write_transaction
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from tests.support.examples import MIXED_SLUG


@pytest.fixture(autouse=True)
def counted_from_the_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    """No question's joint counts kept: every count here comes from the responses (in
    this process and in the workers it forks)."""
    monkeypatch.setattr(joint_tallies, "JOINT_CELLS_LIMIT", 0)


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


def recount(database: Database, keys: tuple[str, ...]) -> Counter[tuple]:
    """The same counts the slow way: every row's JSON read in Python."""
    rows = database.execute("SELECT answers FROM responses").fetchall()
    return Counter(tuple(json.loads(row[0]).get(key) for key in keys) for row in rows)


def record_scans(monkeypatch: pytest.MonkeyPatch, seconds: float = 0) -> list[tuple[int, int]]:
    """Every scan from now on, as the (after, through) response ids it read; each one
    made to last at least ``seconds``, so that concurrent requests surely overlap."""
    scanned: list[tuple[int, int]] = []
    real_scan = crosstabs._scan

    def recording_scan(db, survey, keys, counted, newest):  # type: ignore[no-untyped-def]
        scanned.append((counted.through_id, newest))
        time.sleep(seconds)
        return real_scan(db, survey, keys, counted, newest)

    monkeypatch.setattr(crosstabs, "_scan", recording_scan)
    return scanned


def snapshot_keys(database: Database) -> list[tuple[str, ...]]:
    rows = database.execute("SELECT keys FROM count_snapshots ORDER BY keys").fetchall()
    return [tuple(json.loads(row[0])) for row in rows]


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
    mixed_app: Flask, database: Database, keys: tuple[str, ...]
) -> None:
    store(mixed_app, 60)
    first = counts(mixed_app, keys)
    assert first == recount(database, keys)
    assert sum(first.values()) == 60
    store(mixed_app, 25, start=60)  # counted since: only the new rows are scanned
    assert counts(mixed_app, keys) == recount(database, keys)
    assert sum(counts(mixed_app, keys).values()) == 85


def test_a_skipped_answer_counts_as_none(mixed_app: Flask) -> None:
    """A skip (JSON null) and a value absent from a row (as in rows loaded by hand) are
    one combination, None, on either backend."""
    store(mixed_app, 14)
    with mixed_app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        db.execute(
            "INSERT INTO responses (survey_id, submission_id, answered_on, design, answers) "
            "VALUES (?, 'without-answers', '2026-01-01', ?, '{}')",
            [survey.id, survey.design],
        )
    counted = counts(mixed_app, ("skipped_meals",))
    assert counted[(None,)] == 3  # responses 0 and 7, and the one without answers
    assert sum(counted.values()) == 15


def test_an_unknown_key_is_refused(mixed_app: Flask) -> None:
    with pytest.raises(ValueError, match="not questions"):
        counts(mixed_app, ("year", "nonsense"))


def test_two_databases_never_share_counts(
    mixed_app: Flask, database: Database, tmp_path: Path
) -> None:
    from survey_app import create_app
    from survey_app.domain.definitions import load_definition
    from survey_app.storage.surveys import store_survey
    from tests.support.examples import EXAMPLE, MIXED

    # The same survey id in both (the example first, then the mixed survey), the other's
    # responses its first three: only the database tells the two counts apart.
    other = create_app({"TESTING": True, "DATABASE": str(tmp_path / "other.db")})
    with other.app_context():
        store_survey(get_db(), load_definition(EXAMPLE))
        store_survey(get_db(), load_definition(MIXED))
    store(other, 3, start=1)
    store(mixed_app, 10)
    assert counts(other, ("year",)) == {(1,): 1, (2,): 1, (3,): 1}
    assert counts(mixed_app, ("year",)) == recount(database, ("year",))


@pytest.mark.slow
def test_another_process_starts_from_the_stored_snapshot(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a scan has read SNAPSHOT_ROWS rows its counts are stored; a process with no
    counts of its own (here: the cache emptied) reads them and scans only newer rows."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    keys = ("cheated", "year")
    store(mixed_app, 40)
    assert counts(mixed_app, keys) == recount(database, keys)
    [(through_id, _stored)] = database.execute(
        "SELECT through_id, counts FROM count_snapshots WHERE keys = ?", [json.dumps(keys)]
    ).fetchall()
    assert through_id == database.execute("SELECT max(id) FROM responses").fetchone()[0]

    crosstabs.forget_counts()
    store(mixed_app, 5, start=40)
    scanned = record_scans(monkeypatch)
    assert counts(mixed_app, keys) == recount(database, keys)
    assert scanned == [(through_id, through_id + 5)]  # only the 5 new rows were read


def test_small_catch_ups_write_nothing(mixed_app: Flask, database: Database) -> None:
    store(mixed_app, 10)
    counts(mixed_app, ("year",))
    assert database.execute("SELECT count(*) FROM count_snapshots").fetchone()[0] == 0


# One set of questions, one entry, in whatever order the page asks.


def test_any_order_of_the_same_questions_shares_one_scan_and_one_snapshot(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three keys in two rotations: a rotation is not its own inverse, so counts put back
    in the wrong order would not match the rows."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    scanned = record_scans(monkeypatch)
    first, rotated = ("year", "cheated", "substance"), ("substance", "year", "cheated")
    assert counts(mixed_app, first) == recount(database, first)
    assert counts(mixed_app, rotated) == recount(database, rotated)
    assert counts(mixed_app, ("cheated", "cheated")) == recount(database, ("cheated", "cheated"))
    assert len(scanned) == 1
    assert snapshot_keys(database) == [("cheated", "substance", "year")]

    crosstabs.forget_counts()  # another worker: starts from the one snapshot
    assert counts(mixed_app, ("cheated", "substance", "year")) == recount(
        database, ("cheated", "substance", "year")
    )
    assert len(scanned) == 1


def test_fewer_questions_start_from_a_kept_superset(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts of (year, substance) are the counts of (year, cheated, substance)
    summed over cheated: from this process's memory, or from another's snapshot."""
    store(mixed_app, 40)
    scanned = record_scans(monkeypatch)
    superset = ("year", "cheated", "substance")
    counts(mixed_app, superset)  # 40 rows: kept in memory only
    assert counts(mixed_app, ("substance", "year")) == recount(database, ("substance", "year"))
    assert scanned == [(0, 40)]

    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    crosstabs.forget_counts()
    counts(mixed_app, superset)  # now stored
    crosstabs.forget_counts()
    store(mixed_app, 5, start=40)
    assert counts(mixed_app, ("year",)) == recount(database, ("year",))
    assert scanned[1:] == [(0, 40), (40, 45)]  # the superset's snapshot, then the new rows
    assert snapshot_keys(database) == [("cheated", "substance", "year")]


@pytest.mark.slow
def test_a_survey_keeps_at_most_its_cap_of_snapshots_the_least_recently_used_dropped(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty sets of three questions (none a subset of another, so each is a cold scan
    and a snapshot). Reading a snapshot counts as a use: it outlives newer ones."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    with mixed_app.app_context():
        survey = get_survey(get_db(), MIXED_SLUG)
        assert survey is not None
        keys = sorted(question.key for question in survey.questions)
    sets = list(itertools.combinations(keys, 3))
    cap = crosstabs.SNAPSHOTS_PER_SURVEY
    assert len(sets) > cap + 2
    for key_set in sets[:cap]:
        counts(mixed_app, key_set)
    assert len(snapshot_keys(database)) == cap

    crosstabs.forget_counts()
    counts(mixed_app, sets[0])  # read back from its snapshot: now the most recently used
    for key_set in sets[cap:]:
        counts(mixed_app, key_set)
        assert len(snapshot_keys(database)) == cap
    dropped = len(sets) - cap
    assert set(snapshot_keys(database)) == {sets[0], *sets[1 + dropped :]}


# One cold scan per survey at a time, in any thread of any worker.


def ask_on_own_connection(path: str, keys: tuple[str, ...]) -> dict[tuple, int]:
    """What a request in another thread or worker does: its own connection."""
    db = backends.connect(path)
    try:
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        return crosstabs.joint_counts(db, survey, keys)
    finally:
        db.conn.close()


def test_two_threads_asking_for_the_same_cold_counts_scan_once(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    scanned = record_scans(monkeypatch, seconds=0.5)
    path = mixed_app.config["DATABASE"]
    both_ready = threading.Barrier(2)

    def ask(keys: tuple[str, ...]) -> dict[tuple, int]:
        both_ready.wait()
        return ask_on_own_connection(path, keys)

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(ask, [("year", "cheated"), ("cheated", "year")]))
    assert answers == [
        recount(database, ("year", "cheated")),
        recount(database, ("cheated", "year")),
    ]
    assert scanned == [(0, 40)]


def _ask_in_a_forked_worker(
    path: str, both_ready: Any, results: Any, keys: tuple[str, ...]
) -> None:
    both_ready.wait()
    results.put(("answer", keys, ask_on_own_connection(path, keys)))


@pytest.mark.slow
def test_two_processes_asking_for_the_same_cold_counts_scan_once(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two forked workers on the same SQLite file, as gunicorn runs them: the lease in the
    database lets one scan while the other sleeps, then reads its snapshot."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    fork = multiprocessing.get_context("fork")
    results = fork.Queue()
    real_scan = crosstabs._scan

    def reporting_scan(db, survey, keys, counted, newest):  # type: ignore[no-untyped-def]
        results.put(("scan", counted.through_id, newest))
        time.sleep(0.5)
        return real_scan(db, survey, keys, counted, newest)

    monkeypatch.setattr(crosstabs, "_scan", reporting_scan)
    both_ready = fork.Barrier(2)
    orders = [("year", "cheated"), ("cheated", "year")]
    workers = [
        fork.Process(
            target=_ask_in_a_forked_worker,
            args=(mixed_app.config["DATABASE"], both_ready, results, keys),
        )
        for keys in orders
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    reports = [results.get(timeout=5) for _ in range(3)]
    assert results.empty()
    assert [report for report in reports if report[0] == "scan"] == [("scan", 0, 40)]
    for keys in orders:
        assert ("answer", keys, recount(database, keys)) in reports


def test_counts_another_worker_stored_since_beat_older_ones_in_memory(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process counted 10 rows; 40 arrive; another worker counts all 50 and stores
    them. Here, the snapshot is the start: nothing is read twice."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 10)
    counts(mixed_app, ("year",))
    store(mixed_app, 40, start=10)
    other_worker = multiprocessing.get_context("fork").Process(
        target=ask_on_own_connection, args=(mixed_app.config["DATABASE"], ("year",))
    )
    other_worker.start()
    other_worker.join(timeout=30)
    assert other_worker.exitcode == 0
    assert snapshot_keys(database) == [("year",)]
    scanned = record_scans(monkeypatch)
    assert counts(mixed_app, ("year",)) == recount(database, ("year",))
    assert scanned == []


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's niceness is its own on Linux")
def test_a_cold_scan_yields_the_cpu_and_leaves_the_request_s_priority_alone(
    mixed_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold scan runs at SCAN_NICENESS more than the request; a short catch-up, and the
    request's own thread afterwards, at the request's."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    niceness: list[int] = []
    real_scan = crosstabs._scan

    def scan_noting_niceness(db, survey, keys, counted, newest):  # type: ignore[no-untyped-def]
        niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real_scan(db, survey, keys, counted, newest)

    monkeypatch.setattr(crosstabs, "_scan", scan_noting_niceness)
    request_s = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    store(mixed_app, 40)
    counts(mixed_app, ("year",))  # cold: 40 rows
    store(mixed_app, 5, start=40)
    counts(mixed_app, ("year",))  # 5 more
    assert niceness == [min(19, request_s + crosstabs.SCAN_NICENESS), request_s]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == request_s


def test_a_request_gives_up_waiting_but_takes_over_an_expired_lease(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live holder makes an impatient request give up (sleeping, not scanning); a dead
    one's lease expires and the next request counts."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    scanned = record_scans(monkeypatch)
    with mixed_app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        holder = crosstabs._claim_lease(db, survey)
        assert holder is not None
        started = time.monotonic()
        with pytest.raises(crosstabs.CountsBeingPrepared):
            crosstabs.joint_counts(db, survey, ["year"], patience=0.3)
        assert time.monotonic() - started >= 0.3
        assert scanned == []
        with write_transaction(db):  # its worker died a lease ago
            db.execute(
                "UPDATE count_leases SET expires_at = expires_at - ?", [crosstabs.LEASE_SECONDS]
            )
        assert crosstabs.joint_counts(db, survey, ["year"], patience=0) == recount(
            database, ("year",)
        )
        assert scanned == [(0, 40)]
        assert database.execute("SELECT count(*) FROM count_leases").fetchone()[0] == 0


def rows_read(db: Database, work: Callable[[], object]) -> int:
    """How many rows (or index entries) ``work`` read on ``db``'s connection, at most: on
    SQLite its virtual machine's steps (each row read takes at least one), counted by the
    progress handler; on PostgreSQL the table's statistics, flushed before and after."""
    if isinstance(db, sqlite_utils.Database):
        steps = [0]

        def count_steps() -> int:
            steps[0] += 1
            return 0

        db.conn.set_progress_handler(count_steps, 100)
        try:
            work()
        finally:
            db.conn.set_progress_handler(None, 0)
        return 100 * steps[0]
    read = (
        "SELECT pg_stat_clear_snapshot(), (SELECT seq_tup_read FROM pg_stat_user_tables "
        "WHERE relname = 'responses') + (SELECT sum(idx_tup_read) FROM pg_stat_user_indexes "
        "WHERE relname = 'responses')"
    )
    db.execute("SELECT pg_stat_force_next_flush()")
    before = db.execute(read).fetchone()[1]
    work()
    db.execute("SELECT pg_stat_force_next_flush()")
    return int(db.execute(read).fetchone()[1]) - int(before)


def test_a_waiting_request_sleeps_instead_of_reading_the_rows(
    mixed_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each look while waiting must cost far less than one pass over the survey's rows:
    with 20,000 rows and a threshold of 30, a look counts 30 index entries, not 20,000."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    with mixed_app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        with write_transaction(db):
            db.conn.executemany(
                "INSERT INTO responses (survey_id, submission_id, answered_on, design, answers) "
                "VALUES (?, ?, '2026-01-01', ?, '{}')",
                [(survey.id, f"submission-{i}", survey.design) for i in range(20_000)],
            )
        if not isinstance(db, sqlite_utils.Database):
            # What autovacuum does within a minute of such a burst: without statistics
            # PostgreSQL's planner guesses a dozen rows, and reads all 20,000 per look.
            db.execute("ANALYZE responses")
        assert crosstabs._claim_lease(backends.connect(mixed_app.config["DATABASE"]), survey)

        def wait() -> None:
            with pytest.raises(crosstabs.CountsBeingPrepared):
                crosstabs.joint_counts(db, survey, ["year"], patience=0.5)

        read = rows_read(db, wait)
    looks = 0.5 / crosstabs.POLL_SECONDS
    assert read < 20_000 * looks / 10  # under a tenth of a pass per look


def test_inside_a_write_transaction_counts_never_wait_for_the_lease(
    mixed_app: Flask, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A publication counts under its write lock; the lease's holder needs that lock to
    store its counts, so waiting for it there could only time out."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    with mixed_app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        other = backends.connect(mixed_app.config["DATABASE"])
        assert crosstabs._claim_lease(other, survey) is not None
        with write_transaction(db):
            # patience only bounds the test if it would wait: it must return at once
            counted = crosstabs.joint_counts(db, survey, ["year"], patience=1)
        assert counted == recount(database, ("year",))
        other.conn.close()


@pytest.mark.slow
def test_an_analysis_page_answers_503_and_comes_back_by_itself(
    mixed_app: Flask, logged_in: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another request counts the survey from scratch, the page waits half a second,
    then asks the browser to reload it; afterwards it is the analysis."""
    monkeypatch.setattr(crosstabs, "SNAPSHOT_ROWS", 30)
    store(mixed_app, 40)
    page = f"/research/surveys/{MIXED_SLUG}/groups?question=cheated&by=year"
    with mixed_app.app_context():
        db = get_db()
        survey = get_survey(db, MIXED_SLUG)
        assert survey is not None
        holder = crosstabs._claim_lease(db, survey)
        assert holder is not None
    busy = logged_in.get(page)
    assert busy.status_code == 503
    assert busy.headers["Retry-After"] == busy.headers["Refresh"] == "2"
    assert "The analysis is being prepared" in busy.get_data(as_text=True)
    with mixed_app.app_context():
        crosstabs._release_lease(get_db(), survey, holder)
    done = logged_in.get(page)
    assert done.status_code == 200, done.get_data(as_text=True)
    assert "The analysis is being prepared" not in done.get_data(as_text=True)


def test_a_version_8_database_drops_its_snapshots_in_caller_order(tmp_path: Path) -> None:
    """Snapshots stored under the order a page asked in would never be found again (keys
    are now sorted), so migration 9 drops them; the next request counts afresh."""
    from survey_app.storage.database import MIGRATIONS, migrate

    db = connect(tmp_path / "v8.db")
    for version, step in enumerate(MIGRATIONS[:8]):
        with write_transaction(db):
            step(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
    db.execute(
        "INSERT INTO surveys (id, slug, title, created_on, design) "
        "VALUES (1, 'old', 'Old', '2026-01-01', 'f')"
    )
    db.execute(
        "INSERT INTO count_snapshots (survey_id, keys, through_id, counts) "
        """VALUES (1, '["b", "a"]', 7, '[[1, 0, 7]]')"""
    )
    assert migrate(db) == len(MIGRATIONS)  # 9 and any later
    assert db.execute("SELECT count(*) FROM count_snapshots").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM count_leases").fetchone()[0] == 0
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
