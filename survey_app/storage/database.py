"""The database: one sqlite-utils connection per worker thread, the schema and its migrations.

Nothing else opens connections. Migrations are numbered and each runs in its own
transaction with ``PRAGMA user_version`` bumped inside it, so a crash mid-migration leaves
the previous version intact and several workers starting at once migrate exactly once.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import sqlite_utils

if TYPE_CHECKING:
    from survey_app.storage.backends import Database

BUSY_TIMEOUT_MS = 10_000


class Executes(Protocol):
    """A database connection of either backend, as far as ``write_transaction`` needs one."""

    def execute(self, sql: str) -> object: ...


D = TypeVar("D", bound=Executes)
_process_writer = threading.Lock()


def _create_surveys_questions_responses(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE surveys (
            id INTEGER PRIMARY KEY,
            slug TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            created_on TEXT NOT NULL
        );
        -- n and reported_yes are running totals kept in the same transaction as each
        -- response, so estimates never need a scan of the responses.
        CREATE TABLE questions (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            position INTEGER NOT NULL,
            key TEXT NOT NULL,
            text TEXT NOT NULL,
            type TEXT NOT NULL,
            truth_probability REAL NOT NULL,
            forced_yes_probability REAL NOT NULL,
            n INTEGER NOT NULL DEFAULT 0,
            reported_yes INTEGER NOT NULL DEFAULT 0,
            UNIQUE (survey_id, key),
            UNIQUE (survey_id, position)
        );
        -- Privacy invariant 6: only the survey, the randomized answers, the mechanism's
        -- parameters and the day. No address, no user agent, no time of day.
        CREATE TABLE responses (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            submission_id TEXT NOT NULL UNIQUE,
            answered_on TEXT NOT NULL,
            mechanism TEXT NOT NULL,
            truth_probability REAL NOT NULL,
            forced_yes_probability REAL NOT NULL,
            answers TEXT NOT NULL
        );
        CREATE INDEX responses_by_survey ON responses (survey_id);
        """
    )


def _create_researchers(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE researchers (
            id INTEGER PRIMARY KEY,
            username TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            created_on TEXT NOT NULL
        );
        -- Failed logins per account and per (hashed) address, to slow down guessing.
        -- Shared through the database so every worker process sees the same counts.
        CREATE TABLE login_failures (
            key TEXT PRIMARY KEY,
            failures INTEGER NOT NULL,
            blocked_until REAL NOT NULL
        );
        """
    )


def _add_owners_lifecycle_invitations(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        -- A survey without an owner (imported without --owner) is visible to every
        -- researcher; one with an owner only to the owner and those it is shared with.
        ALTER TABLE surveys ADD COLUMN owner_id INTEGER REFERENCES researchers(id);
        ALTER TABLE surveys ADD COLUMN status TEXT NOT NULL DEFAULT 'open'
            CHECK (status IN ('draft', 'open', 'closed'));
        ALTER TABLE surveys ADD COLUMN access TEXT NOT NULL DEFAULT 'open'
            CHECK (access IN ('open', 'invitation'));
        CREATE TABLE survey_viewers (
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            researcher_id INTEGER NOT NULL REFERENCES researchers(id),
            PRIMARY KEY (survey_id, researcher_id)
        );
        -- Single-use invitation links, kept only as hashes. Deliberately no column that
        -- could tie a response to the invitation it used: not an id, not a time.
        CREATE TABLE invitations (
            token_hash TEXT PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            used INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1))
        );
        """
    )


