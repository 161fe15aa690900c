"""One PostgreSQL database per test process, put back as the template left it between tests.

Copying the template for every test (``CREATE DATABASE ... TEMPLATE``, a checkpoint each)
took 0.1 s on an idle machine and about 0.3 s in the suite, and dropping the copy more:
two thirds of the fast subset's setup time. A test touches a few tables of thirty, so
emptying those and loading the template's rows back costs a few milliseconds instead.

What a new copy guaranteed, a reset guarantees too:

- every table holds the template's rows and no other: each table a test changed is
  emptied and the template's rows loaded back. ``TRUNCATE`` (new files, no dead row
  version left behind, as in a copy) empties those that only changed tables refer to:
  the responses, tallies, events and counts a test stores. The others (surveys, accounts:
  nearly every table refers to them, and ``TRUNCATE`` would have to empty all of those
  too, 30 ms) lose their rows with ``DELETE``, foreign keys unchecked for the moment;
- every sequence stands where the template's stood, so ids are those of a new copy;
- no kept counts of the test before are served: crosstabs keeps counts in memory by
  database setting and survey id, both the same again here, with the highest response
  id counted, which starts over at 1 (``crosstabs.forget_counts``).

When a reset cannot promise that, the database is left for the cluster to drop and a new
copy made, as every test got before: when a test changed the schema (or any other
object of the catalogue), left a connection in a transaction or running a statement,
or took the database away (renamed, dropped, or its connections ended by a copy).

The same two steps give a test module's later tests what its first one built
(``snapshot`` and ``load``, for the ``built_once`` fixture): thousands of rows loaded with
``COPY`` in milliseconds, where storing them took seconds.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass

import psycopg

from survey_app.storage import crosstabs

from .postgresql import Cluster

#: One text naming every object of the database's schema and settings: a test that
#: changes any of them (a table, a column, a function, an extension) changes it.
CATALOGUE = """
SELECT md5(string_agg(item, ',' ORDER BY item)) FROM (
    SELECT format('class %s %s %s', oid, relkind, relname) FROM pg_class
        WHERE relnamespace = 'public'::regnamespace
    UNION ALL SELECT format('column %s %s %s %s %s %s', attrelid, attnum, attname, atttypid,
        attnotnull, attisdropped) FROM pg_attribute
        WHERE attnum > 0 AND attrelid IN (
            SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)
    UNION ALL SELECT format('default %s', oid) FROM pg_attrdef
    UNION ALL SELECT format('constraint %s', oid) FROM pg_constraint
        WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT format('function %s', oid) FROM pg_proc
        WHERE pronamespace = 'public'::regnamespace
    UNION ALL SELECT format('trigger %s', oid) FROM pg_trigger
    UNION ALL SELECT format('extension %s', oid) FROM pg_extension
    UNION ALL SELECT format('type %s', oid) FROM pg_type
        WHERE typnamespace = 'public'::regnamespace
    UNION ALL SELECT format('setting %s', setconfig) FROM pg_db_role_setting
) AS catalogue (item)
"""
#: Other clients inside a transaction or running a statement: they may hold locks, and
#: what they do next would land in the next test's database.
BUSY = """
SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
    AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'
