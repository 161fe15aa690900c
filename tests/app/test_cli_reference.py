"""docs/cli.md is what scripts/cli_reference.py writes from the commands' own --help."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from survey_app.cli.commands import COMMANDS
from tests.support.paths import ROOT

SCRIPT = ROOT / "scripts" / "cli_reference.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_what_the_commands_say() -> None:
    script = _load_script()
    written = script.DOC.read_text(encoding="utf-8")
    assert written == script.reference(), (
        "docs/cli.md differs from the commands' --help: run python scripts/cli_reference.py"
    )


def test_every_command_has_its_section_with_its_usage_line() -> None:
    text = _load_script().reference()
    for command in COMMANDS:
        assert f"\n## survey-app {command.name}\n" in text, command.name
        assert f"Usage: survey-app {command.name} [OPTIONS]" in text, command.name
