"""A copy of the live SQLite files must not tie an invitation response to its link.

(PostgreSQL's WAL stream, which nothing erases: ``test_wal_stream_linkability.py``.)

The attack from the security review: copy ``survey.db``, ``survey.db-wal`` and
``survey.db-shm`` from the running server, replay the WAL commit by commit (the WAL keeps
every commit's pages in commit order until a checkpoint), and watch which invitation row
turns used (now: is deleted) and which response row appears in the same or the next
commit. With the links file (whose tokens the attacker hashes) that names the invitee
behind each response. It tied 10 of 10 when the link was used up in the response's own
commit. Now a link is spent for an answer ticket when its respondent starts
(``storage/invitations.py``), and that commit is erased from the WAL at once.

Here the files are copied at every moment the app's connection starts a statement (so
right after every commit, before anything that follows it, checkpoints included) and
after every request; each copy is replayed as the attacker would.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask

from survey_app.domain.definitions import load_definition
from survey_app.domain.survey_model import SurveyDefinition
from survey_app.storage.invitations import create_invitations
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.examples import INVITE_ONLY
from tests.support.invitations import start

INVITATIONS = 10

WAL_HEADER = 32
FRAME_HEADER = 24


@dataclass(frozen=True)
class Copy:
    database: bytes
    wal: bytes
    shm: bytes


def copy_live_files(path: Path) -> Copy:
    def read(suffix: str) -> bytes:
        file = Path(f"{path}{suffix}")
        return file.read_bytes() if file.exists() else b""

    return Copy(read(""), read("-wal"), read("-shm"))


def wal_commits(wal: bytes) -> list[list[tuple[int, bytes]]]:
    """The WAL's valid frames grouped by commit: [(page number, page image), ...] each.

    A frame belongs to the current WAL when its salts match the header's; a frame whose
    "database size" field is non-zero ends a commit.
    """
    if len(wal) < WAL_HEADER:
        return []
    page_size = struct.unpack(">I", wal[8:12])[0]
    salts = wal[16:24]
    commits, pending = [], []
    offset = WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(wal):
        header = wal[offset : offset + FRAME_HEADER]
        if header[8:16] != salts:
            break
        page_number, size_after_commit = struct.unpack(">II", header[:8])
        pending.append(
            (page_number, wal[offset + FRAME_HEADER : offset + FRAME_HEADER + page_size])
        )
        if size_after_commit:
            commits.append(pending)
            pending = []
        offset += FRAME_HEADER + page_size
    return commits


@dataclass(frozen=True)
class State:
    links: frozenset[str]  # token hashes of the links not spent yet
    responses: frozenset[str]  # submission ids


def read_state(image: bytes, scratch: Path) -> State:
    """Open one replayed database image as SQLite (as a rollback-journal file)."""
    data = bytearray(image)
    data[18:20] = b"\x01\x01"  # file format: legacy, so SQLite looks for no WAL
    scratch.write_bytes(bytes(data))
    conn = sqlite3.connect(f"file:{scratch}?immutable=1", uri=True)
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if not {"invitations", "responses"} <= tables:
            return State(frozenset(), frozenset())  # all of it still in the WAL
        links = {row[0] for row in conn.execute("SELECT token_hash FROM invitations")}
        responses = {row[0] for row in conn.execute("SELECT submission_id FROM responses")}
    finally:
        conn.close()
    return State(frozenset(links), frozenset(responses))


def replay(copy: Copy, scratch: Path) -> list[State]:
    """The database file's state, then the state after each commit in the WAL."""
    commits = wal_commits(copy.wal)
    states = [read_state(copy.database, scratch)]
    if not commits:
        return states
    page_size = struct.unpack(">I", copy.wal[8:12])[0]
    image = bytearray(copy.database)
    for commit in commits:
        for page_number, page in commit:
            start = (page_number - 1) * page_size
            if len(image) < start + page_size:
                image.extend(b"\0" * (start + page_size - len(image)))
            image[start : start + page_size] = page
        states.append(read_state(bytes(image), scratch))
    return states


