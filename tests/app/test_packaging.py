"""A built wheel carries everything an installed app reads: templates, browser scripts,
the compiled catalogs and the example surveys.

The catalogs (.mo) are built at packaging time and ignored by git, so a wheel would leave
them out without ``artifacts`` in pyproject.toml: an installed app would then speak only
English, and no test against the checkout would notice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow


# Left out of the copy the wheel is built from: nothing a wheel takes, and large.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "instance", ".hypothesis", "__pycache__", "data", "results"
)


def test_the_wheel_carries_templates_scripts_catalogs_and_examples(tmp_path: Path) -> None:
    """Built from a copy of the checkout: the build compiles the catalogs in the tree it
    builds, with its own Babel, whose bytes may differ from the checkout's (and
    ``test_compiled_catalog_is_current``, run later in the suite, would then fail)."""
    catalogs = sorted((ROOT / "survey_app" / "translations").glob("*/LC_MESSAGES/messages.mo"))
    before = [path.read_bytes() for path in catalogs]
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), "."],
        cwd=source,
        check=True,
        capture_output=True,
    )
    assert [path.read_bytes() for path in catalogs] == before  # the checkout's, untouched
    [wheel] = tmp_path.glob("survey_app-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "survey_app/templates/respond/survey.html",
        "survey_app/static/coins.js",
        "survey_app/static/randomize.js",
        "survey_app/static/mechanisms/duchi.js",
        "survey_app/translations/ko/LC_MESSAGES/messages.mo",
        "survey_app/translations/zh/LC_MESSAGES/messages.mo",
        "survey_app/examples/campus-health.yaml",
    }
    assert sorted(expected - names) == []
