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
stops working), after an idle time, and at an absolute maximum age. Every session of an
account ends at once when it is deactivated or its password is reset or set from a link;
changing one's own password ends every session but the one it was changed in.

Roles: the first account ever created is an administrator and adopts every survey nobody
owned; administrators add researchers, deactivate and reactivate them, reset passwords and
make or unmake administrators, but never leave the app without an active administrator.
A deactivated account, and one still waiting for its first password, logs in exactly as an
unknown username does: refused with the same words after the same work. An account added
in the browser gets no password but a single-use link to set one (``password_links``: only
the token's hash, an expiry, one live link per account). Each change is recorded as an
event (storage/events.py) in the transaction that makes it.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from werkzeug.security import check_password_hash, generate_password_hash

from survey_app.config import DEFAULT_PASSWORD_HASH_METHOD
from survey_app.storage.backends import Database
from survey_app.storage.database import write_transaction
from survey_app.storage.events import COMMAND_LINE, record_event
from survey_app.storage.surveys import adopt_ownerless_surveys

USERNAME_PATTERN = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
MIN_PASSWORD_LENGTH = 10
# One hash at a time per process: scrypt at these parameters takes 128 MiB, so parallel
# logins cannot add up to gigabytes, and a queue of them only waits.
_hashing = threading.Semaphore(1)
# A session's last activity is written at most this often (each write takes the lock).
SESSION_TOUCH_SECONDS = 60
# How long a link to set a password stays usable: a week to find the mail and use it.
PASSWORD_LINK_SECONDS = 7 * 24 * 3600
ADMIN, RESEARCHER = "admin", "researcher"
# Stored instead of a hash while an account waits for its first password (or after a
# reset): no password hashes to it, and a login compares against the dummy hash instead.
NO_PASSWORD = "!"  # noqa: S105 (a marker, not a password)


def current_time() -> float:
    """The clock for throttles and sessions (seconds since the epoch); tests replace it."""
    return time.time()


@dataclass(frozen=True)
class Researcher:
    id: int
    username: str
    is_admin: bool


@dataclass(frozen=True)
class Account:
    """One line of the administrators' list of people."""

    username: str
    is_admin: bool
    active: bool
    has_password: bool  # False until the account's link is used
    created_on: datetime.date


class AccountError(ValueError):
    """An account change the rules refuse; the message says why (in the terminal's
    English: each subclass is a fact the browser words in the page's language)."""


class UsernameFormatError(AccountError):
    def __init__(self) -> None:
        super().__init__("usernames are 1-64 letters, digits and . _ @ -")


class UsernameTakenError(AccountError):
    def __init__(self, username: str) -> None:
        super().__init__(f"researcher {username!r} already exists")
        self.username = username


class PasswordTooShortError(AccountError):
    def __init__(self) -> None:
        super().__init__(f"passwords need at least {MIN_PASSWORD_LENGTH} characters")


class WrongPasswordError(AccountError):
    def __init__(self) -> None:
        super().__init__("the current password is wrong")


class UnknownAccountError(AccountError):
    def __init__(self, username: str) -> None:
        super().__init__(f"no researcher named {username!r}")
        self.username = username


class LastAdministratorError(AccountError):
    """The change would leave no active administrator to manage the accounts."""

    def __init__(self, username: str) -> None:
        super().__init__(f"{username!r} is the last active administrator")
        self.username = username


class OwnAccountError(AccountError):
    """An administrator may not deactivate their own account or reset its password: they
    would lock themselves out (their own password changes on their account page)."""

    def __init__(self) -> None:
        super().__init__("not on one's own account")


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


def check_new_username(db: Database, username: str) -> None:
    """Refuse a malformed or taken username before anyone is asked for a password."""
    if not USERNAME_PATTERN.fullmatch(username):
        raise UsernameFormatError()
    if find_researcher(db, username) is not None:
        raise UsernameTakenError(username)


def _check_password_length(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise PasswordTooShortError()


def create_researcher(
    db: Database,
    username: str,
    password: str,
    *,
    admin: bool = False,
    actor: str = COMMAND_LINE,
) -> Researcher:
    """A new account with this password (the operator's ``create-researcher``); the first
    account ever is an administrator whatever ``admin`` says."""
    check_new_username(db, username)
    _check_password_length(password)
    password_hash = _hash_password(password, _hash_method())
    with write_transaction(db):
        return _insert_account(db, username, password_hash, admin, actor)


def add_researcher(
    db: Database, actor: Researcher, username: str, now: float
) -> tuple[Researcher, str]:
    """An administrator adds an account with no password; returns it and the token of its
    single-use link to set one (only the token's hash is stored: show it now or never)."""
    check_new_username(db, username)
    with write_transaction(db):
        researcher = _insert_account(db, username, NO_PASSWORD, False, actor.username)
        return researcher, _new_password_link(db, researcher.id, now)


def _insert_account(
    db: Database, username: str, password_hash: str, admin: bool, actor: str
) -> Researcher:
    """Insert the account inside the caller's write transaction, recorded as an event.

    The username is checked again here: another process may have taken it meanwhile. The
    first account becomes the administrator and the owner of every survey nobody owned,
    which until then any researcher could see.
    """
    if db.execute("SELECT 1 FROM researchers WHERE username = ?", [username]).fetchone():
        raise UsernameTakenError(username)
    first = db.execute("SELECT count(*) FROM researchers").fetchone()[0] == 0
    is_admin = admin or first
    researcher_id = int(
        db.execute(
            "INSERT INTO researchers (username, password_hash, created_on, role) "
            "VALUES (?, ?, ?, ?) RETURNING id",
            [
                username,
                password_hash,
                datetime.date.today().isoformat(),
                ADMIN if is_admin else RESEARCHER,
            ],
        ).fetchone()[0]
    )
    if first:
        adopt_ownerless_surveys(db, researcher_id)
    record_event(db, actor, "administrator added" if is_admin else "researcher added", username)
    return Researcher(id=researcher_id, username=username, is_admin=is_admin)


# A Researcher's columns, from the table aliased ``r``.
_RESEARCHER_COLUMNS = "r.id, r.username, r.role = 'admin'"


def _researcher(row: Sequence[Any]) -> Researcher:
    """A Researcher from the columns of ``_RESEARCHER_COLUMNS``."""
    return Researcher(id=row[0], username=row[1], is_admin=bool(row[2]))


def find_researcher(db: Database, username: str) -> Researcher | None:
    row = db.execute(
        f"SELECT {_RESEARCHER_COLUMNS} FROM researchers r WHERE username = ?",  # noqa: S608
        [username],
    ).fetchone()
    return _researcher(row) if row else None


def list_accounts(db: Database) -> list[Account]:
    """Every account, administrators first, then by username."""
    rows = db.execute(
        "SELECT username, role = 'admin', active, password_hash != ?, created_on "
        "FROM researchers ORDER BY role = 'admin' DESC, username COLLATE BINARY",
        [NO_PASSWORD],
    ).fetchall()
    return [
        Account(
            username=row[0],
            is_admin=bool(row[1]),
            active=bool(row[2]),
            has_password=bool(row[3]),
            created_on=datetime.date.fromisoformat(row[4]),
        )
        for row in rows
    ]


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


def _reserve_attempt(db: Database, keys: list[tuple[str, Throttle]], now: float) -> None:
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
                "INSERT INTO login_failures (key, failures, last_failure, forget_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET failures = "
                "excluded.failures, last_failure = excluded.last_failure, "
                "forget_at = excluded.forget_at",
                [key, failures, now, now + failures * throttle.forget_seconds],
            )


def _give_back(db: Database, keys: list[tuple[str, Throttle]]) -> None:
    """A correct password: this browser's own count starts over, the shared counts lose
    the reserved failure (the attempts of others still count)."""
    with write_transaction(db):
        for key, throttle in keys:
            if throttle in (PER_DEVICE, PER_ACCOUNT_AND_ADDRESS):
                db.execute("DELETE FROM login_failures WHERE key = ?", [key])
            else:
                db.execute(
                    "UPDATE login_failures SET failures = CASE WHEN failures > 1 THEN failures - 1 "
                    "ELSE 0 END WHERE key = ?",
                    [key],
                )


def authenticate(
    db: Database,
    username: str,
    password: str,
    address: str,
    now: float,
    trusted_device: str | None = None,
) -> Researcher | None:
    """The researcher these credentials belong to, or None; raises LoginThrottled.

    A deactivated account, or one without a password yet, is looked up as an unknown
    username is: its password checked against the dummy hash, then refused.

    ``trusted_device`` is the id from a device cookie the caller has verified belongs to
    this username: that browser then has its own count instead of the shared ones. A
    throttled attempt is refused before the password is even checked, so guessing faster
    than the delay gains nothing and costs the server no hashing.
    """
    keys = _throttle_keys(username, address, trusted_device)
    _reserve_attempt(db, keys, now)
    row = db.execute(
        f"SELECT {_RESEARCHER_COLUMNS}, password_hash FROM researchers r "  # noqa: S608
        "WHERE username = ? AND active = 1 AND password_hash != ?",
        [username, NO_PASSWORD],
    ).fetchone()
    method = _hash_method()
    if not _password_matches(row[3] if row else None, password, method):
        return None
    _give_back(db, keys)
    if not row[3].startswith(method + "$"):
        _upgrade_hash(db, row[0], row[3], password, method)
    return _researcher(row[:3])


def _upgrade_hash(
    db: Database, researcher_id: int, old_hash: str, password: str, method: str
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


def start_session(db: Database, researcher: Researcher, now: float, limits: SessionLimits) -> str:
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


def _delete_expired_sessions(db: Database, now: float, limits: SessionLimits) -> None:
    db.execute(
        "DELETE FROM researcher_sessions WHERE started_at < ? OR last_seen < ?",
        [now - limits.max_seconds, now - limits.idle_seconds],
    )


def session_researcher(
    db: Database, token: str, now: float, limits: SessionLimits
) -> Researcher | None:
    """The researcher whose live session this token is, or None (ended, idle, too old, or
    its account deactivated).

    A live session's last activity moves to now (written at most once a minute).
    """
    token_hash = _token_hash(token)
    row = db.execute(
        f"SELECT s.started_at, s.last_seen, {_RESEARCHER_COLUMNS} "  # noqa: S608
        "FROM researcher_sessions s JOIN researchers r ON r.id = s.researcher_id "
        "WHERE s.token_hash = ? AND r.active = 1",
        [token_hash],
    ).fetchone()
    if row is None:
        return None
    started_at, last_seen = row[:2]
    if now - last_seen > limits.idle_seconds or now - started_at > limits.max_seconds:
        end_session(db, token)
        return None
    if now - last_seen >= SESSION_TOUCH_SECONDS:
        with write_transaction(db):
            db.execute(
                "UPDATE researcher_sessions SET last_seen = ? "
                "WHERE token_hash = ? AND last_seen < ?",
                [now, token_hash, now],
            )
    return _researcher(row[2:])


def end_session(db: Database, token: str) -> None:
    """Revoke a session: its cookie, wherever copied, no longer logs anyone in."""
    with write_transaction(db):
        db.execute("DELETE FROM researcher_sessions WHERE token_hash = ?", [_token_hash(token)])


def _end_sessions(db: Database, researcher_id: int, keep: str | None = None) -> None:
    """End every session of the account but ``keep`` (a token), inside the caller's write."""
    db.execute(
        "DELETE FROM researcher_sessions WHERE researcher_id = ? AND token_hash != ?",
        [researcher_id, _token_hash(keep) if keep is not None else ""],
    )


# Single-use links to set a password: for a new account, or after a reset.


def _new_password_link(db: Database, researcher_id: int, now: float) -> str:
    """A new link's token, inside the caller's write; the account's older link (and every
    expired one) is deleted: one live link per account, the latest."""
    token = secrets.token_urlsafe(32)
    db.execute(
        "DELETE FROM password_links WHERE researcher_id = ? OR expires_at <= ?",
        [researcher_id, now],
    )
    db.execute(
        "INSERT INTO password_links (token_hash, researcher_id, expires_at) VALUES (?, ?, ?)",
        [_token_hash(token), researcher_id, now + PASSWORD_LINK_SECONDS],
    )
    return token


def password_link_account(db: Database, token: str, now: float) -> Researcher | None:
    """The active account a live link sets the password of; None for a link that is
    unknown, used, expired or whose account is deactivated (alike: nothing tells which)."""
    row = db.execute(
        f"SELECT {_RESEARCHER_COLUMNS} "  # noqa: S608 (constant columns)
        "FROM password_links l JOIN researchers r ON r.id = l.researcher_id "
        "WHERE l.token_hash = ? AND l.expires_at > ? AND r.active = 1",
        [_token_hash(token), now],
    ).fetchone()
    return _researcher(row) if row else None


def set_password_with_link(
    db: Database, token: str, password: str, now: float
) -> Researcher | None:
    """Set the password of the link's account and use the link up; None if the link is
    not live (see ``password_link_account``). Every session of the account ends: whoever
    holds the link now holds the account.

    The hash is computed outside the write (it takes 0.4 s); the link is checked again
    inside it, so of two uses at once exactly one sets the password.
    """
    _check_password_length(password)
    if password_link_account(db, token, now) is None:
        return None
    password_hash = _hash_password(password, _hash_method())
    with write_transaction(db):
        researcher = password_link_account(db, token, now)
        if researcher is None:
            return None
        db.execute("DELETE FROM password_links WHERE researcher_id = ?", [researcher.id])
        _store_password(db, researcher, password_hash, "password set")
        _end_sessions(db, researcher.id)
    return researcher


def _store_password(db: Database, researcher: Researcher, password_hash: str, action: str) -> None:
    db.execute(
        "UPDATE researchers SET password_hash = ? WHERE id = ?", [password_hash, researcher.id]
    )
    record_event(db, researcher.username, action, researcher.username)


def change_password(
    db: Database,
    researcher: Researcher,
    current: str,
    new: str,
    *,
    address: str,
    now: float,
    keep_session: str,
) -> None:
    """The researcher changes their own password, the current one required; every other
    session of theirs ends, ``keep_session`` (the token of the one asking) stays.

    The current password is checked as a login is (``authenticate``), so a wrong one counts
    under the same throttles and a stolen session cannot guess it faster than a login
    could. Raises PasswordTooShortError (before anything counts), LoginThrottled or
    WrongPasswordError.
    """
    _check_password_length(new)
    if authenticate(db, researcher.username, current, address, now) is None:
        raise WrongPasswordError()
    password_hash = _hash_password(new, _hash_method())
    with write_transaction(db):
        _store_password(db, researcher, password_hash, "password changed")
        _end_sessions(db, researcher.id, keep=keep_session)


# What administrators do to other accounts. Each is one write transaction, recorded as an
# event with the administrator as actor and the account's username as subject.


def _account_id(db: Database, username: str) -> int:
    row = db.execute("SELECT id FROM researchers WHERE username = ?", [username]).fetchone()
    if row is None:
        raise UnknownAccountError(username)
    return int(row[0])


def _not_own(actor: Researcher, account_id: int) -> None:
    if actor.id == account_id:
        raise OwnAccountError()


def _keep_an_administrator(db: Database, username: str, account_id: int) -> None:
    """Refuse a change that takes this account out of the active administrators when it
    is the only one left: nobody could manage the accounts from the browser after it."""
    others = db.execute(
        "SELECT count(*) FROM researchers WHERE role = 'admin' AND active = 1 AND id != ?",
        [account_id],
    ).fetchone()[0]
    is_active_admin = db.execute(
        "SELECT 1 FROM researchers WHERE id = ? AND role = 'admin' AND active = 1", [account_id]
    ).fetchone()
    if is_active_admin and others == 0:
        raise LastAdministratorError(username)


def set_active(db: Database, actor: Researcher, username: str, active: bool) -> None:
    """Deactivate (every session and link of the account ends; it can no longer log in)
    or reactivate an account, never one's own, never the last active administrator."""
    with write_transaction(db):
        account_id = _account_id(db, username)
        _not_own(actor, account_id)
        if not active:
            _keep_an_administrator(db, username, account_id)
            _end_sessions(db, account_id)
            db.execute("DELETE FROM password_links WHERE researcher_id = ?", [account_id])
        db.execute("UPDATE researchers SET active = ? WHERE id = ?", [int(active), account_id])
        action = "researcher reactivated" if active else "researcher deactivated"
        record_event(db, actor.username, action, username)


def set_administrator(db: Database, actor: Researcher, username: str, admin: bool) -> None:
    """Make an account an administrator, or an ordinary researcher again (one's own too,
    while another active administrator remains)."""
    with write_transaction(db):
        account_id = _account_id(db, username)
        if not admin:
            _keep_an_administrator(db, username, account_id)
        role = ADMIN if admin else RESEARCHER
        db.execute("UPDATE researchers SET role = ? WHERE id = ?", [role, account_id])
        action = "administrator made" if admin else "administrator unmade"
        record_event(db, actor.username, action, username)


def reset_password(db: Database, actor: Researcher, username: str, now: float) -> str:
    """Forget another account's password and end its sessions; returns the token of a new
    single-use link to set one (the account's earlier link stops working)."""
    with write_transaction(db):
        account_id = _account_id(db, username)
        _not_own(actor, account_id)
        db.execute(
            "UPDATE researchers SET password_hash = ? WHERE id = ?", [NO_PASSWORD, account_id]
        )
        _end_sessions(db, account_id)
        record_event(db, actor.username, "password reset", username)
        return _new_password_link(db, account_id, now)