def attribute(states: list[State]) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """The attacker's guesses from one copy, and every (link, response) it shows together.

    Guess: a response that appears is the link spent in the same commit, or else the link
    spent most recently before it in this copy that no response has taken yet. "Shown
    together": a link's spending and a response both appear within the copy's WAL.
    """
    guesses: dict[str, str] = {}
    waiting: list[str] = []
    used_in_wal: set[str] = set()
    stored_in_wal: set[str] = set()
    for before, after in zip(states, states[1:], strict=False):
        newly_used = sorted(before.links - after.links)
        waiting += newly_used
        used_in_wal |= set(newly_used)
        for response in sorted(after.responses - before.responses):
            stored_in_wal.add(response)
            if waiting:
                guesses[response] = waiting.pop()
    return guesses, {(link, response) for link in used_in_wal for response in stored_in_wal}


def load_definition_text(text: str, tmp_path: Path) -> SurveyDefinition:
    file = tmp_path / "staff-pulse.yaml"
    file.write_text(text)
    return load_definition(file)


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_a_copy_of_the_live_files_does_not_link_responses_to_invitations(
    app: Flask, tmp_path: Path
) -> None:
    path = Path(app.config["DATABASE"])
    with app.app_context():
        store_survey(get_db(), load_definition_text(INVITE_ONLY, tmp_path))
        survey = get_survey(get_db(), "staff-pulse")
        assert survey is not None
        links = create_invitations(get_db(), survey, INVITATIONS)  # the links file, in order
    link_of_hash = {hashlib.sha256(token.encode()).hexdigest(): token for token in links}

    copies: list[Copy] = []
    truth: dict[str, str] = {}  # submission id -> link
    client = app.test_client()
    with app.app_context():
        connection = get_db().conn  # the connection the test client's requests use
        assert isinstance(connection, sqlite3.Connection)
        connection.set_trace_callback(lambda _statement: copies.append(copy_live_files(path)))
        try:
            for token in links:
                fields = start(client, f"/s/staff-pulse?invitation={token}")
                answered = client.post("/s/staff-pulse", data={**fields, "burnout": "y"})
                assert answered.status_code == 200, answered.get_data(as_text=True)
                truth[fields["submission_id"].split(".")[0]] = token
                copies.append(copy_live_files(path))
        finally:
            connection.set_trace_callback(None)

    scratch = tmp_path / "replayed.db"
    correct: set[str] = set()
    shown_together: set[tuple[str, str]] = set()
    replayed_commits = 0
    for copy in copies:
        states = replay(copy, scratch)
        replayed_commits += len(states) - 1
        guesses, together = attribute(states)
        correct |= {r for r, h in guesses.items() if truth.get(r) == link_of_hash[h]}
        shown_together |= {(link_of_hash[h], r) for h, r in together}
    assert len(truth) == INVITATIONS and replayed_commits > 0
    print(f"{len(copies)} copies, {replayed_commits} commits replayed, {len(correct)} tied")
    # No copy holds a link's use and its own response as changes, at any moment ...
    assert not {(link, r) for link, r in shown_together if truth.get(r) == link}
    # ... so the replay ties no more responses to their links than guessing would
    # (a random matching of 10 gets one right on average).
    assert len(correct) <= 1, f"the replay tied {len(correct)} of {INVITATIONS} responses"


@pytest.mark.sqlite_only
def test_the_wal_is_empty_once_a_link_is_spent(app: Flask, tmp_path: Path) -> None:
    """After a respondent starts, nothing of the link's spending is left in the WAL."""
    with app.app_context():
        store_survey(get_db(), load_definition_text(INVITE_ONLY, tmp_path))
        survey = get_survey(get_db(), "staff-pulse")
        assert survey is not None
        (token,) = create_invitations(get_db(), survey, 1)
    start(app.test_client(), f"/s/staff-pulse?invitation={token}")
    assert Path(f"{app.config['DATABASE']}-wal").stat().st_size == 0
