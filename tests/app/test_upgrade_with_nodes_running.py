"""Upgrading with nodes running (docs/deploying-several-servers.md, "Upgrades"): what the
migrations' lock guarantees, and what a node still running the old code does with the
newer schema. On both backends.
"""

from __future__ import annotations

import threading

import pytest

from survey_app.storage import backends, database

NODES = 3


def test_nodes_migrating_at_once_apply_each_migration_exactly_once(database_url: str) -> None:
    """Every node starting at once migrates the same empty database: each migration runs
    under the writers' lock with the version re-read there, so none runs twice (a second
    run would fail: its tables exist) and all end at the current version."""
    start = threading.Barrier(NODES)
    versions: list[int] = []
    errors: list[BaseException] = []

    def node() -> None:
        db = backends.connect(database_url)
        try:
            start.wait()
            versions.append(backends.migrate(db))
        except BaseException as err:  # reported below, whatever it is
            errors.append(err)
        finally:
            db.conn.close()

    threads = [threading.Thread(target=node) for _ in range(NODES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert versions == [len(database.MIGRATIONS)] * NODES


def test_an_old_node_on_a_newer_schema_neither_downgrades_nor_refuses_it(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node still running the previous release knows one migration fewer. Started on the
    upgraded database, it migrates nothing, leaves the version alone and serves on: safe
    for migrations that add (every one so far), which is why the guide upgrades the
    database first and says a release that renames or drops must stop the old nodes."""
    db = backends.connect(database_url)
    try:
        current = backends.migrate(db)
        monkeypatch.setattr(database, "MIGRATIONS", database.MIGRATIONS[:-1])  # the old code
        assert backends.migrate(db) == current
        assert backends.schema_version(db) == current
        database.ping(db)
    finally:
        db.conn.close()
