"""The URL builders the tests' apps share (tests/support/compiled_rules.py) are those
werkzeug compiles for each rule of each app."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import make_app
from tests.support.compiled_rules import compiled_builder, werkzeug_builder


def test_every_rule_of_a_new_app_gets_the_builder_werkzeug_compiles_for_it(
    tmp_path: Path,
) -> None:
    make_app(tmp_path / "first.db")  # its rules compiled, and kept
    for rule in make_app(tmp_path / "second.db").url_map.iter_rules():
        for append_unknown in (False, True):
            shared = compiled_builder(rule, append_unknown).__code__
            own = werkzeug_builder(rule, append_unknown).__code__
            assert shared.co_name == own.co_name
            assert (shared.co_code, shared.co_consts, shared.co_varnames) == (
                own.co_code,
                own.co_consts,
                own.co_varnames,
            ), rule.rule
