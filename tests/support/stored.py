"""What the app left in its database file, read on its own as a thief or an auditor would."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import sqlite_utils

from .examples import KEYS, SLUG


def tally_cells(database: sqlite_utils.Database) -> dict[str, dict[str, int]]:
    """Every question's running tallies by key ({"n": …, "yes": …} for yes/no)."""
    cells: dict[str, dict[str, int]] = {}
    for key, cell, value in database.execute(
        "SELECT q.key, t.cell, t.value FROM questions q LEFT JOIN tallies t ON t.question_id = q.id"
    ).fetchall():
        cells.setdefault(key, {})
        if cell is not None:
            cells[key][cell] = value
    return cells


class StoredState:
    """The app's database file opened on its own, autocommit, as an auditor would: what
    many generated requests left behind, for the example survey."""

    def __init__(self, path: str) -> None:
        self.path = path

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    def counts(self) -> tuple[int, dict[str, tuple[int, int]]]:
        """(response rows, {question key: (n, reported_yes)}) for the example survey."""
        with self.connect() as conn:
            rows = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
            counters = dict.fromkeys(KEYS, (0, 0))
            for key, n, yes in conn.execute(
                "SELECT q.key, sum(t.value * (t.cell = 'n')), sum(t.value * (t.cell = 'yes')) "
                "FROM questions q JOIN surveys s ON q.survey_id = s.id "
                "JOIN tallies t ON t.question_id = q.id WHERE s.slug = ? GROUP BY q.key",
                [SLUG],
            ):
                counters[key] = (n, yes)
        return rows, counters

    def recounted(self) -> dict[str, tuple[int, int]]:
        """The counters rebuilt from the stored rows: what they must always equal."""
        counters = dict.fromkeys(KEYS, (0, 0))
        with self.connect() as conn:
            for (stored_answers,) in conn.execute("SELECT answers FROM responses"):
                for key, value in json.loads(stored_answers).items():
                    n, yes = counters[key]
                    counters[key] = (n + 1, yes + value)
        return counters

    def reset_responses(self) -> None:
        """Back to no responses, in one transaction (each commit is an fsync: keep them few)."""
        with self.connect() as conn:
            if conn.execute("SELECT count(*) FROM responses").fetchone()[0]:
                conn.executescript(
                    "BEGIN; DELETE FROM responses; DELETE FROM tallies; "
                    "UPDATE surveys SET responses = 0; COMMIT;"
                )

    def table_sizes(self) -> tuple[int, int]:
        """(surveys, questions)."""
        with self.connect() as conn:
            surveys = conn.execute("SELECT count(*) FROM surveys").fetchone()[0]
            questions = conn.execute("SELECT count(*) FROM questions").fetchone()[0]
        return surveys, questions
