"""The ``survey-app`` commands, run through Click's runner and, for ``run``, for real."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from flask.testing import FlaskCliRunner

from survey_app.storage.backends import Database
from tests.support.examples import EXAMPLE, SLUG
from tests.support.respondents import answers, fresh_form


def test_init_db_is_idempotent(runner: FlaskCliRunner, database: Database) -> None:
    first = runner.invoke(args=["init-db"])
    second = runner.invoke(args=["init-db"])
    assert first.exit_code == second.exit_code == 0
    assert "schema version" in second.output
    # the data survives a second init
    assert database.execute("SELECT count(*) FROM surveys").fetchone()[0] == 1


def test_import_survey_prints_the_slug(runner: FlaskCliRunner, tmp_path: Path) -> None:
    definition = tmp_path / "other.json"
    definition.write_text(
        '{"slug": "other", "title": "Other", "questions": '
        '[{"key": "q1", "text": "Question one?", "type": "yes_no"}]}'
    )
    result = runner.invoke(args=["import-survey", str(definition)])
    assert result.exit_code == 0
    assert result.output == "other\n"


def test_import_survey_refuses_a_bad_file_and_stores_nothing(
    runner: FlaskCliRunner, database: Database, tmp_path: Path
) -> None:
    definition = tmp_path / "bad.yaml"
    definition.write_text(
        "slug: bad\ntitle: Bad\nquestions:\n  - key: ok\n    text: Fine?\n"
        "  - key: Not OK\n    text: Broken?\n"
    )
    result = runner.invoke(args=["import-survey", str(definition)])
    assert result.exit_code == 1
    assert "bad.yaml:6: questions[1].key" in result.output
    # only the fixture's survey
    assert database.execute("SELECT count(*) FROM surveys").fetchone()[0] == 1


def test_import_survey_refuses_a_duplicate_slug(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["import-survey", str(EXAMPLE)])
    assert result.exit_code == 1
    assert "already exists" in result.output


def test_export_responses(app, runner: FlaskCliRunner, tmp_path: Path) -> None:
    client = app.test_client()
    client.post(f"/s/{SLUG}", data={**fresh_form(client), **answers(), "randomized": "client"})
    result = runner.invoke(args=["export", SLUG, "--responses"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "survey,answered_on,design,cheated,drugs,skipped_meals"
    assert lines[1].startswith("campus-health,") and lines[1].endswith(",1,1,1")
    output = tmp_path / "responses.csv"
    assert runner.invoke(args=["export", SLUG, "--responses", "-o", str(output)]).exit_code == 0
    assert output.read_text().splitlines() == lines


def test_export_of_an_unknown_survey_fails(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["export", "nope", "--responses"])
    assert result.exit_code == 1
    assert "no survey with slug 'nope'" in result.output


@pytest.mark.slow
def test_run_on_a_fresh_database_serves_the_example(tmp_path: Path, database_url: str) -> None:
    """``survey-app run`` on nothing (a new file, or an empty PostgreSQL database): migrates
    it, loads the example, prints the URL."""
    port = _free_port()
    env = {**os.environ, "SURVEY_APP_DATABASE": database_url}
    server = subprocess.Popen(
        [sys.executable, "-m", "survey_app.cli.commands", "run", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert server.stdout is not None
        printed = [server.stdout.readline() for _ in range(2)]
        assert f"open http://127.0.0.1:{port}/" in printed[1]
        page = _get_when_up(f"http://127.0.0.1:{port}/")
        assert "Campus health survey" in page
    finally:
        server.terminate()
        server.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get_when_up(url: str, attempts: int = 50) -> str:
    for _ in range(attempts):
        try:
            return urllib.request.urlopen(url).read().decode()
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


@pytest.mark.parametrize("command", [["export", SLUG, "-o"], ["backup"]], ids=["export", "backup"])
def test_writing_into_a_missing_folder_is_a_clear_error(
    runner: FlaskCliRunner, tmp_path: Path, command: list[str]
) -> None:
    target = tmp_path / "missing" / "file"
    result = runner.invoke(args=[*command, str(target)])
    assert result.exit_code == 1
    assert result.output == f"Error: cannot write {target}: No such file or directory\n"
    assert not target.parent.exists()


def test_create_researcher_checks_the_username_before_asking_for_a_password(
    runner: FlaskCliRunner,
) -> None:
    created = runner.invoke(args=["create-researcher", "ana", "--password-stdin"], input="x" * 12)
    assert created.exit_code == 0, created.output
    # No input at all: a prompt would abort; the taken name must be refused first.
    again = runner.invoke(args=["create-researcher", "ana"], input="")
    assert again.exit_code == 1
    assert "Password" not in again.output
    assert "researcher 'ana' already exists" in again.output
    malformed = runner.invoke(args=["create-researcher", "no spaces"], input="")
    assert malformed.exit_code == 1 and "Password" not in malformed.output


def _survey_app(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``survey-app ARGS`` as an operator runs it: a process of its own, in ``tmp_path``."""
    return subprocess.run(
        [sys.executable, "-m", "survey_app.cli.commands", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "SURVEY_APP_DATABASE": str(tmp_path / "survey.db"), **env},
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_a_bad_setting_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    result = _survey_app(tmp_path, "init-db", SURVEY_APP_RATE_LIMITS="maybe")
    assert result.returncode == 1
    assert result.stderr == "Error: SURVEY_APP_RATE_LIMITS: expected on or off, got 'maybe'\n"


@pytest.mark.slow
def test_a_database_in_a_missing_folder_is_refused_not_created(tmp_path: Path) -> None:
    target = tmp_path / "typo" / "survey.db"
    result = _survey_app(tmp_path, "init-db", SURVEY_APP_DATABASE=str(target))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert f"the folder '{target.parent}' does not exist" in result.stderr
    assert not target.parent.exists()


@pytest.mark.slow
def test_an_unreachable_postgresql_database_is_one_line_naming_the_setting(
    tmp_path: Path,
) -> None:
    result = _survey_app(
        tmp_path, "init-db", SURVEY_APP_DATABASE="postgresql://nobody:secret@127.0.0.1:1/x"
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("Error: SURVEY_APP_DATABASE: cannot open PostgreSQL")
    assert "'x' at 127.0.0.1:1 as 'nobody'" in result.stderr
    assert "secret" not in result.stderr + result.stdout


@pytest.mark.slow
def test_help_lists_only_this_apps_commands_in_its_own_words(tmp_path: Path) -> None:
    result = _survey_app(tmp_path, "--help")
    assert result.returncode == 0
    assert "Collect sensitive survey answers" in result.stdout
    assert "yes/no" not in result.stdout
    listed = result.stdout.split("Commands:")[1]
    for foreign in ("limiter", "routes", "shell"):
        assert f"  {foreign} " not in listed


@pytest.mark.slow
def test_run_on_a_busy_port_fails_without_claiming_to_run(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _survey_app(tmp_path, "run", "--port", str(port))
    assert result.returncode == 1
    assert "running" not in result.stdout
    assert "in use" in result.stderr


def test_a_negative_budget_is_refused_in_words_not_taken_for_an_option(
    runner: FlaskCliRunner,
) -> None:
    result = runner.invoke(args=["budget", SLUG, "-1"])
    assert result.exit_code == 1
    assert "No such option" not in result.output
    assert "ε cannot be '-1'" in result.output