def _question_types_and_tallies(db: sqlite_utils.Database) -> None:
    """Every question type: each question keeps its own mechanism and exact parameters.

    Before, a question held two-coin probabilities as REAL columns and every response
    repeated its survey's first question's design. Now a question's mechanism is one JSON
    object of exact rationals (``parameters``), fixed once stored (a trigger refuses any
    change); a response names the design it was randomized under by fingerprint; and the
    running totals move to ``tallies``, one row per (question, cell), since a choice
    question counts every option and a number question sums its reports.
    """
    from survey_app.domain.designs import legacy_two_coin_parameters, survey_fingerprint

    db.executescript(
        """
        ALTER TABLE surveys ADD COLUMN consent TEXT NOT NULL DEFAULT '';
        ALTER TABLE surveys ADD COLUMN contact TEXT NOT NULL DEFAULT '';
        ALTER TABLE surveys ADD COLUMN max_epsilon TEXT;
        ALTER TABLE surveys ADD COLUMN design TEXT NOT NULL DEFAULT '';
        -- Kept with each response, like the tallies: an optional question's n is not it.
        ALTER TABLE surveys ADD COLUMN responses INTEGER NOT NULL DEFAULT 0;
        UPDATE surveys SET responses =
            (SELECT count(*) FROM responses r WHERE r.survey_id = surveys.id);
        CREATE TABLE questions_v4 (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            position INTEGER NOT NULL,
            key TEXT NOT NULL,
            text TEXT NOT NULL,
            type TEXT NOT NULL,
            sensitive INTEGER NOT NULL DEFAULT 1 CHECK (sensitive IN (0, 1)),
            required INTEGER NOT NULL DEFAULT 1 CHECK (required IN (0, 1)),
            options TEXT,               -- JSON list of option texts, for choice questions
            min INTEGER,                -- bounds, for number questions
            max INTEGER,
            requested_epsilon TEXT,     -- as the survey file wrote it; NULL: the default
            parameters TEXT NOT NULL,   -- the mechanism and its exact parameters (JSON)
            UNIQUE (survey_id, key),
            UNIQUE (survey_id, position)
        );
        -- A survey's questions' mechanisms, by fingerprint: what each response was
        -- randomized under, without repeating the parameters in every row.
        CREATE TABLE designs (
            fingerprint TEXT PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            questions TEXT NOT NULL
        );
        CREATE TABLE responses_v4 (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            submission_id TEXT NOT NULL UNIQUE,
            answered_on TEXT NOT NULL,
            design TEXT NOT NULL REFERENCES designs(fingerprint),
            answers TEXT NOT NULL
        );
        """
    )
    old_questions = list(db.query("SELECT * FROM questions ORDER BY survey_id, position"))
    for q in old_questions:
        parameters = legacy_two_coin_parameters(q["truth_probability"], q["forced_yes_probability"])
        db.execute(
            "INSERT INTO questions_v4 (id, survey_id, position, key, text, type, parameters) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [q["id"], q["survey_id"], q["position"], q["key"], q["text"], q["type"], parameters],
        )
    for (survey_id,) in db.execute("SELECT id FROM surveys").fetchall():
        designs = {
            row[0]: json.loads(row[1])
            for row in db.execute(
                "SELECT key, parameters FROM questions_v4 WHERE survey_id = ? ORDER BY position",
                [survey_id],
            )
        }
        fingerprint = survey_fingerprint(designs)
        db.execute(
            "INSERT OR IGNORE INTO designs (fingerprint, survey_id, questions) VALUES (?, ?, ?)",
            [fingerprint, survey_id, json.dumps(designs, sort_keys=True)],
        )
        db.execute("UPDATE surveys SET design = ? WHERE id = ?", [fingerprint, survey_id])
    db.executescript(
        """
        INSERT INTO responses_v4 (id, survey_id, submission_id, answered_on, design, answers)
            SELECT r.id, r.survey_id, r.submission_id, r.answered_on, s.design, r.answers
            FROM responses r JOIN surveys s ON s.id = r.survey_id;
        DROP TABLE responses;
        ALTER TABLE responses_v4 RENAME TO responses;
        CREATE INDEX responses_by_survey ON responses (survey_id);
        DROP TABLE questions;
        ALTER TABLE questions_v4 RENAME TO questions;
        CREATE TRIGGER question_mechanism_fixed BEFORE UPDATE OF parameters, type, options,
            min, max, sensitive ON questions
        BEGIN
            SELECT RAISE(ABORT, 'a question''s mechanism is fixed once stored');
        END;
        -- One row per (question, cell): n, yes, an option's index, sum, sum_squares.
        -- Created after the old questions table is gone: dropping a parent that rows
        -- already point at would count as a foreign-key violation until COMMIT.
        CREATE TABLE tallies (
            question_id INTEGER NOT NULL REFERENCES questions(id),
            cell TEXT NOT NULL,
            value INTEGER NOT NULL,
            PRIMARY KEY (question_id, cell)
        ) WITHOUT ROWID;
        """
    )
    db.conn.executemany(
        "INSERT INTO tallies (question_id, cell, value) VALUES (?, ?, ?)",
        [
            (q["id"], cell, q[column])
            for q in old_questions
            for cell, column in (("n", "n"), ("yes", "reported_yes"))
        ],
    )