"""
SEQUENCES = """
SELECT quote_ident(sequencename), coalesce(last_value, start_value), last_value IS NOT NULL
FROM pg_sequences WHERE schemaname = 'public'
"""
SET_SEQUENCES = """
SELECT setval(name::regclass, value, called)
FROM unnest(%s::text[], %s::bigint[], %s::boolean[]) AS s (name, value, called)
"""
REFERENCES = """
SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint
WHERE contype = 'f' AND connamespace = 'public'::regnamespace AND conrelid <> confrelid
"""


def _digest_sql(table: str) -> str:
    """A digest of every row of ``table``, in an order of their own."""
    return f"(SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) FROM {table} r)"


@dataclass(frozen=True)
class State:
    """A database's rows, where its sequences stand, and its schema: what a reset puts
    back (the template's, read once), or what a test module built once (``snapshot``)."""

    schema: str
    #: Every table, each after the tables it refers to.
    tables: tuple[str, ...]
    #: For each table, the tables referring to it.
    referrers: dict[str, frozenset[str]]
    #: The rows of the tables that have some (``COPY``'s text), and their digests.
    rows: dict[str, bytes]
    digests: dict[str, str]
    sequences: tuple[tuple[str, ...], tuple[int, ...], tuple[bool, ...]]

    @classmethod
    def read(cls, conn: psycopg.Connection) -> State:
        referring: dict[str, set[str]] = {}
        order: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
        names = [name for (name,) in conn.execute(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public'"
        )]  # fmt: skip
        for name in names:
            order.add(name)
        for child, parent in conn.execute(REFERENCES):
            order.add(child, parent)
            referring.setdefault(parent, set()).add(child)
        tables = tuple(order.static_order())
        rows = {name: _copied(conn, name) for name in tables}
        rows = {name: data for name, data in rows.items() if data}
        digests = {name: _one(conn, f"SELECT {_digest_sql(name)}") for name in rows}
        sequences = conn.execute(SEQUENCES).fetchall()
        return cls(
            schema=_one(conn, CATALOGUE),
            tables=tables,
            referrers={name: frozenset(referring.get(name, ())) for name in tables},
            rows=rows,
            digests=digests,
            sequences=(
                tuple(name for name, _, _ in sequences),
                tuple(value for _, value, _ in sequences),
                tuple(called for _, _, called in sequences),
            ),
        )

    def changed_sql(self) -> str:
        """One row: the schema's text, the busy clients, and for each table whether a test
        changed it (a row where the template has none, or rows not the template's)."""
        changed = [
            f"{_digest_sql(name)} IS DISTINCT FROM '{self.digests[name]}'"
            if name in self.rows
            else f"EXISTS (SELECT FROM {name})"
            for name in self.tables
        ]
        return f"SELECT ({CATALOGUE}), ({BUSY}), {', '.join(changed)}"


def _copied(conn: psycopg.Connection, table: str) -> bytes:
    with conn.cursor().copy(f"COPY {table} TO STDOUT") as copy:
        return b"".join(bytes(block) for block in copy)


def _one(conn: psycopg.Connection, sql: str) -> str:
    """The one value ``sql`` selects, as text."""
    found = conn.execute(sql).fetchone()
    assert found is not None
    return str(found[0])


def _truncatable(changed: set[str], referrers: dict[str, frozenset[str]]) -> set[str]:
    """The most of the ``changed`` tables one ``TRUNCATE`` may empty: those that only
    tables it empties too refer to."""
    kept = set(changed)
    while left_out := {name for name in kept if not referrers[name] <= kept}:
        kept -= left_out
    return kept


class Unusable(Exception):
    """The database cannot be put back as the template left it; a new copy is needed."""


class WorkerDatabase:
    """This process's database for the tests' apps: a copy of the template, reset before
    each test (``clean``), copied anew when a reset cannot be trusted."""

    def __init__(self, cluster: Cluster, template_url: str) -> None:
        self.cluster = cluster
        self.template_url = template_url
        self.url = cluster.copy_database(template_url)
        self.fresh = True  # a new copy: nothing to reset
        with psycopg.connect(self.url, autocommit=True) as conn:
            self.template = State.read(conn)

    def clean(self) -> str:
        """The ``DATABASE`` setting of this process's database, as the template left it."""
        crosstabs.forget_counts()
        if not self.fresh:
            try:
                self._reset()
            except (Unusable, psycopg.OperationalError):
                self.cluster.release_database(self.url)
                self.url = self.cluster.copy_database(self.template_url)
        self.fresh = False
        return self.url

    def _reset(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            found = conn.execute(self.template.changed_sql()).fetchone()
            assert found is not None
            schema, busy, *changed = found
            if schema != self.template.schema or busy:
                raise Unusable(f"schema changed: {schema != self.template.schema}, busy: {busy}")
            dirty = {name for name, was in zip(self.template.tables, changed, strict=True) if was}
            _put(conn, self.template, dirty)

    def snapshot(self) -> State:
        """What the database holds now, to ``load`` again into a later test's."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            return State.read(conn)

    def load(self, state: State) -> None:
        """Put ``state`` (a ``snapshot``) in place of everything the database holds."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            _put(conn, state, set(state.tables))
        crosstabs.forget_counts()


def _put(conn: psycopg.Connection, state: State, emptied: set[str]) -> None:
    """Empty the tables ``emptied`` and load ``state``'s rows into them, and set every
    sequence as ``state`` has it, in one transaction. Foreign keys are not checked
    meanwhile (``session_replication_role``): every table that changed is emptied and
    loaded, so they hold again when it ends."""
    truncated = _truncatable(emptied, state.referrers)
    with conn.transaction():
        conn.execute("SET LOCAL lock_timeout = '5s'")
        conn.execute("SET LOCAL session_replication_role = replica")
        if truncated:
            conn.execute(f"TRUNCATE {', '.join(sorted(truncated))}")
        for name in sorted(emptied - truncated):
            conn.execute(f"DELETE FROM {name}")
        for name in state.tables:
            if name in emptied and name in state.rows:
                with conn.cursor().copy(f"COPY {name} FROM STDIN") as copy:
                    copy.write(state.rows[name])
        conn.execute(SET_SEQUENCES, [list(column) for column in state.sequences])
