"""Keeping answers only as long as allowed: the owner sets a retention date (today or
later, moved or cleared until it passes) and whether the published figures outlive it;
the day after it (UTC) `survey-app destroy-expired`, or the server as it starts, destroys
the responses, counts, invitation links and (unless kept) releases, closes the survey for
good and records it. The retention clock is ``destruction.utc_today``, set by hand here.
"""

from __future__ import annotations

import datetime
import subprocess  # noqa: S404 (pg_dump, arguments as a list)
import threading
from fractions import Fraction

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app import create_app
from survey_app.domain.releases import publish, quote_release, set_budget
from survey_app.storage import backends, destruction
from survey_app.storage.backends import Database
from survey_app.storage.events import recent_events
from survey_app.storage.responses import SurveyNotOpenError, record_response
from survey_app.web.database_session import get_db
from tests.app.test_survey_management import (
    PLAIN_ANSWER,
    POLL,
    answer_poll,
    as_user,
    managed,  # noqa: F401 (a fixture, below)
    post,
    stored,
    stored_bytes,
    survey_rows,
)

TODAY = datetime.date(2030, 6, 14)


def answer_left(app: Flask) -> bool:
    """Whether the plain answer can still be read back from what the app keeps.

    SQLite: the database file and its WAL as a thief copying them would get them (freed
    pages are zeroed, the WAL emptied). PostgreSQL: a dump taken now, or any dead row
    version left in a table (the removal vacuums them away; ``pgstattuple`` comes with
    the server, as ``initdb`` does). The bytes a vacuumed page's
    free space may still hold, and the server's own WAL, are beyond both, as
    docs/data-retention.md says.
    """
    setting = app.config["DATABASE"]
    if not backends.is_postgresql(setting):
        return PLAIN_ANSWER.encode() in stored_bytes(app)
    dump = subprocess.run(  # noqa: S603 (a fixed program, no shell)
        ["pg_dump", "--data-only", f"--dbname={setting}"],  # noqa: S607
        capture_output=True,
        check=True,
    ).stdout
    db = backends.connect(setting)
    # Counted in the pages themselves: the statistics' n_dead_tup can lag behind a
    # vacuum (a deleting connection reports its deletions after the vacuum's count).
    db.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    dead = sum(
        db.execute("SELECT dead_tuple_count FROM pgstattuple(?)", [table]).fetchone()[0]
        for table in ("responses", "tallies", "joint_tallies", "count_snapshots")
    )
    db.conn.close()
    return PLAIN_ANSWER.encode() in dump or dead > 0


class RetentionClock:
    """``destruction.utc_today``, moved by hand."""

    def __init__(self) -> None:
        self.today = TODAY

    def advance(self, days: int) -> None:
        self.today += datetime.timedelta(days=days)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> RetentionClock:
    clock = RetentionClock()
    monkeypatch.setattr(destruction, "utc_today", lambda: clock.today)
    return clock


@pytest.fixture
def owner(app: Flask, managed: Flask, researcher: str) -> FlaskClient:  # noqa: F811
    """ada, logged in; the surveys and people of test_survey_management's ``managed``."""
    return as_user(app, researcher)


def keep_until(owner: FlaskClient, day: str, keep_figures: bool = False):
    fields = {"retain_until": day, **({"keep_public_figures": "y"} if keep_figures else {})}
    return post(owner, f"/research/surveys/{POLL}/retention", **fields)


def published_poll(app: Flask) -> None:
    """Three answers, a budget and a public release of the exact estimates, and an
    invitation: everything retention destroys or keeps."""
    answer_poll(app, 3)
    with app.app_context():
        db, survey = get_db(), stored(app, POLL)
        set_budget(db, survey, Fraction(1))
        publish(db, quote_release(db, survey, ["exact-estimates"], None))
        db.execute("INSERT INTO invitations (token_hash, survey_id) VALUES ('h', ?)", [survey.id])


def test_the_owner_sets_moves_and_clears_the_date(
    app: Flask, owner: FlaskClient, clock: RetentionClock
) -> None:
    study = owner.get(f"/research/surveys/{POLL}/study").text
    assert 'type="date"' in study and f'min="{TODAY.isoformat()}"' in study
    assert keep_until(owner, "2030-06-13").status_code == 400  # yesterday
    assert stored(app, POLL).retain_until is None
    set_today = keep_until(owner, "2030-06-14")
    assert set_today.status_code == 302
    assert "destroyed after June 14, 2030" in owner.get(set_today.headers["Location"]).text
    assert keep_until(owner, "2031-01-31", keep_figures=True).status_code == 302  # later
    survey = stored(app, POLL)
    assert (survey.retain_until, survey.keep_public_figures) == (datetime.date(2031, 1, 31), True)
    assert keep_until(owner, "2030-07-01").status_code == 302  # earlier
    assert stored(app, POLL).retain_until == datetime.date(2030, 7, 1)
    assert "kept until July 1, 2030" in owner.get(f"/research/surveys/{POLL}").text
    for typed in ("next week", "2030-02-30", "14/06/2030"):
        assert keep_until(owner, typed).status_code == 400, typed
    assert keep_until(owner, "").status_code == 302  # cleared
    assert stored(app, POLL).retain_until is None