def _researcher_sessions_decaying_failures(db: sqlite_utils.Database) -> None:
    """Server-side researcher sessions; failed-login counts that decay.

    A session row holds only a hash of the token in the researcher's cookie: logging out
    deletes the row, so a copied cookie stops working. ``login_failures`` starts over: its
    counts now forget one failure at a time and are deleted once forgotten (``forget_at``).
    """
    db.executescript(
        """
        CREATE TABLE researcher_sessions (
            token_hash TEXT PRIMARY KEY,
            researcher_id INTEGER NOT NULL REFERENCES researchers(id),
            started_at REAL NOT NULL,
            last_seen REAL NOT NULL
        );
        DROP TABLE login_failures;
        CREATE TABLE login_failures (
            key TEXT PRIMARY KEY,
            failures REAL NOT NULL,
            last_failure REAL NOT NULL,
            forget_at REAL NOT NULL
        );
        CREATE INDEX login_failures_forgotten ON login_failures (forget_at);
        """
    )


def _languages_and_sources(db: sqlite_utils.Database) -> None:
    """Surveys in several languages, and the definition text each survey came from.

    The existing text columns keep the main language (the first of ``languages``, the one
    exports use); ``translations`` adds the same texts in each other language, as JSON by
    language code. ``source`` keeps the definition as its author wrote it, comments and
    all, so it can be given back for editing; NULL for surveys stored before.
    """
    db.executescript(
        """
        ALTER TABLE surveys ADD COLUMN languages TEXT NOT NULL DEFAULT '["en"]';
        -- {"ko": {"title": ..., "description": ..., "consent": ..., "contact": ...}}
        ALTER TABLE surveys ADD COLUMN translations TEXT NOT NULL DEFAULT '{}';
        ALTER TABLE surveys ADD COLUMN source TEXT;
        -- {"ko": {"text": ..., "options": [...]}}: words only, never the mechanism.
        ALTER TABLE questions ADD COLUMN translations TEXT NOT NULL DEFAULT '{}';
        """
    )


def _central_releases(db: sqlite_utils.Database) -> None:
    """Public releases under central DP: each survey's central ε budget and its ledger.

    ``central_budget`` is an exact decimal as text (NULL: none set, so only free figures
    may be published). A ``releases`` row is one publication: what it showed, its ε and
    what it cost (0 for the same snapshot again), the fingerprints of its data and its
    choices, and the figures themselves as JSON, computed once: the public page shows
    them again and never draws fresh noise (``releases.py``).
    """
    db.executescript(
        """
        ALTER TABLE surveys ADD COLUMN central_budget TEXT;
        CREATE TABLE releases (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            released_at TEXT NOT NULL,
            what TEXT NOT NULL,
            epsilon TEXT NOT NULL,          -- exact decimal; 0 for free figures only
            cost TEXT NOT NULL,             -- exact decimal charged to the budget
            data_fingerprint TEXT NOT NULL, -- the responses it was computed from
            choices TEXT NOT NULL,          -- the figures it shows
            snapshot TEXT NOT NULL          -- the figures' stored numbers (JSON)
        );
        CREATE INDEX releases_by_survey ON releases (survey_id, id);
        """
    )


def _count_snapshots(db: sqlite_utils.Database) -> None:
    """Joint counts of stored values kept between processes (``crosstabs.py``).

    A snapshot holds the counts of a survey's responses up to ``through_id`` for one
    tuple of question keys (JSON), as ``[[value, ..., count], ...]``: no more than the
    responses table says, summed. A new worker or a restarted server reads it and scans
    only the rows stored since, instead of every row's JSON again.
    """
    db.executescript(
        """
        CREATE TABLE count_snapshots (
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            keys TEXT NOT NULL,
            through_id INTEGER NOT NULL,
            counts TEXT NOT NULL,
            PRIMARY KEY (survey_id, keys)
        ) WITHOUT ROWID;
        """
    )


