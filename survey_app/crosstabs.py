"""Joint counts of stored values: how many responses stored each combination of values for
a few questions. They are the sufficient statistics of every analysis across questions
(estimates by group, the regression, a plain question's histogram for a public page).

Counting a million responses means reading every row's JSON (about two seconds here), so
counts are kept, each with the highest response id it includes. Responses are never
changed once stored and their ids only grow, so a later request scans only the rows
stored since, and the counts are exact at every moment. They are kept twice: in each
process's memory (at most ``CACHE_ENTRIES`` tuples of keys, least recently used first
out), and in the database's ``count_snapshots`` once a scan has read ``SNAPSHOT_ROWS``
rows, so another worker, or the server after a restart, starts from there instead of
from the first row. A snapshot holds only what the responses table holds, summed.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import sqlite_utils

from .answers import Stored
from .db import write_transaction
from .surveys import Survey

CACHE_ENTRIES = 64
SNAPSHOT_ROWS = 20_000
Combination = tuple[Stored, ...]


@dataclass
class _Counted:
    through_id: int = 0
    counts: Counter[Combination] = field(default_factory=Counter)


_cache: OrderedDict[tuple[str, int, tuple[str, ...]], _Counted] = OrderedDict()
_lock = threading.Lock()


def joint_counts(
    db: sqlite_utils.Database, survey: Survey, keys: Sequence[str]
) -> dict[Combination, int]:
    """How many responses stored each combination of values for ``keys``, in that order.

    A skipped question's value is None; a combination no response has is absent.
    """
    known = {question.key for question in survey.questions}
    unknown = [key for key in keys if key not in known]
    if unknown or not keys:
        raise ValueError(f"not questions of {survey.slug!r}: {unknown or 'none given'}")
    cache_key = (_database_name(db), survey.id, tuple(keys))
    with _lock:
        counted = _cache.pop(cache_key, None)
    if counted is None:
        counted = _load_snapshot(db, survey, keys)
    newest = db.execute(
        "SELECT coalesce(max(id), 0) FROM responses WHERE survey_id = ?", [survey.id]
    ).fetchone()[0]
    if newest < counted.through_id:  # another database at the same path: start again
        counted = _Counted()
    if newest > counted.through_id:
        new = _scan(db, survey, keys, counted, newest)
        counted = _Counted(newest, counted.counts + new)
        if new.total() >= SNAPSHOT_ROWS:
            _save_snapshot(db, survey, keys, counted)
    with _lock:
        _cache[cache_key] = counted
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return dict(counted.counts)


def _scan(
    db: sqlite_utils.Database,
    survey: Survey,
    keys: Sequence[str],
    counted: _Counted,
    newest: int,
) -> Counter[Combination]:
    """The counts of the rows with ids in (counted.through_id, newest]."""
    # Paths are bound as parameters, never spliced into the SQL; keys are quoted in them.
    columns = ", ".join("json_extract(answers, ?)" for _ in keys)
    groups = ", ".join(str(i + 1) for i in range(len(keys)))
    sql = (
        f"SELECT {columns}, count(*) FROM responses "  # noqa: S608 (placeholders only)
        f"WHERE survey_id = ? AND id > ? AND id <= ? GROUP BY {groups}"
    )
    paths = [f'$."{key}"' for key in keys]
    rows = db.execute(sql, [*paths, survey.id, counted.through_id, newest])
    return Counter({tuple(row[:-1]): row[-1] for row in rows})


def _load_snapshot(db: sqlite_utils.Database, survey: Survey, keys: Sequence[str]) -> _Counted:
    row = db.execute(
        "SELECT through_id, counts FROM count_snapshots WHERE survey_id = ? AND keys = ?",
        [survey.id, json.dumps(list(keys))],
    ).fetchone()
    if row is None:
        return _Counted()
    return _Counted(row[0], Counter({tuple(item[:-1]): item[-1] for item in json.loads(row[1])}))


def _save_snapshot(
    db: sqlite_utils.Database, survey: Survey, keys: Sequence[str], counted: _Counted
) -> None:
    """Keep the counts for other processes; skipped inside a caller's transaction (the
    write lock is theirs, and the counts are kept in memory all the same)."""
    if db.conn.in_transaction:
        return
    counts = json.dumps([[*values, n] for values, n in counted.counts.items()])
    with write_transaction(db):
        db.execute(
            "INSERT OR REPLACE INTO count_snapshots (survey_id, keys, through_id, counts) "
            "VALUES (?, ?, ?, ?)",
            [survey.id, json.dumps(list(keys)), counted.through_id, counts],
        )


def _database_name(db: sqlite_utils.Database) -> str:
    """The database file, so that two databases in one process (tests) never share counts."""
    row = db.execute("PRAGMA database_list").fetchone()
    return str(row[2])


def forget_counts() -> None:
    """Drop every kept count (after a database is restored or replaced under a process)."""
    with _lock:
        _cache.clear()
