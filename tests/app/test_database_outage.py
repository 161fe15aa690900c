"""The database going away mid-request: 503 with nothing half-stored, and service back
without a restart when it returns.

A real gunicorn server (one worker, the kept per-thread connection) on a PostgreSQL
cluster of its own, reached over TCP with a password, as deployed
(docs/deploying-several-servers.md; the harness is benchmarks/three_nodes.py's). The
cluster is stopped and started under the running server; the server is never restarted
(its process id is checked).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from psycopg import Connection

from tests.support.postgresql import server_binaries

pytestmark = pytest.mark.slow
pytest.importorskip("gunicorn")
psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
if server_binaries() is None:
    pytest.skip(
        "PostgreSQL's server is not installed (Debian: postgresql)", allow_module_level=True
    )

from benchmarks import loadlib  # noqa: E402
from benchmarks.three_nodes import Node, PostgresServer, status, survey_app  # noqa: E402
from survey_app.storage.postgresql_dialect import WRITER_LOCK_KEY  # noqa: E402

SLUG_FILE = loadlib.EXAMPLE_SURVEY


@dataclass
class Served:
    postgres: PostgresServer
    node: Node
    slug: str

    def stored(self) -> tuple[int, int, int]:
        """Response rows, the survey's response counter, and the tallies' total count."""
        with psycopg.connect(self.postgres.url) as conn:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM responses), (SELECT sum(responses) FROM surveys),"
                " (SELECT coalesce(sum(value), 0) FROM tallies WHERE cell = 'n')"
            ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    postgres = PostgresServer().create()
    try:
        survey_app(postgres.url, "init-db")
        slug = survey_app(postgres.url, "import-survey", str(SLUG_FILE)).split()[-1]
        folder = tmp_path_factory.mktemp("outage")
        node = Node(
            "outage", postgres.url, "one key", folder, loadlib.ServerConfig(1, 2, "gthread")
        )
        node.start()
        try:
            yield Served(postgres, node, slug)
        finally:
            node.stop()
    finally:
        postgres.remove()


class Respondent:
    """One browser with the survey's form fetched while the database was up."""

    def __init__(self, served: Served) -> None:
        self.browser = loadlib.Browser(served.node.port)
        self.path = f"/s/{served.slug}"
        code, page = self.browser.get(self.path)
        assert code == 200
        hidden = dict(loadlib.HIDDEN_INPUT.findall(page))
        answers = {key: "y" for key in loadlib.RADIO_YES.findall(page)}
        self.submission_id = hidden["submission_id"].partition(".")[0]
        self.fields = {**hidden, **answers}

    def send(self) -> tuple[int, str, str]:
        """POST the form; the status, the page and the Retry-After header."""
        self.browser.close()
        code, page, reply = self.browser.fetch(
            "POST", self.path, self._body(), self.browser.headers_for("POST", self.path, b"")
        )
        return code, page.decode(), reply.getheader("Retry-After") or ""

    def _body(self) -> bytes:
        import urllib.parse

        return urllib.parse.urlencode(self.fields).encode()


def _assert_served_again(served: Served, pid: int, respondent: Respondent) -> None:
    """The same server process answers again and stores the very form refused before."""
    deadline = time.monotonic() + 30
    while status(served.node.port, "/healthz") != 200:
        assert time.monotonic() < deadline, "the server did not come back with the database"
        time.sleep(0.2)
    before = served.stored()[0]
    code, page, _ = respondent.send()
    assert code == 200, page
    assert served.stored()[0] == before + 1
    assert served.node.process is not None and served.node.process.pid == pid


def test_a_stopped_database_gives_503_and_stores_nothing_then_serves_again(
    served: Served,
) -> None:
    pid = served.node.process.pid if served.node.process else 0
    respondent = Respondent(served)
    before = served.stored()
    served.postgres.stop()
    try:
        code, page, retry_after = respondent.send()
        assert code == 503
        assert "Please try again" in page and "Nothing was stored." in page
        assert retry_after.isdigit()
        assert respondent.submission_id not in page  # the refusal echoes nothing sent
        assert status(served.node.port, "/healthz") == 503
        assert status(served.node.port, "/healthz") == 503  # a new connection fails alike
    finally:
        served.postgres.start()
    assert served.stored() == before
    _assert_served_again(served, pid, respondent)


def test_a_database_lost_while_a_response_waits_to_be_written_keeps_nothing_of_it(
    served: Served,
) -> None:
    """The POST is inside its write transaction (waiting for the writers' lock, which the
    test holds) when PostgreSQL shuts down: 503, and no row, counter or tally of it."""
    pid = served.node.process.pid if served.node.process else 0
    respondent = Respondent(served)
    before = served.stored()
    replies: list[tuple[int, str, str]] = []
    holder = psycopg.connect(served.postgres.url, autocommit=True)
    try:
        holder.execute("BEGIN")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", [WRITER_LOCK_KEY])
        sender = threading.Thread(target=lambda: replies.append(respondent.send()))
        sender.start()
        _wait_for_a_writer_queued(holder)
        served.postgres.stop()
    finally:
        holder.close()  # already ended by the shutdown: closing sends nothing
    sender.join(timeout=60)
    served.postgres.start()
    assert [code for code, _page, _retry in replies] == [503]
    assert served.stored() == before
    _assert_served_again(served, pid, respondent)


def _wait_for_a_writer_queued(holder: Connection[tuple[object, ...]]) -> None:
    deadline = time.monotonic() + 30
    waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    while (holder.execute(waiting).fetchone() or (0,))[0] == 0:
        assert time.monotonic() < deadline, "the POST never reached the writers' lock"
        time.sleep(0.05)


def test_the_harness_reaches_the_server_over_tcp_with_a_password(served: Served) -> None:
    """As deployed: a wrong password is refused (the server is not trusting everyone)."""
    wrong = served.postgres.url.replace(served.postgres.password, "wrong")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong)