def _count_snapshot_uses_and_leases(db: sqlite_utils.Database) -> None:
    """At most a few snapshots per survey, one key order each; one cold count at a time.

    Snapshots are now kept under their questions' keys sorted (any order of the same
    questions shares one), so the old ones, stored in whatever order a page asked, are
    dropped: they only repeat what the responses hold, and the next request counts again.
    ``last_use`` numbers a survey's snapshots by their last write or read, so the least
    recently used goes first when a survey has too many. A ``count_leases`` row is the
    right to count a survey's responses from scratch, taken by one request at a time in
    any worker, until ``expires_at`` (seconds since the epoch) if its worker dies.
    """
    db.executescript(
        """
        DELETE FROM count_snapshots;
        ALTER TABLE count_snapshots ADD COLUMN last_use INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE count_leases (
            survey_id INTEGER PRIMARY KEY REFERENCES surveys(id),
            holder TEXT NOT NULL,       -- a random token of the request counting
            expires_at REAL NOT NULL
        );
        """
    )


def _budget_changes_and_exact_estimates(db: sqlite_utils.Database) -> None:
    """Every change of a central budget, with its time, for the public page; and the
    estimates earlier releases published under the name ``estimates`` renamed for what
    they were, ``exact-estimates`` (computed from exact counts), now that ``estimates``
    are computed from noisy ones.
    """
    db.executescript(
        """
        CREATE TABLE budget_changes (
            id INTEGER PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id),
            changed_at TEXT NOT NULL,  -- UTC, ISO 8601, seconds
            budget TEXT NOT NULL,      -- exact decimal: the budget from then on
            previous TEXT,             -- exact decimal before; NULL for the first budget
            releases_before INTEGER NOT NULL  -- the survey's releases until then: the order
        );
        CREATE INDEX budget_changes_by_survey ON budget_changes (survey_id, id);
        """
    )
    for release_id, stored in db.execute("SELECT id, snapshot FROM releases").fetchall():
        snapshot = json.loads(stored)
        exact = [f for f in snapshot["figures"] if f["kind"] == "estimates"]
        for figure in exact:
            figure["id"] = figure["kind"] = "exact-estimates"
        snapshot["exact_figures"] = [f["id"] for f in exact]
        db.execute(
            "UPDATE releases SET snapshot = ?, what = replace(what, 'sensitive estimates', "
            "'exact sensitive estimates') WHERE id = ?",
            [json.dumps(snapshot, sort_keys=True), release_id],
        )


def _people_listing_retention(db: sqlite_utils.Database) -> None:
    """Administrators and deactivated accounts, single-use password links, an owner for
    every survey, the front-page listing as the owner's choice, retention dates, and a
    record of what was deleted and by whom.

    The first account becomes the administrator and the owner of every survey nobody
    owned (those were visible to every researcher). Surveys that were on the front page
    stay there (``listed``), so an upgrade does not hide a running study; new ones are not
    listed until their owner says so. ``events`` never holds an answer: who did what to
    which survey or account, and when.
    """
    db.executescript(
        """
        ALTER TABLE researchers ADD COLUMN role TEXT NOT NULL DEFAULT 'researcher'
            CHECK (role IN ('researcher', 'admin'));
        ALTER TABLE researchers ADD COLUMN active INTEGER NOT NULL DEFAULT 1
            CHECK (active IN (0, 1));
        -- A link to set a password (a new account, or a reset): kept only as a hash,
        -- used once, until expires_at (seconds since the epoch).
        CREATE TABLE password_links (
            token_hash TEXT PRIMARY KEY,
            researcher_id INTEGER NOT NULL REFERENCES researchers(id),
            expires_at REAL NOT NULL
        );
        ALTER TABLE surveys ADD COLUMN listed INTEGER NOT NULL DEFAULT 0
            CHECK (listed IN (0, 1));
        UPDATE surveys SET listed = 1 WHERE status = 'open' AND access = 'open';
        ALTER TABLE surveys ADD COLUMN retain_until TEXT;        -- ISO date; NULL: none
        ALTER TABLE surveys ADD COLUMN keep_public_figures INTEGER NOT NULL DEFAULT 0
            CHECK (keep_public_figures IN (0, 1));
        ALTER TABLE surveys ADD COLUMN destroyed_on TEXT;        -- ISO date, once destroyed
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            happened_at TEXT NOT NULL,  -- UTC, ISO 8601, seconds
            actor TEXT NOT NULL,        -- a username, or 'command line'
            action TEXT NOT NULL,
            subject TEXT NOT NULL       -- a survey's slug and title, or a username
        );
        UPDATE researchers SET role = 'admin' WHERE id = (SELECT min(id) FROM researchers);
        UPDATE surveys SET owner_id = (SELECT min(id) FROM researchers) WHERE owner_id IS NULL;
        """
    )


