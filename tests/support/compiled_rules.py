"""URL rules' builders compiled once per test process, not once for every test's app.

Every test builds an app, and werkzeug compiles two URL builders for each of its rules:
Python code generated as a syntax tree and compiled, 30 ms of the 35 an app takes to
build, about a minute of the fast subset's CPU time. A builder is a function of the
rule's parts alone (its text, domain, defaults and converters' kinds; the rule itself
comes in as an argument), so the same rule in the next app gets the same function.
``tests/app/test_compiled_rules.py`` checks that each is what werkzeug compiles.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from werkzeug.routing import Rule

Builder = Callable[..., tuple[str, str]]

#: What werkzeug compiles, kept for the compiled_builder and to compare with.
werkzeug_builder: Callable[[Rule, bool], Builder] = Rule._compile_builder
_compiled: dict[Hashable, Builder] = {}


def builder_key(rule: Rule, append_unknown: bool) -> Hashable:
    """Everything werkzeug's builder for ``rule`` depends on."""
    defaults = sorted((name, repr(value)) for name, value in (rule.defaults or {}).items())
    converters = sorted((name, type(kind)) for name, kind in rule._converters.items())
    return (rule.rule, tuple(rule._trace), tuple(defaults), tuple(converters), append_unknown)


def compiled_builder(rule: Rule, append_unknown: bool = True) -> Builder:
    """Werkzeug's builder for ``rule``, compiled on its first use in this process."""
    key = builder_key(rule, append_unknown)
    if key not in _compiled:
        _compiled[key] = werkzeug_builder(rule, append_unknown)
    return _compiled[key]


def compile_rules_once() -> None:
    """Have every app of this process share its rules' builders."""
    Rule._compile_builder = compiled_builder  # type: ignore[assignment,method-assign]
