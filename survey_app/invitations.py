"""Single-use invitation links for surveys that only invited people may answer.

Only a SHA-256 hash of each token is stored: the tokens are 128 random bits, so a hash
cannot be guessed back, and a stolen database holds no working link. Using a link marks it
used in the same transaction that stores the response, but nothing ties the two rows
together: no shared id, no time. Whoever holds the list of links can tell who answered,
never what they answered.
"""

from __future__ import annotations

import hashlib
import re
import secrets

import sqlite_utils

from .db import write_transaction
from .surveys import Survey

TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22,64}")


class InvitationError(ValueError):
    """The invitation is missing, unknown, for another survey, or already used."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_invitations(db: sqlite_utils.Database, survey: Survey, count: int) -> list[str]:
    """Make ``count`` fresh tokens for the survey; only their hashes are kept."""
    if count < 1:
        raise ValueError("count must be at least 1")
    tokens = [secrets.token_urlsafe(16) for _ in range(count)]
    with write_transaction(db):
        db.table("invitations").insert_all(
            ({"token_hash": _hash(token), "survey_id": survey.id, "used": 0} for token in tokens),
            batch_size=1000,
        )
    return tokens


def invitation_is_open(db: sqlite_utils.Database, survey: Survey, token: str | None) -> bool:
    """Whether this token may still answer this survey (checked again when storing)."""
    if not token or not TOKEN_PATTERN.fullmatch(token):
        return False
    row = db.execute(
        "SELECT used FROM invitations WHERE token_hash = ? AND survey_id = ?",
        [_hash(token), survey.id],
    ).fetchone()
    return row is not None and row[0] == 0


def use_invitation(db: sqlite_utils.Database, survey: Survey, token: str | None) -> None:
    """Mark the token used; call inside the response's write transaction.

    The conditional UPDATE is the check: two submissions racing with one token cannot
    both succeed, because only one of them changes a row.
    """
    if not token or not TOKEN_PATTERN.fullmatch(token):
        raise InvitationError("this survey needs the invitation link you were sent")
    changed = db.execute(
        "UPDATE invitations SET used = 1 WHERE token_hash = ? AND survey_id = ? AND used = 0",
        [_hash(token), survey.id],
    ).rowcount
    if changed != 1:
        raise InvitationError("this invitation link is not valid or has already been used")