def _survey_ids_never_reused(db: sqlite_utils.Database) -> None:
    """Survey ids are never given out twice, now that surveys can be deleted.

    Each worker keeps a survey's joint counts in memory under its id (``crosstabs.py``);
    without AUTOINCREMENT SQLite gives a deleted survey's id to the next survey, whose
    counts another worker could then start from the deleted one's. SQLite cannot add
    AUTOINCREMENT to a table, so the table is rebuilt from its own definition (SQLite's
    documented procedure: ``migrate`` turns foreign keys off around it and checks them
    before committing).
    """
    (definition,) = db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'surveys'"
    ).fetchone()
    rebuilt = definition.replace("CREATE TABLE surveys", "CREATE TABLE surveys_v12", 1).replace(
        "id INTEGER PRIMARY KEY,", "id INTEGER PRIMARY KEY AUTOINCREMENT,", 1
    )
    db.execute(rebuilt)
    db.executescript(
        """
        INSERT INTO surveys_v12 SELECT * FROM surveys;
        DROP TABLE surveys;
        ALTER TABLE surveys_v12 RENAME TO surveys;
        """
    )


def _survey_endings(db: sqlite_utils.Database) -> None:
    """The end of a survey: the researcher's thank-you text (main language; the others in
    ``translations``) and a panel's completion, ``{"code": ...}`` or ``{"redirect": ...}``
    as JSON, NULL for none. Both are the study's, the same for every respondent."""
    db.executescript(
        """
        ALTER TABLE surveys ADD COLUMN thank_you TEXT NOT NULL DEFAULT '';
        ALTER TABLE surveys ADD COLUMN completion TEXT;
        """
    )


def _display_orders(db: sqlite_utils.Database) -> None:
    """The order a survey shows its questions in, and a question its options in.

    Display only: each page draws the order afresh and nothing stores which one it drew.
    ``fixed_options`` is a JSON list of option indexes (from 0) that keep their place.
    Words, not design: the trigger that fixes a question's mechanism leaves them out.
    """
    db.executescript(
        """
        ALTER TABLE surveys ADD COLUMN question_order TEXT NOT NULL DEFAULT 'as_written';
        ALTER TABLE questions ADD COLUMN option_order TEXT NOT NULL DEFAULT 'as_written';
        ALTER TABLE questions ADD COLUMN fixed_options TEXT NOT NULL DEFAULT '[]';
        """
    )


def _survey_sections(db: sqlite_utils.Database) -> None:
    """Surveys shown a section per page: where each section starts among the survey's
    questions (which stay one ordered list) and its title and description per language,
    as JSON ``[{"start": 0, "title": ..., "description": ..., "translations": {"ko":
    {"title": ..., "description": ...}}}, ...]``; ``[]``, as before, for one page."""
    db.execute("ALTER TABLE surveys ADD COLUMN sections TEXT NOT NULL DEFAULT '[]'")


def _question_conditions(db: sqlite_utils.Database) -> None:
    """Display logic: a question's ``show_if`` condition on an earlier plain question, as
    JSON written as the survey file writes it (``{"question": "year", "is": [3, 4]}``);
    NULL for a question always shown. Responses store "n/a" for a question that did not
    apply (``display_logic.NOT_APPLICABLE``): no change to their table."""
    db.execute("ALTER TABLE questions ADD COLUMN show_if TEXT")


def _shared_rate_counts(db: sqlite_utils.Database) -> None:
    """Researchers' rate limits (logins, password links, share lookups) counted in the
    database, so that several processes or machines serving it count as one
    (``rate_counts.py``): a hashed key, its count, and when its window ends (seconds since
    the epoch). Ended windows are deleted as counting goes on. Never a respondent's."""
    db.executescript(
        """
        CREATE TABLE rate_counts (
            key TEXT PRIMARY KEY,
            count INTEGER NOT NULL,
            window_ends REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX rate_counts_by_end ON rate_counts (window_ends);
        """
    )


