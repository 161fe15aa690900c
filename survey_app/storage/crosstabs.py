"""Joint counts of stored values: how many responses stored each combination of values for
a few questions. They are the sufficient statistics of every analysis across questions
(estimates by group, the regression, a plain question's histogram for a public page).

Most are kept as responses arrive (``joint_tallies``) and read from there. The rest (a
question whose counts are not kept, or not yet complete after an upgrade) are counted
from the responses, as follows.

Counting a million responses means reading every row's JSON (about three seconds here), so
counts are kept, each with the highest response id it includes. Responses are never
changed once stored and their ids only grow, so a later request scans only the rows
stored since, and the counts are exact at every moment. They are kept twice: in each
process's memory (at most ``CACHE_ENTRIES`` sets of questions, least recently used first
out), and in the database's ``count_snapshots`` after a scan of ``SNAPSHOT_ROWS`` rows or
more, so another worker, or the server after a restart, starts from there instead of
from the first row. A snapshot holds only what the responses table holds, summed.

One set of questions, one entry: counts are kept under the keys sorted and without
repeats, and each caller gets them in its own order (``_project``), so ``year, age`` and
``age, year`` share one scan, one cache entry and one snapshot. A set with no counts of
its own starts from a kept superset's, summed over the other questions. A survey keeps at
most ``SNAPSHOTS_PER_SURVEY`` snapshots, the least recently written or read dropped first.

A cold scan (``SNAPSHOT_ROWS`` rows or more to read) runs only under the survey's lease:
a ``count_leases`` row, claimed in a ``BEGIN IMMEDIATE`` transaction, so at any moment one
request, in any thread of any worker, reads a survey's rows. The others sleep (at most
``patience`` seconds), then start from what it stored. The scan itself runs at a lower
CPU priority (``SCAN_NICENESS``), so respondents' pages come first on a busy machine.
A row in the database rather than
a file lock because the database is the one thing every worker already shares: on one
machine today (a lock file would do), and on several machines with one database later
(where ``flock`` does not reach, and on network filesystems is not to be trusted). A
worker can die holding the lease (gunicorn kills a request after its ``--timeout``), so
the lease expires: ``LEASE_SECONDS`` is the worker timeout in docs/operating.md, the longest any
request, and so any scan, can run. Expiry is judged by each machine's clock; a few
seconds of skew only shift it a little.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from survey_app.domain.answers import Stored
from survey_app.storage import backends
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.joint_tallies import joint_counts_kept
from survey_app.storage.surveys import Survey

CACHE_ENTRIES = 64
SNAPSHOT_ROWS = 20_000
# A snapshot is its distinct combinations as JSON: 2-4 KB for two covariates and a
# yes/no answer at a million responses, under a megabyte for five covariates (32,760
# combinations, benchmarks/analysis.py). 16 keep a survey's under about 16 MB and hold
# the handful of sets one session of analyses uses; a dropped one costs a single scan,
# when a worker without it in memory asks for it.
SNAPSHOTS_PER_SURVEY = 16
LEASE_SECONDS = 120.0
POLL_SECONDS = 0.1
# At nice 5 a cold scan's thread weighs a third of a page's (nice 0) for Linux's
# scheduler. On a machine whose other work took one of its two CPUs, four cold analyses
# at once left respondents' pages as fast as idle, and were all done in 24-37 s (nice 0:
# pages up to 2.1x slower, done in 16-34 s; nice 10: done in 56-69 s); a scan must end
# within the worker's timeout (benchmarks/ANALYSES.md).
SCAN_NICENESS = 5
Combination = tuple[Stored, ...]
Keys = tuple[str, ...]


class CountsBeingPrepared(Exception):
    """Another request is counting this survey's responses from scratch; asked again a
    moment later, these counts start from what that one stored."""

    def __init__(self, slug: str) -> None:
        super().__init__(f"the responses of {slug!r} are being counted")
        self.slug = slug


@dataclass
class _Counted:
    through_id: int = 0
    counts: Counter[Combination] = field(default_factory=Counter)


_cache: OrderedDict[tuple[str, int, Keys], _Counted] = OrderedDict()
_lock = threading.Lock()


def joint_counts(
    db: Database,
    survey: Survey,
    keys: Sequence[str],
    patience: float | None = None,
) -> dict[Combination, int]:
    """How many responses stored each combination of values for ``keys``, in that order.

    A skipped question's value is None, and so is one that did not apply (its condition
    failed); a combination no response has is absent. While
    another request counts this survey from scratch, this one sleeps and then starts from
    its counts; ``patience`` bounds that sleep in seconds (None: as long as it takes),
    after which ``CountsBeingPrepared`` is raised.
    """
    known = {question.key for question in survey.questions}
    unknown = [key for key in keys if key not in known]
    if unknown or not keys:
        raise ValueError(f"not questions of {survey.slug!r}: {unknown or 'none given'}")
    kept = joint_counts_kept(db, survey, keys)
    if kept is not None:
        return kept
    canonical = tuple(sorted(set(keys)))
    counted = _counted(db, survey, canonical, patience)
    return _project(counted.counts, canonical, tuple(keys))


def _counted(db: Database, survey: Survey, keys: Keys, patience: float | None) -> _Counted:
    """The counts of ``keys`` (sorted, no repeats) through the survey's newest response.

    A short catch-up runs at once; a cold one only under the survey's lease. Without it,
    this request sleeps and looks again: by then the holder's counts are in this
    process's memory or in a snapshot. Inside a caller's transaction it neither waits nor
    claims: the write lock is the caller's, and the holder needs it to store its counts.
    """
    deadline = None if patience is None else time.monotonic() + patience
    lease: str | None = None
    try:
        while True:
            start, newest, behind = _behind(db, survey, _starting_point(db, survey, keys))
            cold = behind >= SNAPSHOT_ROWS
            if not cold or lease is not None or db.conn.in_transaction:
                return _catch_up(db, survey, keys, start, newest, cold)
            lease = _claim_lease(db, survey)
            if lease is None:
                _sleep_until_next_look(survey, deadline)
    finally:
        if lease is not None:
            _release_lease(db, survey, lease)


def _behind(db: Database, survey: Survey, start: _Counted) -> tuple[_Counted, int, int]:
    """``start`` (or nothing, if the database at this path was replaced by one with fewer
    responses), the survey's newest response id, and how many rows it lacks, counted up
    to ``SNAPSHOT_ROWS`` only: all a cold scan needs to know, and a waiting request looks
    ten times a second, where counting a million index entries takes a tenth of a second."""
    newest = db.execute(
        "SELECT coalesce(max(id), 0) FROM responses WHERE survey_id = ?", [survey.id]
    ).fetchone()[0]
    if newest < start.through_id:
        start = _Counted()
    if newest == start.through_id:
        return start, newest, 0
    behind = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM responses WHERE survey_id = ? AND id > ? LIMIT ?) "
        "AS lacking",
        [survey.id, start.through_id, SNAPSHOT_ROWS],
    ).fetchone()[0]
    return start, newest, behind


def _catch_up(
    db: Database,
    survey: Survey,
    keys: Keys,
    start: _Counted,
    newest: int,
    cold: bool,
) -> _Counted:
    """``start`` plus the rows up to ``newest``, kept in memory and, if ``cold``, in a
    snapshot for other processes. A cold scan yields the CPU to respondents' pages; inside
    a caller's transaction it runs on the caller's connection, which sees what the caller
    sees."""
    counted = start
    if newest > start.through_id:
        scan = _scan_at_low_priority if cold and not db.conn.in_transaction else _scan
        counted = _Counted(newest, start.counts + scan(db, survey, keys, start, newest))
        if cold:
            _save_snapshot(db, survey, keys, counted)
    # Keyed by the database's setting: two databases in one process never share counts.
    place = (backends.setting_of(db), survey.id, keys)
    with _lock:
        kept = _cache.get(place)
        if kept is None or kept.through_id <= counted.through_id:
            _cache[place] = counted
        _cache.move_to_end(place)
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return counted


def _scan(
    db: Database,
    survey: Survey,
    keys: Sequence[str],
    counted: _Counted,
    newest: int,
) -> Counter[Combination]:
    """The counts of the rows with ids in (counted.through_id, newest]."""
    # Keys are bound as parameters, never spliced into the SQL. A question that did not
    # apply is counted as no answer, like a skip: every analysis across questions leaves
    # it out alike (``display_logic``).
    answers = backends.answer_sql(db)
    columns = ", ".join(answers.value for _ in keys)
    groups = ", ".join(str(i + 1) for i in range(len(keys)))
    sql = (
        f"SELECT {columns}, count(*) FROM responses "  # noqa: S608 (placeholders only)
        f"WHERE survey_id = ? AND id > ? AND id <= ? GROUP BY {groups}"
    )
    parameters = [answers.parameter(key) for key in keys]
    rows = db.execute(sql, [*parameters, survey.id, counted.through_id, newest])
    return Counter({tuple(row[:-1]): row[-1] for row in rows})


def _scan_at_low_priority(
    db: Database,
    survey: Survey,
    keys: Sequence[str],
    counted: _Counted,
    newest: int,
) -> Counter[Combination]:
    """``_scan`` at a lower CPU priority, so that on a busy machine a cold count (seconds
    of one core) slows respondents' pages as little as it can. It runs on a thread of its
    own, which ends with it: on Linux a thread's niceness is its own, and an unprivileged
    thread can never take it back. The thread has its own connection too (a connection
    stays in the thread that opened it); the rows up to ``newest`` never change, so it
    counts the same rows."""
    setting = backends.setting_of(db)

    def scan() -> Counter[Combination]:
        _lower_this_threads_priority()
        own = backends.connect(setting)
        try:
            return _scan(own, survey, keys, counted, newest)
        finally:
            own.conn.close()

    with ThreadPoolExecutor(1, thread_name_prefix="cold-count") as pool:
        return pool.submit(scan).result()


def _lower_this_threads_priority() -> None:
    """Raise the calling thread's niceness by ``SCAN_NICENESS``, on Linux only: elsewhere
    the same call would lower the whole worker process's priority, for good."""
    if sys.platform == "linux":
        thread = threading.get_native_id()
        niceness = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, niceness + SCAN_NICENESS))


