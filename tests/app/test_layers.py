"""The package's layers, checked in its source (read with ``ast``, never imported).

``privacy/`` is a pure library, ``domain/`` the study's rules, ``storage/`` the only layer
that knows the database is SQLite, ``web/`` and ``cli/`` the two doors (DESIGN.md,
"Layers"). Imports are checked as written, anywhere in a module (inside functions and
``TYPE_CHECKING`` blocks too):

- ``privacy`` imports nothing of ``survey_app`` outside ``survey_app.privacy``, and no
  flask, flask_*, werkzeug, sqlite3 or sqlite_utils;
- ``domain`` imports no flask, flask_* or werkzeug (not even Werkzeug's ``MultiDict``: a
  form's fields reach the domain as plain data, so the rules serve a caller without HTTP
  too), and nothing of ``survey_app.web`` or ``survey_app.cli``;
- ``storage`` imports no flask or flask_* and nothing of ``survey_app.web`` or
  ``survey_app.cli`` (Werkzeug's password hashing is a library it may use).

SQL stays under ``storage/``, so another database needs no change above it. Outside
``storage/`` a module fails when it has

- a string literal (docstrings aside: prose may name SQL) holding ``SELECT ``,
  ``INSERT ``, ``UPDATE ``, ``DELETE ``, ``CREATE ``, ``PRAGMA`` or ``json_extract``;
- a call of a method named ``execute``, ``executemany``, ``executescript``, ``query`` or
  ``table`` (sqlite3's and sqlite-utils' ways to run SQL or reach a table);
- a string subscript of a name ``db`` or ``database`` (a sqlite-utils table,
  ``db["responses"]``), or any use of ``sqlite3.``.

A heuristic, kept simple on purpose: it can be fooled, but not by accident.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_SPEC = importlib.util.find_spec("survey_app")
assert PACKAGE_SPEC is not None and PACKAGE_SPEC.origin is not None
PACKAGE = Path(PACKAGE_SPEC.origin).parent

WEB_FRAMEWORK = ("flask", "flask_*", "werkzeug")
APP_DOORS = ("survey_app.web", "survey_app.cli")
# Per layer: the modules it may not import, and the exceptions to them.
FORBIDDEN_IMPORTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "privacy": (("survey_app", *WEB_FRAMEWORK, "sqlite3", "sqlite_utils"), ("survey_app.privacy",)),
    "domain": ((*WEB_FRAMEWORK, *APP_DOORS), ()),
    "storage": (("flask", "flask_*", *APP_DOORS), ()),
}
SQL_WORDS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "PRAGMA", "json_extract")
SQL_METHODS = {"execute", "executemany", "executescript", "query", "table"}
DATABASE_NAMES = {"db", "database"}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _modules(root: Path, under: str = "") -> Iterator[tuple[str, Path]]:
    """Each module's dotted name and file, below ``root`` (the folder of ``survey_app``)."""
    for path in sorted((root / under).rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """Every name an ``import`` brings in, dotted in full (``from m import x``: ``m.x``)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _matches(name: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return name.split(".")[0].startswith(pattern[:-1])
    return name == pattern or name.startswith(pattern + ".")


def import_violations(root: Path, layer: str) -> list[Violation]:
    forbidden, allowed = FORBIDDEN_IMPORTS[layer]
    found = []
    for module, path in _modules(root, layer):
        tree = ast.parse(path.read_text(), str(path))
        for line, name in imported_names(tree, module, _is_package(path)):
            if any(_matches(name, p) for p in forbidden) and not any(
                _matches(name, p) for p in allowed
            ):
                found.append(Violation(_shown(root, path), line, f"{layer} imports {name}"))
    return sorted(set(found), key=lambda v: (v.path, v.line, v.what))


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes: modules', classes' and functions' first strings."""
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, owners)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _sql_use(node: ast.AST, docstrings: set[int]) -> str | None:
    """What makes this node database work, if anything (the module docstring's rules)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if id(node) not in docstrings:
            words = [word.strip() for word in SQL_WORDS if word in node.value]
            return f"SQL in a string ({', '.join(words)})" if words else None
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in SQL_METHODS:
            return f"a .{node.func.attr}() call"
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        if node.value.id in DATABASE_NAMES and isinstance(node.slice, ast.Constant):
            return f"a table reached as {node.value.id}[{node.slice.value!r}]"
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id == "sqlite3":
            return f"sqlite3.{node.attr}"
    return None


def sql_violations(root: Path) -> list[Violation]:
    """Database work in any module of the package outside ``storage/``."""
    found = []
    for _module, path in _modules(root):
        if path.relative_to(root).parts[0] == "storage":
            continue
        tree = ast.parse(path.read_text(), str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            what = _sql_use(node, docstrings)
            if what is not None:
                found.append(Violation(_shown(root, path), getattr(node, "lineno", 0), what))
    return sorted(set(found), key=lambda v: (v.path, v.line, v.what))


def _shown(root: Path, path: Path) -> str:
    return str(path.relative_to(root.parent))


def _report(found: list[Violation]) -> str:
    return "\n".join(str(violation) for violation in found)


def test_the_privacy_library_imports_nothing_of_the_app_the_web_or_sqlite() -> None:
    found = import_violations(PACKAGE, "privacy")
    assert not found, _report(found)


def test_the_domain_imports_neither_flask_nor_the_web_or_command_line() -> None:
    found = import_violations(PACKAGE, "domain")
    assert not found, _report(found)


def test_storage_imports_neither_flask_nor_the_web_or_command_line() -> None:
    found = import_violations(PACKAGE, "storage")
    assert not found, _report(found)


def test_sql_and_sqlite_appear_only_in_storage() -> None:
    found = sql_violations(PACKAGE)
    assert not found, _report(found)


def test_importing_the_privacy_library_loads_no_flask_and_no_database() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, survey_app.privacy; "
            "print(sorted({m.split('.')[0] for m in sys.modules} "
            "& {'flask', 'werkzeug', 'sqlite_utils', 'sqlite3'}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "[]"


PLANTED = [
    ("privacy/leak.py", "from survey_app.config import SETTINGS\n", "privacy", "survey_app.config"),
    ("privacy/leak.py", "from ..domain import designs\n", "privacy", "survey_app.domain"),
    ("privacy/leak.py", "import sqlite_utils\n", "privacy", "sqlite_utils"),
    ("domain/leak.py", "def f():\n    from flask import request\n", "domain", "flask"),
    ("domain/leak.py", "from flask_babel import gettext\n", "domain", "flask_babel"),
    ("domain/leak.py", "from werkzeug.datastructures import MultiDict\n", "domain", "werkzeug"),
    ("domain/leak.py", "from survey_app.web.i18n import gettext\n", "domain", "survey_app.web"),
    ("domain/leak.py", "from survey_app import cli\n", "domain", "survey_app.cli"),
    ("storage/leak.py", "from flask import current_app\n", "storage", "flask"),
    ("storage/leak.py", "from ..web import app\n", "storage", "survey_app.web"),
]


@pytest.mark.parametrize(("where", "source", "layer", "named"), PLANTED)
def test_each_import_rule_catches_a_planted_import(
    tmp_path: Path, where: str, source: str, layer: str, named: str
) -> None:
    root = _planted(tmp_path, where, source)
    [violation] = import_violations(root, layer)
    assert violation.path == f"survey_app/{where}"
    assert f"imports {named}" in violation.what


@pytest.mark.parametrize(
    "source",
    [
        'COUNT = "SELECT count(*) FROM responses"\n',
        'def f(key):\n    return f"json_extract(answers, {key})"\n',
        "def f(db):\n    db.execute(QUERY)\n",
        "def f(db):\n    return db.query(QUERY)\n",
        'def f(db):\n    return db["responses"].count\n',
        "import sqlite3\nERROR = sqlite3.Error\n",
    ],
)
def test_the_sql_rule_catches_planted_sql_outside_storage(tmp_path: Path, source: str) -> None:
    root = _planted(tmp_path, "web/leak.py", source)
    assert [v.path for v in sql_violations(root)] == ["survey_app/web/leak.py"]
    (root / "web/leak.py").rename(root / "storage/leak.py")
    assert sql_violations(root) == []


def test_the_sql_rule_lets_docstrings_name_sql(tmp_path: Path) -> None:
    root = _planted(tmp_path, "web/prose.py", '"""One ``SELECT 1`` proves it opens."""\n')
    assert sql_violations(root) == []


def _planted(tmp_path: Path, where: str, source: str) -> Path:
    """A package of empty layers with one module holding ``source``."""
    root = tmp_path / "survey_app"
    for layer in ("privacy", "domain", "storage", "web", "cli"):
        (root / layer).mkdir(parents=True)
        (root / layer / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / where).write_text(source)
    return root
