"""Rate-limit counters kept in the database, so that every worker process and every
machine serving one database counts the same attempts.

A limits ``Storage`` (the library under Flask-Limiter) for the fixed-window strategy: a
``rate_counts`` row per limited key, its count and the end of its window, in seconds
since the epoch. A window that has ended is deleted by the next count, whichever key it
is for, so the table holds only the windows still running. Keys are stored hashed: they
name an address, and the table exists to slow guessing down, not to record visitors.

Researchers' limits only (logins, password links, share lookups): their attempts are
already in the database (``login_failures``, ``researcher_sessions``). A respondent's
submissions are never counted here: a count written beside each response, with the end
of its minute, would tie the response to its minute in the write-ahead log (privacy
invariant 6, and ``web/bursts.py``); they are counted in memory or Redis (``web/limits.py``).

Every count is one short write transaction (``BEGIN IMMEDIATE``), so two processes
counting one key at once each see the other's attempt. Windows are judged by each
machine's clock; a few seconds of skew only move a window's end a little.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

from limits.storage import Storage

from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction

STORAGE_SCHEME = "survey-app-database"


def _hashed(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def count_attempt(db: Database, key: str, window_seconds: int, now: float, amount: int = 1) -> int:
    """Count ``amount`` attempts under ``key``; the attempts in its running window, these
    included.

    A window starts with its first attempt and lasts ``window_seconds``; ended windows
    (of any key) are deleted first, so the upsert below only ever finds a running one.
    """
    with write_transaction(db):
        db.execute("DELETE FROM rate_counts WHERE window_ends <= ?", [now])
        (count,) = db.execute(
            "INSERT INTO rate_counts (key, count, window_ends) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET count = rate_counts.count + excluded.count "
            "RETURNING count",
            [_hashed(key), amount, now + window_seconds],
        ).fetchone()
    return int(count)


def attempts(db: Database, key: str, now: float) -> tuple[int, float]:
    """The attempts in ``key``'s running window and when it ends (``now`` if none runs)."""
    row = db.execute(
        "SELECT count, window_ends FROM rate_counts WHERE key = ? AND window_ends > ?",
        [_hashed(key), now],
    ).fetchone()
    return (0, now) if row is None else (int(row[0]), float(row[1]))


def forget_attempts(db: Database, key: str | None = None) -> int:
    """Delete ``key``'s window (every window when None); how many were deleted."""
    with write_transaction(db):
        if key is None:
            cursor = db.execute("DELETE FROM rate_counts")
        else:
            cursor = db.execute("DELETE FROM rate_counts WHERE key = ?", [_hashed(key)])
    return int(cursor.rowcount)


class DatabaseRateCounts(Storage):
    """Flask-Limiter's storage over ``rate_counts``, on the connection ``connection()``
    gives (the current request's), named ``survey-app-database://``."""

    STORAGE_SCHEME = [STORAGE_SCHEME]

    def __init__(
        self,
        uri: str | None = None,
        wrap_exceptions: bool = False,
        *,
        connection: Callable[[], Database],
        **options: float | str | bool,
    ) -> None:
        super().__init__(uri, wrap_exceptions, **options)
        self._connection = connection

    @property
    def base_exceptions(self) -> type[Exception]:
        return Exception

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        return count_attempt(self._connection(), key, expiry, time.time(), amount)

    def get(self, key: str) -> int:
        return attempts(self._connection(), key, time.time())[0]

    def get_expiry(self, key: str) -> float:
        return attempts(self._connection(), key, time.time())[1]

    def check(self) -> bool:
        return True  # the database answers every request anyway (/healthz asks it)

    def reset(self) -> int | None:
        return forget_attempts(self._connection())

    def clear(self, key: str) -> None:
        forget_attempts(self._connection(), key)