def _project(counts: Counter[Combination], have: Keys, want: Keys) -> dict[Combination, int]:
    """Counts of the questions ``have`` as counts of ``want`` (each one of ``have``):
    reordered, repeated, or summed over the questions ``want`` leaves out."""
    if want == have:
        return dict(counts)
    where = [have.index(key) for key in want]
    projected: Counter[Combination] = Counter()
    for combination, n in counts.items():
        projected[tuple(combination[i] for i in where)] += n
    return dict(projected)


def _starting_point(db: Database, survey: Survey, keys: Keys) -> _Counted:
    """The furthest along of the counts kept, in this process's memory or in a snapshot,
    for ``keys`` or a superset of them (summed down to ``keys``: a superset's counts hold
    every subset's). A snapshot is read only when it is further along than memory, as
    when another worker has just counted what this one was waiting for."""
    name = backends.setting_of(db)
    wanted = set(keys)
    with _lock:
        kept = [
            (held, counted)
            for (path, survey_id, held), counted in _cache.items()
            if (path, survey_id) == (name, survey.id) and wanted <= set(held)
        ]
    stored = [
        (held, through_id)
        for held, through_id in _stored_key_sets(db, survey)
        if wanted <= set(held)
    ]
    # The furthest along; of equals, the fewest questions (the least to sum).
    best_kept = max(
        kept, key=lambda item: (item[1].through_id, -len(item[0])), default=((), _Counted())
    )
    best_stored = max(stored, key=lambda item: (item[1], -len(item[0])), default=((), 0))
    held, counted = best_kept
    if best_stored[1] > counted.through_id:
        held, counted = best_stored[0], _load_snapshot(db, survey, best_stored[0])
    if held in ((), keys):
        return counted
    return _Counted(counted.through_id, Counter(_project(counted.counts, held, keys)))


