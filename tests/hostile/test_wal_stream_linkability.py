"""PostgreSQL's WAL stream must not tie an invitation response to its link.

Nothing erases PostgreSQL's WAL: a replica, an archive or a logical decoding slot gets
every transaction, with its time. The attack: read every WAL segment of the cluster
(``pg_waldump`` for the records, then each record's own bytes, full-page images included)
and a ``test_decoding`` slot created before the respondents, group the changes by
transaction, and look in every transaction that inserts a response for a link (its token
or its hash, which the links file gives). Links are spent for answer tickets when their
respondents start, in transactions of their own (``storage/invitations.py``), so none is
there: what is left is when each link was spent, which this test makes useless by
letting every respondent start before any answers, in an order neither first-in-first-out
nor last-in-first-out pairs with a single link.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from flask import Flask

from survey_app.domain.definitions import parse_definition
from survey_app.storage.invitations import create_invitations
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.examples import INVITE_ONLY
from tests.support.invitations import start
from tests.support.postgresql import Cluster

INVITATIONS = 10
#: Respondent i answers in turn ANSWER_ORDER.index(i), after all ten started in order:
#: neither the k-th spent link (FIFO) nor the most recent unmatched one (LIFO) is theirs.
ANSWER_ORDER = (3, 7, 0, 8, 5, 1, 9, 2, 6, 4)
PAGE = 8192  # XLOG_BLCKSZ
SEGMENT = 16 * 1024 * 1024  # the default WAL segment size
RECORD = re.compile(
    r"rmgr: (?P<rmgr>\w+)\s+len \(rec/tot\):\s+\d+/\s*(?P<length>\d+), tx:\s+(?P<xid>\d+), "
    r"lsn: (?P<high>[0-9A-F]+)/(?P<low>[0-9A-F]+), .*?desc: (?P<desc>.*)"
)
RELATION = re.compile(r"rel \d+/(\d+)/(\d+)")


@pytest.fixture
def slot(app: Flask) -> Iterator[psycopg.Connection]:
    """A logical decoding slot on the app's database, made before anyone answers."""
    conn = psycopg.connect(app.config["DATABASE"], autocommit=True)
    conn.execute("SELECT pg_create_logical_replication_slot('replay', 'test_decoding')")
    try:
        yield conn
    finally:
        conn.execute("SELECT pg_drop_replication_slot('replay')")
        conn.close()


def decoded_transactions(conn: psycopg.Connection) -> dict[int, str]:
    """Every change the slot decoded, as one text per transaction id."""
    changes = conn.execute(
        "SELECT xid, data FROM pg_logical_slot_get_changes('replay', NULL, NULL)"
    ).fetchall()
    transactions: dict[int, list[str]] = defaultdict(list)
    for xid, data in changes:
        transactions[int(xid)].append(data)
    return {xid: "\n".join(lines) for xid, lines in transactions.items()}


def wal_dump(cluster: Cluster) -> str:
    """``pg_waldump`` of every segment in the cluster, run as the cluster's user."""
    folder = cluster.data / "pg_wal"
    segments = sorted(
        path.name for path in folder.iterdir() if re.fullmatch("[0-9A-F]{24}", path.name)
    )
    command = [str(cluster.binaries / "pg_waldump"), "-p", str(folder), segments[0], segments[-1]]
    if cluster.user is not None:
        command = ["runuser", "-u", cluster.user.pw_name, "--", *command]
    # It ends with an error at the end of the valid WAL: the output before it is whole.
    return subprocess.run(command, capture_output=True, text=True, cwd=cluster.folder).stdout


def record_bytes(folder: Path, lsn: int, length: int) -> bytes:
    """One WAL record's bytes, read from its segment, without the page headers between."""
    data = b""
    position = lsn
    while len(data) < length:
        page = position - position % PAGE
        header = 40 if page % SEGMENT == 0 else 24  # long header on a segment's first page
        position = max(position, page + header)
        segment = folder / f"00000001{position // SEGMENT >> 8:08X}{position // SEGMENT & 0xFF:08X}"
        with segment.open("rb") as file:
            file.seek(position % SEGMENT)
            data += file.read(min(length - len(data), page + PAGE - position))
        position = page + PAGE
    return data


