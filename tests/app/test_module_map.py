"""DESIGN.md's module map names every module of the package, and only those.

The map is kept by hand (one line per module, saying its job); this test keeps it from
drifting, as the settings table and the CLI reference are kept by theirs.
"""

from __future__ import annotations

import re

from tests.support.paths import ROOT

# A map line: two spaces of indent per folder level, then a module or a folder name.
ENTRY = re.compile(r"^(?P<indent>(?:  )*)(?P<name>\w+\.py|\w+/)(?:\s|$)")
DEEPEST_INDENT = 16  # continuation lines are indented past the name column


def map_block() -> list[str]:
    text = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    section = text.split("\n## Architecture\n", 1)[1]
    return section.split("```\n", 2)[1].splitlines()


def mapped_modules(lines: list[str]) -> set[str]:
    """The module paths the map names, from its indentation."""
    folders: list[str] = []
    found = set()
    for line in lines:
        match = ENTRY.match(line)
        if not match or len(match["indent"]) > DEEPEST_INDENT:
            continue
        depth = len(match["indent"]) // 2
        del folders[depth:]
        name = match["name"]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        else:
            found.add("/".join([*folders, name]))
    # A package's own line (one with modules below it) speaks for its __init__.py.
    packages = {path.rsplit("/", 1)[0] for path in found}
    found |= {f"{package}/__init__.py" for package in packages}
    return {path for path in found if path.startswith("survey_app/")}


def test_the_module_map_names_every_module_and_no_other():
    on_disk = {path.relative_to(ROOT).as_posix() for path in (ROOT / "survey_app").rglob("*.py")}
    mapped = mapped_modules(map_block())
    assert sorted(on_disk - mapped) == [], "add these to DESIGN.md's module map"
    assert sorted(mapped - on_disk) == [], "DESIGN.md's module map names modules that are gone"


def test_the_map_reader_sees_nesting():
    lines = ["survey_app/", "  a.py   one", "  pkg/", "    b.py   two", "  c.py", "  data/", "x/"]
    assert mapped_modules(lines) == {
        "survey_app/__init__.py",
        "survey_app/a.py",
        "survey_app/pkg/__init__.py",
        "survey_app/pkg/b.py",
        "survey_app/c.py",
    }
