"""SQLite's SQL as PostgreSQL runs it: the one place where the two dialects' differences
are decided.

The storage layer writes its SQL once, in SQLite's dialect (where both databases accept
the same text, that text: ``ON CONFLICT``, ``RETURNING``, ``CHECK``, ``ALTER TABLE ... ADD
COLUMN``). On PostgreSQL every statement passes through ``translate`` first, which only
rewrites what differs, outside string literals:

- placeholders: ``?`` and ``:name`` become psycopg's ``%s`` and ``%(name)s`` (and a
  literal ``%`` is doubled), for statements run with parameters;
- types: ``INTEGER`` is 64-bit in SQLite, so ``BIGINT``; ``REAL`` is a double, so
  ``DOUBLE PRECISION``; an ``id INTEGER PRIMARY KEY`` (with or without ``AUTOINCREMENT``)
  is an identity column, which never gives an id out twice, as ``AUTOINCREMENT`` promises;
- ``WITHOUT ROWID`` is SQLite's storage choice, dropped; ``INSERT OR IGNORE`` is
  ``ON CONFLICT DO NOTHING``;
- ``COLLATE BINARY`` (SQLite's byte order, which storage names where it orders text) is
  ``COLLATE "C"``, the same byte order, whatever the database's own collation;
- a trigger that refuses an update (``SELECT RAISE(ABORT, '...')``) becomes a PL/pgSQL
  function raising the same message, and a trigger calling it;
- ``BEGIN IMMEDIATE`` (SQLite's one writer at a time) becomes a transaction that first
  takes one advisory lock shared by every node, so writers queue exactly as they do on
  SQLite; a plain ``BEGIN`` (a consistent read) is ``REPEATABLE READ``.

Comments are dropped. What has no translation (``PRAGMA``, ``sqlite_master``) is refused
with the statement named: storage code decides those per backend, and a migration that
needs one has a PostgreSQL counterpart in ``postgresql.MIGRATION_COUNTERPARTS``.
"""

from __future__ import annotations

import re

# Any number: the key every writer's advisory lock uses ("surv" in ASCII).
WRITER_LOCK_KEY = 0x73757276

_LITERAL = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*")
_SLOT = "\x00{}\x00"
_SLOT_PATTERN = re.compile("\x00(\\d+)\x00")

_ID_COLUMN = re.compile(r"\bid\s+INTEGER\s+PRIMARY\s+KEY(?:\s+AUTOINCREMENT)?\b", re.I)
_TYPES = (
    (re.compile(r"\bINTEGER\b", re.I), "BIGINT"),
    (re.compile(r"\bREAL\b", re.I), "DOUBLE PRECISION"),
)
_WITHOUT_ROWID = re.compile(r"\)\s*WITHOUT\s+ROWID\b", re.I)
_INSERT_OR_IGNORE = re.compile(r"\bINSERT\s+OR\s+IGNORE\s+INTO\b", re.I)
_RETURNING = re.compile(r"\bRETURNING\b", re.I)
_COLLATE_BINARY = re.compile(r"\bCOLLATE\s+BINARY\b", re.I)
_REFUSING_TRIGGER = re.compile(
    r"CREATE\s+TRIGGER\s+(?P<name>\w+)\s+(?P<when>BEFORE\s+(?:UPDATE|INSERT|DELETE)\b.*?)"
    r"\s+ON\s+(?P<table>\w+)\s+BEGIN\s+SELECT\s+RAISE\s*\(\s*ABORT\s*,\s*(?P<message>\x00\d+\x00)"
    r"\s*\)\s*;\s*END\s*;?",
    re.I | re.S,
)
_BEGIN_IMMEDIATE = re.compile(r"^\s*BEGIN\s+IMMEDIATE\s*;?\s*$", re.I)
_BEGIN_DEFERRED = re.compile(r"^\s*BEGIN(?:\s+DEFERRED)?\s*;?\s*$", re.I)
_QUESTION_MARK = re.compile(r"\?")
_NAMED = re.compile(r"(?<!:):([A-Za-z_]\w*)")
_UNTRANSLATABLE = re.compile(r"\b(PRAGMA|sqlite_master|sqlite_schema|ATTACH)\b", re.I)


class UntranslatableError(ValueError):
    """SQLite SQL with no PostgreSQL counterpart: storage must decide it per backend."""


def begins_write(sql: str) -> bool:
    """Whether ``sql`` is SQLite's ``BEGIN IMMEDIATE``: a write transaction starting."""
    return _BEGIN_IMMEDIATE.match(sql) is not None


def translate(sql: str, *, parameters: bool) -> str:
    """``sql`` (SQLite's dialect) as PostgreSQL runs it.

    ``parameters``: the statement runs with parameters, so placeholders are rewritten and
    a literal ``%`` doubled (psycopg reads ``%`` only then).
    """
    if begins_write(sql):
        return f"BEGIN; SELECT pg_advisory_xact_lock({WRITER_LOCK_KEY})"
    if _BEGIN_DEFERRED.match(sql):
        return "BEGIN ISOLATION LEVEL REPEATABLE READ"
    literals: list[str] = []
    code = _LITERAL.sub(lambda m: _hold(m.group(0), literals), sql)
    refused = _UNTRANSLATABLE.search(code)
    if refused:
        raise UntranslatableError(f"{refused.group(1)} has no PostgreSQL translation: {sql!r}")
    code = _statements(_REFUSING_TRIGGER.sub(_plpgsql_trigger, code))
    if parameters:
        code = code.replace("%", "%%")
        code = _NAMED.sub(r"%(\1)s", _QUESTION_MARK.sub("%s", code))
    return _SLOT_PATTERN.sub(lambda m: _restore(literals[int(m.group(1))], parameters), code)


def _hold(text: str, literals: list[str]) -> str:
    """Keep a literal out of the rewriting (a comment is dropped instead)."""
    if text.startswith("--"):
        return ""
    literals.append(text)
    return _SLOT.format(len(literals) - 1)


def _restore(literal: str, parameters: bool) -> str:
    return literal.replace("%", "%%") if parameters else literal


def _statements(code: str) -> str:
    """Rewrite each statement of a script on its own; a function's body is left whole."""
    parts = re.split(r"(\$\$.*?\$\$)", code, flags=re.S)
    return "".join(
        part if part.startswith("$$") else ";".join(map(_translate_statement, part.split(";")))
        for part in parts
    )


def _translate_statement(statement: str) -> str:
    statement = _ID_COLUMN.sub("id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", statement)
    for pattern, name in _TYPES:
        statement = pattern.sub(name, statement)
    statement = _WITHOUT_ROWID.sub(")", statement)
    statement = _COLLATE_BINARY.sub('COLLATE "C"', statement)
    if _INSERT_OR_IGNORE.search(statement):
        statement = _INSERT_OR_IGNORE.sub("INSERT INTO", statement)
        returning = _RETURNING.search(statement)
        at = returning.start() if returning else len(statement.rstrip())
        statement = f"{statement[:at].rstrip()} ON CONFLICT DO NOTHING {statement[at:]}".rstrip()
    return statement


def _plpgsql_trigger(match: re.Match[str]) -> str:
    """SQLite's refusing trigger as a PL/pgSQL function and a row trigger calling it."""
    name, table, message = match["name"], match["table"], match["message"]
    return (
        f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$BEGIN RAISE EXCEPTION {message}; END$$; "
        f"CREATE TRIGGER {name} {' '.join(match['when'].split())} ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}();"
    )
