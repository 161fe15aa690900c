"""Researcher accounts: creating them, checking passwords, slowing down guessing, sessions.

Passwords are hashed with scrypt at OWASP's parameters (N = 2^17, r = 8, p = 1: 128 MiB
and about 0.4 s per hash), so a stolen database does not give passwords up to GPU
guessing. Older hashes keep working and are re-hashed at the current parameters on the
next successful login.

Guessing is slowed by decaying failure counts (``Throttle``) kept in the database, so
every worker process sees the same counts. A login attempt first *reserves* its failure
in one write transaction, under every count that applies to it, and only then checks the
password; a correct password gives the reservation back. Parallel attempts therefore queue
on the reservation and cannot slip past a count together, and the expensive hash runs only
for attempts the counts allowed: a flood of guesses, for real usernames or made-up ones,
costs no more hashing than the counts let through.

Which counts apply (SECURITY.md explains the choice):

- a browser that has logged in to this account before (a signed device cookie, checked by
  the login route) has a strict count of its own, and nothing else applies to it, so
  guesses sent from anywhere else cannot lock the owner out of their own browser;
- any other attempt counts strictly per (account, address), moderately per address
  (guessing many accounts from one place) and leniently per account (guessing one account
  from many places).

Sessions: logging in stores a random token's hash in ``researcher_sessions``; the session
cookie holds the token. A session ends on logout (the row is deleted, so a copied cookie
stops working), after an idle time, and at an absolute maximum age.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import math
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils
from werkzeug.security import check_password_hash, generate_password_hash

from survey_app.config import DEFAULT_PASSWORD_HASH_METHOD
from survey_app.storage.database import write_transaction

USERNAME_PATTERN = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
MIN_PASSWORD_LENGTH = 10
# One hash at a time per process: scrypt at these parameters takes 128 MiB, so parallel
# logins cannot add up to gigabytes, and a queue of them only waits.
_hashing = threading.Semaphore(1)
# A session's last activity is written at most this often (each write takes the lock).
SESSION_TOUCH_SECONDS = 60


def current_time() -> float:
    """The clock for throttles and sessions (seconds since the epoch); tests replace it."""
    return time.time()


@dataclass(frozen=True)
class Researcher:
    id: int
    username: str


class AccountError(ValueError):
    """A username or password that cannot be used; the message says why."""


class LoginThrottled(Exception):
    """Too many recent failures for this account, address or browser."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many failed logins; try again in {retry_after} seconds")
        self.retry_after = retry_after


@dataclass(frozen=True)
class Throttle:
    """A count of failed logins that forgets one failure every ``forget_seconds``.

    The first ``free`` failures cost nothing (typos); past them, the next attempt must
    wait 2^(count - free) seconds after the last failure, at most ``max_delay``. In the
    long run a key gets about one guess per ``forget_seconds``; a burst beyond the free
    ones is slowed exponentially.
    """

    prefix: str
    free: int
    forget_seconds: float
    max_delay: float

    def count_at(self, failures: float, last_failure: float, now: float) -> float:
        return max(0.0, failures - max(0.0, now - last_failure) / self.forget_seconds)

    def delay(self, failures: float) -> float:
        if failures <= self.free:
            return 0.0
        return min(float(2.0 ** (failures - self.free)), self.max_delay)


# The owner's own browser: as strict as (account, address), and the only count for it.
PER_DEVICE = Throttle("device", free=3, forget_seconds=15 * 60, max_delay=15 * 60)
# One account guessed from one address: the attacker's own count, strict.
PER_ACCOUNT_AND_ADDRESS = Throttle("pair", free=3, forget_seconds=15 * 60, max_delay=15 * 60)
# Many accounts guessed from one address (password spraying).
PER_ADDRESS = Throttle("address", free=10, forget_seconds=3 * 60, max_delay=15 * 60)
# One account guessed from many addresses: lenient, since a browser without the device
# cookie (the owner on a new machine) shares it with every attacker. One address alone
# cannot reach it: its own counts hold it far below.
PER_ACCOUNT = Throttle("account", free=20, forget_seconds=60, max_delay=5 * 60)


@dataclass(frozen=True)
class SessionLimits:
    """How long a researcher's session lives: since its last request, and at most."""

    idle_seconds: float
    max_seconds: float


