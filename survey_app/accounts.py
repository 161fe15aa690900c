"""Researcher accounts: creating them, checking passwords, slowing down guessing.

Passwords are hashed with scrypt (Werkzeug's default: memory-hard, so a stolen database
does not give passwords up to GPU guessing). Failed logins are counted per account and per
address; past a few failures each further attempt waits twice as long as the last.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from dataclasses import dataclass

import sqlite_utils
from werkzeug.security import check_password_hash, generate_password_hash

from .db import write_transaction

USERNAME_PATTERN = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
MIN_PASSWORD_LENGTH = 10
FREE_FAILURES = 3  # typos are free; the delay starts after these
MAX_DELAY_SECONDS = 15 * 60
# Compared against when the username is unknown, so a miss costs the same time as a hit
# and response times do not reveal which usernames exist.
_DUMMY_HASH = generate_password_hash("not a password: equalizes timing")


@dataclass(frozen=True)
class Researcher:
    id: int
    username: str


class AccountError(ValueError):
    """A username or password that cannot be used; the message says why."""


class LoginThrottled(Exception):
    """Too many recent failures for this account or address."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many failed logins; try again in {retry_after} seconds")
        self.retry_after = retry_after


def create_researcher(db: sqlite_utils.Database, username: str, password: str) -> Researcher:
    if not USERNAME_PATTERN.fullmatch(username):
        raise AccountError("usernames are 1-64 letters, digits and . _ @ -")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(f"passwords need at least {MIN_PASSWORD_LENGTH} characters")
    with write_transaction(db):
        if db.execute("SELECT 1 FROM researchers WHERE username = ?", [username]).fetchone():
            raise AccountError(f"researcher {username!r} already exists")
        researcher_id = db.execute(
            "INSERT INTO researchers (username, password_hash, created_on) VALUES (?, ?, ?) "
            "RETURNING id",
            [username, generate_password_hash(password), datetime.date.today().isoformat()],
        ).fetchone()[0]
    return Researcher(id=int(researcher_id), username=username)


def get_researcher(db: sqlite_utils.Database, researcher_id: int) -> Researcher | None:
    row = db.execute(
        "SELECT id, username FROM researchers WHERE id = ?", [researcher_id]
    ).fetchone()
    return Researcher(id=row[0], username=row[1]) if row else None


def find_researcher(db: sqlite_utils.Database, username: str) -> Researcher | None:
    row = db.execute(
        "SELECT id, username FROM researchers WHERE username = ?", [username]
    ).fetchone()
    return Researcher(id=row[0], username=row[1]) if row else None


def _throttle_keys(username: str, address: str) -> list[str]:
    # Addresses are kept hashed: the table exists to slow guessing, not to record visitors.
    hashed = hashlib.sha256(address.encode()).hexdigest()[:32]
    return [f"user:{username.lower()}", f"addr:{hashed}"]


def _check_not_throttled(db: sqlite_utils.Database, keys: list[str], now: float) -> None:
    placeholders = ",".join("?" * len(keys))
    row = db.execute(
        f"SELECT max(blocked_until) FROM login_failures WHERE key IN ({placeholders})",  # noqa: S608
        keys,
    ).fetchone()
    if row[0] is not None and row[0] > now:
        raise LoginThrottled(retry_after=int(row[0] - now) + 1)


def _record_failure(db: sqlite_utils.Database, keys: list[str], now: float) -> None:
    with write_transaction(db):
        for key in keys:
            row = db.execute("SELECT failures FROM login_failures WHERE key = ?", [key]).fetchone()
            failures = (row[0] if row else 0) + 1
            delay = 0 if failures <= FREE_FAILURES else 2 ** (failures - FREE_FAILURES)
            db.execute(
                "INSERT OR REPLACE INTO login_failures (key, failures, blocked_until) "
                "VALUES (?, ?, ?)",
                [key, failures, now + min(delay, MAX_DELAY_SECONDS)],
            )


def authenticate(
    db: sqlite_utils.Database, username: str, password: str, address: str, now: float
) -> Researcher | None:
    """The researcher these credentials belong to, or None; raises LoginThrottled.

    A throttled attempt is refused before the password is even checked, so guessing
    faster than the delay gains nothing.
    """
    keys = _throttle_keys(username, address)
    _check_not_throttled(db, keys, now)
    row = db.execute(
        "SELECT id, username, password_hash FROM researchers WHERE username = ?", [username]
    ).fetchone()
    password_matches = check_password_hash(row[2] if row else _DUMMY_HASH, password)
    if row is None or not password_matches:
        _record_failure(db, keys, now)
        return None
    with write_transaction(db):
        db.execute("DELETE FROM login_failures WHERE key = ?", [keys[0]])
    return Researcher(id=row[0], username=row[1])
