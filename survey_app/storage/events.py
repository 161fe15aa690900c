"""The record of what was done to surveys and accounts: who, what, to which, when.

An ethics board asks when and by whom data was destroyed; this answers it. An event never
holds an answer, a count or a password: an actor (a username, or ``command line``), an
action word (``survey deleted``, ``researcher deactivated``…) and its subject (a survey's
slug and title, or a username). Callers record inside their own write transaction, so
the event and the change it describes are stored together or not at all.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from survey_app.storage.backends import Database

COMMAND_LINE = "command line"


@dataclass(frozen=True)
class Event:
    happened_at: str
    actor: str
    action: str
    subject: str


def record_event(db: Database, actor: str, action: str, subject: str) -> None:
    """Record an event; call inside the write transaction that makes the change."""
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    db.execute(
        "INSERT INTO events (happened_at, actor, action, subject) VALUES (?, ?, ?, ?)",
        [now, actor, action, subject],
    )


def recent_events(db: Database, limit: int = 200) -> list[Event]:
    """The latest events first."""
    rows = db.execute(
        "SELECT happened_at, actor, action, subject FROM events ORDER BY id DESC LIMIT ?",
        [limit],
    ).fetchall()
    return [Event(*row) for row in rows]