def _stored_key_sets(db: Database, survey: Survey) -> list[tuple[Keys, int]]:
    """The survey's snapshots: their keys and the response id each counts through."""
    rows = db.execute(
        "SELECT keys, through_id FROM count_snapshots WHERE survey_id = ?", [survey.id]
    ).fetchall()
    return [(tuple(json.loads(keys)), through_id) for keys, through_id in rows]


def _load_snapshot(db: Database, survey: Survey, keys: Keys) -> _Counted:
    """A snapshot's counts, marked as the survey's most recently used (so it is the last
    to be dropped); nothing if another process has just dropped it."""
    row = db.execute(
        "SELECT through_id, counts FROM count_snapshots WHERE survey_id = ? AND keys = ?",
        [survey.id, json.dumps(keys)],
    ).fetchone()
    if row is None:
        return _Counted()
    if not db.conn.in_transaction:
        with write_transaction(db):
            _mark_used(db, survey, keys)
    return _Counted(row[0], Counter({tuple(item[:-1]): item[-1] for item in json.loads(row[1])}))


def _save_snapshot(db: Database, survey: Survey, keys: Keys, counted: _Counted) -> None:
    """Keep the counts for other processes, and drop the survey's least recently used
    snapshots beyond ``SNAPSHOTS_PER_SURVEY``. Skipped inside a caller's transaction (the
    write lock is theirs, and the counts are kept in memory all the same)."""
    if db.conn.in_transaction:
        return
    counts = json.dumps([[*values, n] for values, n in counted.counts.items()])
    with write_transaction(db):
        db.execute(
            "INSERT INTO count_snapshots (survey_id, keys, through_id, counts) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (survey_id, keys) DO UPDATE SET "
            "through_id = excluded.through_id, counts = excluded.counts",
            [survey.id, json.dumps(keys), counted.through_id, counts],
        )
        _mark_used(db, survey, keys)
        db.execute(
            "DELETE FROM count_snapshots WHERE survey_id = ? AND keys NOT IN ("
            "SELECT keys FROM count_snapshots WHERE survey_id = ? "
            "ORDER BY last_use DESC LIMIT ?)",
            [survey.id, survey.id, SNAPSHOTS_PER_SURVEY],
        )