def _owasp_hash_method() -> str:
    return DEFAULT_PASSWORD_HASH_METHOD


# Read at each hash, so a changed setting takes effect at the next login.
_hash_method: Callable[[], str] = _owasp_hash_method


def read_hash_method_from(setting: Callable[[], str]) -> None:
    """Take the method new passwords are hashed with from ``setting``, read at each hash.

    The app passes a reader of its ``PASSWORD_HASH_METHOD`` at start (tests lower it to
    keep logins fast), so accounts need not know where settings live; until then, OWASP's
    scrypt.
    """
    global _hash_method
    _hash_method = setting


def _hash_password(password: str, method: str) -> str:
    with _hashing:
        return generate_password_hash(password, method)


@functools.cache
def _dummy_hash(method: str) -> str:
    """Compared against when the username is unknown, so a miss costs what a hit costs
    and neither response times nor the server's load reveal which usernames exist."""
    return _hash_password("not a password: equalizes timing", method)


def _password_matches(stored_hash: str | None, password: str, method: str) -> bool:
    reference = stored_hash if stored_hash is not None else _dummy_hash(method)
    with _hashing:
        return check_password_hash(reference, password) and stored_hash is not None


def check_new_username(db: sqlite_utils.Database, username: str) -> None:
    """Refuse a malformed or taken username before anyone is asked for a password."""
    if not USERNAME_PATTERN.fullmatch(username):
        raise AccountError("usernames are 1-64 letters, digits and . _ @ -")
    if find_researcher(db, username) is not None:
        raise _username_taken(username)


def _username_taken(username: str) -> AccountError:
    return AccountError(f"researcher {username!r} already exists")


