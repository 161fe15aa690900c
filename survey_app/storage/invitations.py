"""Single-use invitation links, spent for one-time answer tickets before anyone answers.

Only a SHA-256 hash of each link's token is stored: the tokens are 128 random bits, so a
hash cannot be guessed back, and a stolen database holds no working link. Whoever holds the
list of links can tell who started, never what they answered.

Nor may the write stream tie a response to its link. PostgreSQL's WAL cannot be erased:
it is streamed to replicas, archived and decoded by logical slots, commit by commit, each
with its time. So the link and the response never share a transaction, nor anything that
one could be computed from the other:

1. When the respondent starts (a POST from the invitation page; never a GET, which mail
   scanners make), ``spend_invitation`` deletes the link's row in a transaction of its own
   (deleted, not marked used: an updated row's new version lands in heap order, which is
   spend order) and hands back an answer ticket: a fresh random value and its
   HMAC-SHA256 under the server's secret key, over the survey's id and the value. The
   ticket is made after that transaction and is never stored when issued.
2. The response carries the ticket. ``record_response`` stores sha256(ticket) in
   ``spent_tickets`` (single use) in the response's own transaction.

The ticket is random, so nothing computes it from a link or the link's hash, and the
link's transaction holds no ticket. What remains is time: the link is spent when the
respondent starts and the response stored minutes later, so whoever reads the WAL can tie
the two only within everyone who started and had not answered yet (SECURITY.md).

On SQLite the spend is also checkpointed out of the WAL at once (``erase_write_ahead_log``),
so that a copy of the live files does not even show the order of a spend and the
responses after it. That erasure is best effort: when a long read keeps it from
finishing, the files show the order a PostgreSQL WAL always shows, never which ticket.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from survey_app.storage.backends import Database
from survey_app.storage.database import erase_write_ahead_log, insert_rows, write_transaction
from survey_app.storage.surveys import Survey

TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22,64}")
#: A ticket: 128 random bits and their MAC, both base64url without padding.
#: Fewer links than this made at once, and timing in the write-ahead log (the link spent
#: when its respondent starts, the response stored when they send) narrows a response
#: down to a crowd smaller than statistical offices publish: the owner is warned.
FEW_LINKS = 20
TICKET_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}")


class InvitationError(ValueError):
    """The invitation (a link or a ticket) is missing, unknown, for another survey, or
    already used."""


@dataclass(frozen=True)
class AnswerTicket:
    """A ticket whose MAC was checked for ``survey_id`` (made only by ``read_ticket``)."""

    survey_id: int
    text: str

    @property
    def spent_hash(self) -> str:
        """What ``spent_tickets`` keeps of it once a response used it."""
        return _hash(self.text)


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
            ({"token_hash": _hash(token), "survey_id": survey.id} for token in tokens),
        )
    return tokens


def invitation_is_open(db: Database, survey: Survey, token: str | None) -> bool:
    """Whether this link may still be spent for a ticket to this survey."""
    if not token or not TOKEN_PATTERN.fullmatch(token):
        return False
    row = db.execute(
        "SELECT 1 FROM invitations WHERE token_hash = ? AND survey_id = ?",
        [_hash(token), survey.id],
    ).fetchone()
    return row is not None


def spend_invitation(db: Database, survey: Survey, token: str | None, key: bytes) -> str:
    """Delete the link's row, in a transaction of its own, and return a fresh ticket.

    The conditional DELETE is the check: two starts racing with one link cannot both
    succeed, because only one of them removes a row. ``key`` is the server's current secret
    key; the ticket is drawn after the commit, so nothing of it is in that transaction.
    """
    if not token or not TOKEN_PATTERN.fullmatch(token):
        raise InvitationError("this survey needs the invitation link you were sent")
    with write_transaction(db):
        deleted = db.execute(
            "DELETE FROM invitations WHERE token_hash = ? AND survey_id = ?",
            [_hash(token), survey.id],
        ).rowcount
    if deleted != 1:
        raise InvitationError("this invitation link is not valid or has already been used")
    erase_write_ahead_log(db)  # SQLite only, best effort: see the module's docstring
    value = secrets.token_urlsafe(16)
    return f"{value}.{_mac(key, survey.id, value)}"


def _mac(key: bytes, survey_id: int, value: str) -> str:
    message = f"answer ticket {survey_id} {value}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def read_ticket(survey: Survey, text: str | None, keys: Sequence[bytes]) -> AnswerTicket:
    """The ticket, if one of ``keys`` (the current secret key and its fallbacks) made it
    for this survey; InvitationError otherwise (forged, altered, or another survey's)."""
    if not text or not TICKET_PATTERN.fullmatch(text):
        raise InvitationError("this survey needs the invitation link you were sent")
    value, mac = text.split(".")
    if not any(hmac.compare_digest(mac, _mac(key, survey.id, value)) for key in keys):
        raise InvitationError("this invitation is not valid for this survey")
    return AnswerTicket(survey.id, text)


def ticket_is_open(db: Database, survey: Survey, text: str | None, keys: Sequence[bytes]) -> bool:
    """Whether this ticket is this survey's and no response has used it yet."""
    try:
        ticket = read_ticket(survey, text, keys)
    except InvitationError:
        return False
    row = db.execute(
        "SELECT 1 FROM spent_tickets WHERE ticket_hash = ?", [ticket.spent_hash]
    ).fetchone()
    return row is None


def use_ticket(db: Database, survey: Survey, ticket: AnswerTicket) -> None:
    """Keep the ticket's hash as spent, inside the response's write transaction.

    Raises InvitationError when a response already used it (the caller's transaction
    then rolls back, storing nothing) or when it is another survey's.
    """
    if ticket.survey_id != survey.id:
        raise InvitationError("this invitation is not valid for this survey")
    kept = db.execute(
        "INSERT INTO spent_tickets (ticket_hash, survey_id) VALUES (?, ?) "
        "ON CONFLICT (ticket_hash) DO NOTHING",
        [ticket.spent_hash, survey.id],
    ).rowcount
    if kept != 1:
        raise InvitationError("this invitation link is not valid or has already been used")