def wal_transactions(cluster: Cluster, database: int) -> dict[int, tuple[set[int], bytes]]:
    """Per transaction id: the relations (file nodes) of ``database`` it wrote, and the
    bytes of all its records."""
    folder = cluster.data / "pg_wal"
    transactions: dict[int, tuple[set[int], bytes]] = {}
    for line in wal_dump(cluster).splitlines():
        found = RECORD.match(line)
        if not found or found["xid"] == "0":
            continue
        xid = int(found["xid"])
        relations, data = transactions.get(xid, (set(), b""))
        relations |= {int(node) for db, node in RELATION.findall(line) if int(db) == database}
        lsn = int(found["high"], 16) << 32 | int(found["low"], 16)
        transactions[xid] = (relations, data + record_bytes(folder, lsn, int(found["length"])))
    return transactions


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql"])
def test_the_wal_stream_does_not_link_responses_to_invitations(
    app: Flask, slot: psycopg.Connection, postgresql_cluster: Cluster
) -> None:
    with app.app_context():
        store_survey(get_db(), parse_definition(INVITE_ONLY, "staff-pulse.yaml"))
        survey = get_survey(get_db(), "staff-pulse")
        assert survey is not None
        links = create_invitations(get_db(), survey, INVITATIONS)
    respondents = [app.test_client() for _ in links]
    forms = [
        start(client, f"/s/staff-pulse?invitation={link}")
        for client, link in zip(respondents, links, strict=True)
    ]
    for turn in range(INVITATIONS):
        i = ANSWER_ORDER.index(turn)
        answered = respondents[i].post("/s/staff-pulse", data={**forms[i], "burnout": "y"})
        assert answered.status_code == 200, answered.get_data(as_text=True)
    tickets = [form["invitation"] for form in forms]
    link_marks = {i: (link, sha256(link)) for i, link in enumerate(links)}
    ticket_marks = {i: (ticket, sha256(ticket)) for i, ticket in enumerate(tickets)}
    # A ticket is random: no link, nor its hash, is in it.
    assert not any(
        mark in ticket for ticket in tickets for marks in link_marks.values() for mark in marks
    )

    # (b) The logical decoding slot.
    decoded = decoded_transactions(slot)
    answering = [text for text in decoded.values() if "table public.responses: INSERT" in text]
    spending = [text for text in decoded.values() if "table public.invitations: DELETE" in text]
    assert len(answering) == len(spending) == INVITATIONS
    # Each side names its own secret (the check can see), never the other's.
    assert sorted(tuple(named(text, ticket_marks)) for text in answering) == [
        (i,) for i in range(INVITATIONS)
    ]
    assert sorted(tuple(named(text, link_marks)) for text in spending) == [
        (i,) for i in range(INVITATIONS)
    ]
    assert not any(named(text, link_marks) for text in answering)
    assert not any(named(text, ticket_marks) for text in spending)
    assert not any("public.invitations" in text for text in answering)

    # (a) Every WAL segment, record by record.
    ((database,),) = slot.execute(
        "SELECT oid FROM pg_database WHERE datname = current_database()"
    ).fetchall()
    node = {
        table: int(slot.execute("SELECT pg_relation_filenode(%s)", [table]).fetchall()[0][0])
        for table in ("responses", "invitations", "spent_tickets")
    }
    written = wal_transactions(postgresql_cluster, int(database))
    responding = {
        xid: data for xid, (relations, data) in written.items() if node["responses"] in relations
    }
    spent = {
        xid: data
        for xid, (relations, data) in written.items()
        if node["invitations"] in relations and xid not in responding
    }
    assert len(responding) == INVITATIONS
    assert len(spent) >= INVITATIONS  # and the one that made the links
    text = {xid: data.decode("latin-1") for xid, data in {**responding, **spent}.items()}
    assert sorted(tuple(named(text[xid], ticket_marks)) for xid in responding) == [
        (i,) for i in range(INVITATIONS)
    ]
    assert set().union(*(named(text[xid], link_marks) for xid in spent)) == set(range(INVITATIONS))
    assert not any(named(text[xid], link_marks) for xid in responding)
    assert not any(named(text[xid], ticket_marks) for xid in spent)
    assert not any(node["invitations"] in written[xid][0] for xid in responding)


def named(text: str, marks: dict[int, tuple[str, str]]) -> set[int]:
    """Which of the secrets (a token or its hash, by respondent) ``text`` holds."""
    return {i for i, pair in marks.items() if any(mark in text for mark in pair)}
