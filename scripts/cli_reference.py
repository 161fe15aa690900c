"""The command-line reference, docs/cli.md, written from the commands' own ``--help``.

A reference typed by hand drifts from the code; this one is each command's ``--help`` as
``survey-app`` prints it in a terminal of 80 columns or more, so the page changes exactly when
a command's words, options or defaults do. ``tests/app/test_cli_reference.py`` fails when
docs/cli.md differs from what this script writes.

    python scripts/cli_reference.py            # rewrite docs/cli.md
    python scripts/cli_reference.py --check    # exit status 1 if docs/cli.md is stale
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import click
from flask import Flask
from flask.cli import ScriptInfo

from survey_app.cli.commands import main as survey_app_group
from survey_app.cli.commands import register_commands

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"
COMMAND = "python scripts/cli_reference.py"
# click wraps help at the terminal's width less 2, at most 78: the page is what a terminal of
# 80 columns or more shows, whatever terminal writes it.
WIDTH = 78
PROGRAM = "survey-app"

HEADER = f"""# Command-line reference

<!-- Written by scripts/cli_reference.py from each command's --help: do not edit by hand.
     After changing a command, run `{COMMAND}`; tests/app/test_cli_reference.py
     fails until docs/cli.md matches. -->

Every command `{PROGRAM}` offers, with the help it prints (`{PROGRAM} COMMAND --help`).
`flask --app survey_app COMMAND` runs the same commands (its `run` is Flask's own). Settings
come from `SURVEY_APP_*` environment variables: see [operating.md](operating.md#configuration).
"""


def _bare_app_info() -> ScriptInfo:
    """The group finds its commands on an app; a bare one that carries them is enough.

    The real app would open (and perhaps create) a database and a secret key just to print
    help, and its settings would have to be valid where the reference is written.
    """
    app = Flask("survey_app")
    register_commands(app)
    return ScriptInfo(create_app=lambda: app)


def _help_block(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```\n"


def _anchor(title: str) -> str:
    """GitHub's anchor for a heading made of lowercase words, hyphens and spaces."""
    return title.replace(" ", "-")


def reference() -> str:
    """The whole of docs/cli.md: the group's help, a table of commands, then each one's."""
    group_context = click.Context(
        survey_app_group,
        info_name=PROGRAM,
        obj=_bare_app_info(),
        terminal_width=WIDTH,
    )
    with group_context:
        names = survey_app_group.list_commands(group_context)
        commands = [survey_app_group.get_command(group_context, name) for name in names]
        rows = ["| command | what it does |", "|---|---|"]
        sections = [f"## {PROGRAM}\n\n" + _help_block(survey_app_group.get_help(group_context))]
        for name, command in zip(names, commands, strict=True):
            assert command is not None, name
            title = f"{PROGRAM} {name}"
            summary = command.get_short_help_str(limit=200)
            rows.append(f"| [`{name}`](#{_anchor(title)}) | {summary} |")
            with click.Context(command, info_name=name, parent=group_context) as context:
                sections.append(f"## {title}\n\n" + _help_block(command.get_help(context)))
    return HEADER + "\n" + "\n".join(rows) + "\n\n" + "\n".join(sections)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if docs/cli.md differs; write nothing"
    )
    args = parser.parse_args(argv)
    text = reference()
    if args.check:
        if DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
