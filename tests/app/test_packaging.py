"""A built wheel carries everything an installed app reads: templates, browser scripts,
the compiled catalogs and the example surveys.

The catalogs (.mo) are built at packaging time and ignored by git, so a wheel would leave
them out without ``artifacts`` in pyproject.toml: an installed app would then speak only
English, and no test against the checkout would notice.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow


def test_the_wheel_carries_templates_scripts_catalogs_and_examples(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), "."],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
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