def _answer_tickets(db: sqlite_utils.Database) -> None:
    """Invitation links spent for one-time answer tickets (``invitations``): a link's row
    is deleted when its respondent starts, so ``used`` goes (links already used are
    deleted now); a response keeps sha256 of the ticket it used in ``spent_tickets``,
    single use, with no column that could tie it to a link or to the response."""
    db.executescript(
        """
        DELETE FROM invitations WHERE used = 1;
        ALTER TABLE invitations DROP COLUMN used;
        CREATE TABLE spent_tickets (
            ticket_hash TEXT PRIMARY KEY,
            survey_id INTEGER NOT NULL REFERENCES surveys(id) ON DELETE CASCADE
        ) WITHOUT ROWID;
        """
    )


def _joint_tallies(db: sqlite_utils.Database) -> None:
    """Joint counts kept as responses arrive (``joint_tallies``): per sensitive question,
    how many responses stored each combination of every plain question's value and its
    own, a JSON list. ``joint_tallies_complete`` is 1 for a question whose counts hold
    every response: each new question. A question that already has responses gets null:
    its counts are kept from now on, and read once ``survey-app recount`` rebuilt them."""
    db.executescript(
        """
        CREATE TABLE joint_tallies (
            survey_id INTEGER NOT NULL REFERENCES surveys(id) ON DELETE CASCADE,
            question_id INTEGER NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
            combination TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (survey_id, question_id, combination)
        ) WITHOUT ROWID;
        ALTER TABLE questions ADD COLUMN joint_tallies_complete INTEGER DEFAULT 1
            CHECK (joint_tallies_complete = 1);
        UPDATE questions SET joint_tallies_complete = NULL
            WHERE EXISTS (SELECT 1 FROM responses r WHERE r.survey_id = questions.survey_id);
        """
    )


MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (
    _create_surveys_questions_responses,
    _create_researchers,
    _add_owners_lifecycle_invitations,
    _question_types_and_tallies,
    _researcher_sessions_decaying_failures,
    _languages_and_sources,
    _central_releases,
    _count_snapshots,
    _count_snapshot_uses_and_leases,
    _budget_changes_and_exact_estimates,
    _people_listing_retention,
    _survey_ids_never_reused,
    _survey_endings,
    _display_orders,
    _survey_sections,
    _question_conditions,
    _shared_rate_counts,
    _answer_tickets,
    _joint_tallies,
)


def create_owner_only_file(path: str | Path) -> None:
    """Create an empty file readable and writable by its owner only (mode 0600).

    Raises ``FileExistsError`` rather than touch a file that is already there.
    """
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def connect(path: str | Path) -> sqlite_utils.Database:
    """Open the database in autocommit mode; writers use ``write_transaction``.

    WAL lets readers run while one writer writes; the busy timeout makes concurrent
    writers queue instead of failing with "database is locked".

    A new database file is created readable by its owner only (an empty file is an empty
    SQLite database), before SQLite sees it: SQLite gives the ``-wal`` and ``-shm`` files
    the database file's own mode, so all three stay private. An existing file keeps the
    mode the operator gave it.
    """
    with contextlib.suppress(FileExistsError):
        create_owner_only_file(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Deleted and overwritten content is zeroed, not left in free space for a copy of the
    # file to recover (old row versions are history, and history can link rows).
    conn.execute("PRAGMA secure_delete = ON")
    return sqlite_utils.Database(conn)


def erase_write_ahead_log(db: Database) -> bool:
    """Copy every commit into the database file and empty the WAL; whether it succeeded.

    The WAL keeps each commit's pages in commit order until a checkpoint, so a copy of the
    live files shows what changed together and in which order; the database file shows
    only the current state. ``TRUNCATE`` waits (up to the busy timeout) until no reader
    needs the WAL, then cuts it to zero bytes, so not even overwritten frames remain. (The
    ``-shm`` index may still name the pages the erased frames touched, until the next
    write starts the WAL again and clears it.) Fails, returning False, when a reader holds
    an older snapshot for longer than the busy timeout.

    On PostgreSQL the WAL is the server's (streamed to replicas, archived, decoded): the
    app can never erase it, so this returns False there.
    """
    if not isinstance(db, sqlite_utils.Database):
        return False
    busy, _frames, _copied = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return int(busy) == 0


@contextmanager
def write_transaction(db: D) -> Iterator[D]:
    """One short write transaction: all of it is stored, or none of it.

    ``BEGIN IMMEDIATE`` takes the write lock up front, so a transaction never fails
    half-way when it would upgrade from reading to writing under concurrency. Threads of
    one process queue on a lock of their own first: SQLite's busy handler is not fair, and
    with dozens of threads polling it a waiter could miss the free moments until the busy
    timeout ran out ("database is locked" under load); one waiter per process it serves.
    On PostgreSQL the dialect makes ``BEGIN IMMEDIATE`` take one advisory lock shared by
    every node (``postgresql_dialect``): the same one writer at a time.
    """
    with _process_writer:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def insert_row(db: Database, table: str, row: Mapping[str, Any]) -> int:
    """Insert one row; its new ``id``. Plain SQL that both backends run as written
    (``RETURNING`` on SQLite since 3.35): ``table`` and the keys come from code, never
    from input."""
    columns = ", ".join(row)
    marks = ", ".join("?" * len(row))
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks}) RETURNING id"  # noqa: S608
    return int(db.execute(sql, list(row.values())).fetchone()[0])