def test_a_passed_date_cannot_be_moved_and_a_destroyed_survey_stays_closed(
    app: Flask, owner: FlaskClient, runner: FlaskCliRunner, clock: RetentionClock
) -> None:
    assert keep_until(owner, "2030-06-14").status_code == 302
    clock.advance(1)  # the date has passed; nothing has run yet
    for day in ("2030-06-20", ""):
        refused = keep_until(owner, day)
        assert refused.status_code == 400 and "about to be destroyed" in refused.text
    assert stored(app, POLL).retain_until == TODAY
    assert runner.invoke(args=["destroy-expired"]).exit_code == 0
    assert "destroyed after its retention date" in keep_until(owner, "2030-06-20").text
    assert post(owner, f"/research/surveys/{POLL}/open").status_code == 400
    reopen = runner.invoke(args=["open", POLL])
    assert reopen.exit_code == 1 and "stays closed" in reopen.output
    assert stored(app, POLL).status == "closed"


@pytest.mark.parametrize("keep_figures", [False, True])
def test_after_the_date_the_answers_are_destroyed_and_the_figures_kept_if_chosen(
    app: Flask,
    owner: FlaskClient,
    runner: FlaskCliRunner,
    database: Database,
    clock: RetentionClock,
    keep_figures: bool,
) -> None:
    published_poll(app)
    assert keep_until(owner, "2030-06-14", keep_figures).status_code == 302
    survey_id = stored(app, POLL).id
    assert runner.invoke(args=["destroy-expired", "--dry-run"]).stdout == (
        "No survey is past its retention date.\n"
    )
    clock.advance(1)
    dry = runner.invoke(args=["destroy-expired", "--dry-run"])
    assert dry.stdout == f"{POLL}: kept until 2030-06-14; would destroy 3 responses\n"
    assert survey_rows(database, survey_id)["responses"] == 3  # a dry run destroys nothing
    assert answer_left(app)

    done = runner.invoke(args=["destroy-expired"])
    assert done.exit_code == 0 and done.stdout == f"{POLL}: answers destroyed: 3 responses.\n"
    # What the app cannot erase is said where it remains: PostgreSQL's WAL and backups.
    on_postgresql = backends.is_postgresql(app.config["DATABASE"])
    assert ("write-ahead log archives, replicas" in done.stderr) is on_postgresql
    assert not answer_left(app)
    rows = survey_rows(database, survey_id)
    answers = ("responses", "tallies", "joint_tallies", "count_snapshots", "count_leases")
    for table in (*answers, "invitations"):
        assert rows[table] == 0, table
    kept = 1 if keep_figures else 0
    assert (rows["releases"], rows["budget_changes"]) == (kept, kept)
    assert (rows["questions"], rows["survey_viewers"], rows["surveys"]) == (2, 1, 1)
    survey = stored(app, POLL)
    assert (survey.status, survey.destroyed_on) == ("closed", datetime.date(2030, 6, 15))
    public = app.test_client().get(f"/results/{POLL}")
    assert public.status_code == (200 if keep_figures else 404)
    with app.app_context():
        event = recent_events(get_db())[0]
    assert (event.actor, event.action, event.subject) == (
        "retention",
        "answers destroyed",
        f"{POLL} (Habits)",
    )
    dashboard = owner.get(f"/research/surveys/{POLL}").text
    assert "0 responses." in dashboard
    assert "Answers destroyed on June 15, 2030, after the retention date." in dashboard
    study = owner.get(f"/research/surveys/{POLL}/study").text
    assert "Its answers were destroyed on June 15, 2030" in study
    assert "Open the survey…" not in study
    again = runner.invoke(args=["destroy-expired"])
    assert again.stdout == "No survey is past its retention date.\n"
    assert len([e for e in recent_events(database) if e.action == "answers destroyed"]) == 1


def test_the_server_destroys_what_is_due_as_it_starts(
    app: Flask, owner: FlaskClient, database: Database, clock: RetentionClock
) -> None:
    answer_poll(app, 2)
    assert keep_until(owner, "2030-06-20").status_code == 302
    clock.advance(6)  # the last day: still kept
    restarted = create_app({"DATABASE": app.config["DATABASE"], "SECRET_KEY": "k", "TESTING": True})
    assert stored(restarted, POLL).destroyed_on is None
    clock.advance(1)
    restarted = create_app({"DATABASE": app.config["DATABASE"], "SECRET_KEY": "k", "TESTING": True})
    assert stored(restarted, POLL).destroyed_on == datetime.date(2030, 6, 21)
    assert database.execute("SELECT count(*) FROM responses").fetchone()[0] == 0
    assert not answer_left(app)


def test_workers_starting_at_once_destroy_each_survey_once(
    app: Flask, owner: FlaskClient, clock: RetentionClock
) -> None:
    """Four workers' start-up checks at the same moment, each on its own connection: one
    destruction, one event."""
    answer_poll(app, 2)
    assert keep_until(owner, "2030-06-14").status_code == 302
    clock.advance(1)
    start, results = threading.Barrier(4), []

    def worker() -> None:
        db = backends.connect(app.config["DATABASE"])
        start.wait()
        results.append(destruction.destroy_expired(db))
        db.conn.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(removals) for removals in results) == [0, 0, 0, 1]
    with app.app_context():
        events = [e for e in recent_events(get_db()) if e.action == "answers destroyed"]
    assert len(events) == 1


def test_a_response_on_its_way_cannot_land_after_the_destruction(
    app: Flask, owner: FlaskClient, runner: FlaskCliRunner, clock: RetentionClock
) -> None:
    """A response whose request read the survey while it was open, stored after the
    destruction committed: refused under the write lock, nothing stored."""
    assert keep_until(owner, "2030-06-14").status_code == 302
    read_while_open = stored(app, POLL)
    clock.advance(1)
    assert runner.invoke(args=["destroy-expired"]).exit_code == 0
    with app.app_context(), pytest.raises(SurveyNotOpenError):
        record_response(get_db(), read_while_open, {"cheated": True, "code": 91827}, "late-1")
    assert not answer_left(app)
    assert stored(app, POLL).destroyed_on is not None
