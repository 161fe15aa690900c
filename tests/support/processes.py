"""The ``survey-app`` command in a process of its own, as an operator runs it beside a
served app (tests that start real gunicorn servers prepare their database this way)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_survey_app(
    args: tuple[str, ...], *, cwd: Path, env: dict[str, str], stdin: str | None = None
) -> str:
    """Run ``survey-app ARGS``; its standard output (a failure says its standard error)."""
    completed = subprocess.run(
        [sys.executable, "-c", "from survey_app.cli.commands import main; main()", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, (
        f"survey-app {' '.join(args)} exited with {completed.returncode}:\n{completed.stderr}"
    )
    return completed.stdout