def _mark_used(db: Database, survey: Survey, keys: Keys) -> None:
    """Number this snapshot's use after every other of the survey's: a counter rather
    than a clock, so uses in one millisecond, or on machines whose clocks differ, still
    come in the order the database saw them."""
    db.execute(
        "UPDATE count_snapshots SET last_use = 1 + ("
        "SELECT max(last_use) FROM count_snapshots WHERE survey_id = ?) "
        "WHERE survey_id = ? AND keys = ?",
        [survey.id, survey.id, json.dumps(keys)],
    )


def _claim_lease(db: Database, survey: Survey) -> str | None:
    """The survey's lease for this request (its holder token), or None while another
    request holds it. A free lease is seen by reading, so waiting requests take the write
    lock only to claim one that looks free (and re-check it under the lock)."""
    now = time.time()
    held = db.execute(
        "SELECT 1 FROM count_leases WHERE survey_id = ? AND expires_at > ?", [survey.id, now]
    ).fetchone()
    if held is not None:
        return None
    holder = secrets.token_hex(8)
    with write_transaction(db):
        db.execute(
            "DELETE FROM count_leases WHERE survey_id = ? AND expires_at <= ?", [survey.id, now]
        )
        claimed = db.execute(
            "INSERT OR IGNORE INTO count_leases (survey_id, holder, expires_at) VALUES (?, ?, ?)",
            [survey.id, holder, now + LEASE_SECONDS],
        ).rowcount
    return holder if claimed else None


def _release_lease(db: Database, survey: Survey, holder: str) -> None:
    """Give the lease back, if it is still ours (it may have expired and passed on)."""
    with write_transaction(db):
        db.execute(
            "DELETE FROM count_leases WHERE survey_id = ? AND holder = ?", [survey.id, holder]
        )


def _sleep_until_next_look(survey: Survey, deadline: float | None) -> None:
    """Sleep (never scan) until the lease may be free, or give up at ``deadline``."""
    if deadline is None:
        time.sleep(POLL_SECONDS)
        return
    left = deadline - time.monotonic()
    if left <= 0:
        raise CountsBeingPrepared(survey.slug)
    time.sleep(min(POLL_SECONDS, left))


def forget_counts() -> None:
    """Drop every kept count (after a database is restored or replaced under a process)."""
    with _lock:
        _cache.clear()