def create_researcher(db: sqlite_utils.Database, username: str, password: str) -> Researcher:
    check_new_username(db, username)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(f"passwords need at least {MIN_PASSWORD_LENGTH} characters")
    password_hash = _hash_password(password, _hash_method())
    with write_transaction(db):
        # Checked again inside the write: another process may have taken it meanwhile.
        if db.execute("SELECT 1 FROM researchers WHERE username = ?", [username]).fetchone():
            raise _username_taken(username)
        researcher_id = db.execute(
            "INSERT INTO researchers (username, password_hash, created_on) VALUES (?, ?, ?) "
            "RETURNING id",
            [username, password_hash, datetime.date.today().isoformat()],
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


def _hashed(text: str) -> str:
    # Addresses and device ids are kept hashed: the table exists to slow guessing, not to
    # record visitors.
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _throttle_keys(
    username: str, address: str, trusted_device: str | None
) -> list[tuple[str, Throttle]]:
    account = username.lower()
    if trusted_device is not None:
        return [(f"device:{_hashed(trusted_device)}", PER_DEVICE)]
    return [
        (f"pair:{_hashed(account + chr(0) + address)}", PER_ACCOUNT_AND_ADDRESS),
        (f"address:{_hashed(address)}", PER_ADDRESS),
        (f"account:{account}", PER_ACCOUNT),
    ]


def _reserve_attempt(
    db: sqlite_utils.Database, keys: list[tuple[str, Throttle]], now: float
) -> None:
    """Count this attempt as a failure under every key, or raise LoginThrottled.

    Check and count happen in one write transaction, so of any number of parallel
    attempts exactly as many get through as would one after another.
    """
    with write_transaction(db):
        db.execute("DELETE FROM login_failures WHERE forget_at <= ?", [now])
        counts = []
        for key, throttle in keys:
            row = db.execute(
                "SELECT failures, last_failure FROM login_failures WHERE key = ?", [key]
            ).fetchone()
            count = throttle.count_at(row[0], row[1], now) if row else 0.0
            wait = (row[1] + throttle.delay(row[0]) - now) if row else 0.0
            if wait > 0:
                raise LoginThrottled(retry_after=math.ceil(wait))
            counts.append(count + 1)
        for (key, throttle), failures in zip(keys, counts, strict=True):
            db.execute(
                "INSERT OR REPLACE INTO login_failures (key, failures, last_failure, forget_at) "
                "VALUES (?, ?, ?, ?)",
                [key, failures, now, now + failures * throttle.forget_seconds],
            )


def _give_back(db: sqlite_utils.Database, keys: list[tuple[str, Throttle]]) -> None:
    """A correct password: this browser's own count starts over, the shared counts lose
    the reserved failure (the attempts of others still count)."""
    with write_transaction(db):
        for key, throttle in keys:
            if throttle in (PER_DEVICE, PER_ACCOUNT_AND_ADDRESS):
                db.execute("DELETE FROM login_failures WHERE key = ?", [key])
            else:
                db.execute(
                    "UPDATE login_failures SET failures = max(failures - 1, 0) WHERE key = ?",
                    [key],
                )


def authenticate(
    db: sqlite_utils.Database,
    username: str,
    password: str,
    address: str,
    now: float,
    trusted_device: str | None = None,
) -> Researcher | None:
    """The researcher these credentials belong to, or None; raises LoginThrottled.

    ``trusted_device`` is the id from a device cookie the caller has verified belongs to
    this username: that browser then has its own count instead of the shared ones. A
    throttled attempt is refused before the password is even checked, so guessing faster
    than the delay gains nothing and costs the server no hashing.
    """
    keys = _throttle_keys(username, address, trusted_device)
    _reserve_attempt(db, keys, now)
    row = db.execute(
        "SELECT id, username, password_hash FROM researchers WHERE username = ?", [username]
    ).fetchone()
    method = _hash_method()
    if not _password_matches(row[2] if row else None, password, method):
        return None
    _give_back(db, keys)
    if not row[2].startswith(method + "$"):
        _upgrade_hash(db, row[0], row[2], password, method)
    return Researcher(id=row[0], username=row[1])


def _upgrade_hash(
    db: sqlite_utils.Database, researcher_id: int, old_hash: str, password: str, method: str
) -> None:
    """Re-hash a password stored at older parameters, now that we know it."""
    new_hash = _hash_password(password, method)
    with write_transaction(db):
        db.execute(
            "UPDATE researchers SET password_hash = ? WHERE id = ? AND password_hash = ?",
            [new_hash, researcher_id, old_hash],
        )


def _token_hash(token: str) -> str:
    # Only the hash is stored: a copy of the database does not let anyone in.
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(
    db: sqlite_utils.Database, researcher: Researcher, now: float, limits: SessionLimits
) -> str:
    """A new session for this researcher; returns the token for the session cookie."""
    token = secrets.token_urlsafe(32)
    with write_transaction(db):
        _delete_expired_sessions(db, now, limits)
        db.execute(
            "INSERT INTO researcher_sessions (token_hash, researcher_id, started_at, last_seen) "
            "VALUES (?, ?, ?, ?)",
            [_token_hash(token), researcher.id, now, now],
        )
    return token


def _delete_expired_sessions(db: sqlite_utils.Database, now: float, limits: SessionLimits) -> None:
    db.execute(
        "DELETE FROM researcher_sessions WHERE started_at < ? OR last_seen < ?",
        [now - limits.max_seconds, now - limits.idle_seconds],
    )


def session_researcher(
    db: sqlite_utils.Database, token: str, now: float, limits: SessionLimits
) -> Researcher | None:
    """The researcher whose live session this token is, or None (ended, idle or too old).

    A live session's last activity moves to now (written at most once a minute).
    """
    token_hash = _token_hash(token)
    row = db.execute(
        "SELECT s.started_at, s.last_seen, r.id, r.username FROM researcher_sessions s "
        "JOIN researchers r ON r.id = s.researcher_id WHERE s.token_hash = ?",
        [token_hash],
    ).fetchone()
    if row is None:
        return None
    started_at, last_seen, researcher_id, username = row
    if now - last_seen > limits.idle_seconds or now - started_at > limits.max_seconds:
        end_session(db, token)
        return None
    if now - last_seen >= SESSION_TOUCH_SECONDS:
        with write_transaction(db):
            db.execute(
                "UPDATE researcher_sessions SET last_seen = max(last_seen, ?) WHERE token_hash = ?",
                [now, token_hash],
            )
    return Researcher(id=researcher_id, username=username)


def end_session(db: sqlite_utils.Database, token: str) -> None:
    """Revoke a session: its cookie, wherever copied, no longer logs anyone in."""
    with write_transaction(db):
        db.execute("DELETE FROM researcher_sessions WHERE token_hash = ?", [_token_hash(token)])