def insert_rows(
    db: Database, table: str, rows: Iterable[Mapping[str, Any]], *, or_ignore: bool = False
) -> None:
    """Insert rows that all have the same keys, in one ``executemany``; ``or_ignore``
    skips a row whose key is taken. ``table`` and the keys come from code."""
    rows = list(rows)
    if not rows:
        return
    columns = list(rows[0])
    verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
    marks = ", ".join("?" * len(columns))
    sql = f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608
    db.conn.executemany(sql, [[row[column] for column in columns] for row in rows])


def update_row(db: Database, table: str, row_id: int, row: Mapping[str, Any]) -> None:
    """Set the given columns of the row with this ``id``. ``table`` and keys from code."""
    assignments = ", ".join(f"{column} = ?" for column in row)
    sql = f"UPDATE {table} SET {assignments} WHERE id = ?"  # noqa: S608
    db.execute(sql, [*row.values(), row_id])


def ping(db: Database) -> None:
    """The cheapest round trip there is: proves the database opens and answers, nothing more."""
    db.execute("SELECT 1")


def schema_version(db: sqlite_utils.Database) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def migrate(db: sqlite_utils.Database) -> int:
    """Apply every migration the database has not had yet; returns the new version.

    Foreign keys are off while a migration runs (a pragma SQLite ignores inside a
    transaction, so it is set around it), so that a table can be rebuilt under its own
    name; every reference is checked before the migration commits.
    """
    db.execute("PRAGMA foreign_keys = OFF")
    try:
        while schema_version(db) < len(MIGRATIONS):
            with write_transaction(db):
                version = schema_version(db)  # re-read under the lock: another worker may have won
                if version < len(MIGRATIONS):
                    MIGRATIONS[version](db)
                    _refuse_broken_references(db)
                    db.execute(f"PRAGMA user_version = {version + 1}")
    finally:
        db.execute("PRAGMA foreign_keys = ON")
    return schema_version(db)


def _refuse_broken_references(db: sqlite_utils.Database) -> None:
    broken = db.execute("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise sqlite3.IntegrityError(f"a migration broke {len(broken)} references: {broken[:3]}")


def backup_database(
    source: str, target: str, progress: Callable[[int], object] | None = None
) -> int:
    """Copy a live database with SQLite's online backup API; returns the page count.

    The copy is consistent even while workers keep writing (the backup restarts over
    pages that change under it), and is checked with ``PRAGMA integrity_check``.
    """
    done = 0

    def report(_status: int, remaining: int, total: int) -> None:
        nonlocal done
        percent = 100 if total == 0 else int(100 * (total - remaining) / total)
        if progress is not None:
            progress(percent - done)
        done = percent

    src = sqlite3.connect(source)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst, pages=256, progress=report)
        if dst.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise RuntimeError(f"the backup at {target} failed its integrity check")
        return int(dst.execute("PRAGMA page_count").fetchone()[0])
    finally:
        dst.close()
        src.close()
