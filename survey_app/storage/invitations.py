"""Single-use invitation links for surveys that only invited people may answer.

Only a SHA-256 hash of each token is stored: the tokens are 128 random bits, so a hash
cannot be guessed back, and a stolen database holds no working link. No column ties a
response to the invitation it used: no shared id, no time. Whoever holds the list of
links can tell who answered, never what they answered.

Nor does the order of writes tie them. Whoever copies the live database *and its WAL*
sees each commit's pages in commit order, so a link used up in the commit that stores
its response (or in the commit just before it) names that response. So a link is used up
in a commit of its own, and that commit is checkpointed out of the WAL (``db.
erase_write_ahead_log``) before the response is stored: no copy of the files ever holds
both the link's use and its response as changes, only the database file's state, in
which used links carry no order. ``responses.record_response`` runs the steps.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from survey_app.storage.backends import Database
from survey_app.storage.database import erase_write_ahead_log, insert_rows, write_transaction
from survey_app.storage.surveys import Survey

TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22,64}")


class InvitationError(ValueError):
    """The invitation is missing, unknown, for another survey, or already used."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_invitations(db: Database, survey: Survey, count: int) -> list[str]:
    """Make ``count`` fresh tokens for the survey; only their hashes are kept."""
    if count < 1:
        raise ValueError("count must be at least 1")
    tokens = [secrets.token_urlsafe(16) for _ in range(count)]
    with write_transaction(db):
        insert_rows(
            db,
            "invitations",
            ({"token_hash": _hash(token), "survey_id": survey.id, "used": 0} for token in tokens),
        )
    return tokens


def invitation_is_open(db: Database, survey: Survey, token: str | None) -> bool:
    """Whether this token may still answer this survey (checked again when storing)."""
    if not token or not TOKEN_PATTERN.fullmatch(token):
        return False
    row = db.execute(
        "SELECT used FROM invitations WHERE token_hash = ? AND survey_id = ?",
        [_hash(token), survey.id],
    ).fetchone()
    return row is not None and row[0] == 0


class InvitationBusyError(RuntimeError):
    """The link's use could not be erased from the WAL in time; the link is open again."""


def use_invitation(db: Database, survey: Survey, token: str | None) -> None:
    """Mark the token used, in a commit of its own that is then erased from the WAL.

    The conditional UPDATE is the check: two submissions racing with one token cannot
    both succeed, because only one of them changes a row. If the WAL cannot be emptied
    (a long read holds it), the use is undone and ``InvitationBusyError`` raised: storing
    the response now would put it in the WAL right behind the use.
    """
    if not token or not TOKEN_PATTERN.fullmatch(token):
        raise InvitationError("this survey needs the invitation link you were sent")
    with write_transaction(db):
        changed = db.execute(
            "UPDATE invitations SET used = 1 WHERE token_hash = ? AND survey_id = ? AND used = 0",
            [_hash(token), survey.id],
        ).rowcount
    if changed != 1:
        raise InvitationError("this invitation link is not valid or has already been used")
    if not erase_write_ahead_log(db):
        release_invitation(db, survey, token)
        raise InvitationBusyError("the survey is busy; nothing was stored")


def release_invitation(db: Database, survey: Survey, token: str) -> None:
    """Open a used token again: its response could not be stored after all."""
    with write_transaction(db):
        db.execute(
            "UPDATE invitations SET used = 0 WHERE token_hash = ? AND survey_id = ?",
            [_hash(token), survey.id],
        )
