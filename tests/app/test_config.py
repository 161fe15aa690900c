"""Settings: declared once, read from the environment, documented in docs/operating.md."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from survey_app import create_app
from survey_app.config import SETTINGS, command_line_base, instance_secret_key, load_settings
from tests.support.paths import ROOT

OPERATING = ROOT / "docs" / "operating.md"


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_setting_is_in_the_operating_guide_table(setting) -> None:
    rows = [
        line
        for line in OPERATING.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `SURVEY_APP_")
    ]
    assert any(row.startswith(f"| `{setting.env_var}` |") for row in rows)


def test_environment_overrides_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SURVEY_APP_MAX_CONTENT_LENGTH", "1234")
    monkeypatch.setenv("SURVEY_APP_SESSION_COOKIE_SECURE", "on")
    values = load_settings()
    assert values["MAX_CONTENT_LENGTH"] == 1234
    assert values["SESSION_COOKIE_SECURE"] is True
    assert load_settings({"MAX_CONTENT_LENGTH": 99})["MAX_CONTENT_LENGTH"] == 99


def test_a_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SURVEY_APP_SESSION_COOKIE_SECURE", "maybe")
    with pytest.raises(ValueError, match="SURVEY_APP_SESSION_COOKIE_SECURE"):
        load_settings()


def test_secret_key_is_generated_once_and_private(tmp_path: Path) -> None:
    first = instance_secret_key(tmp_path)
    assert len(first) == 64
    assert instance_secret_key(tmp_path) == first
    mode = stat.S_IMODE((tmp_path / "secret_key").stat().st_mode)
    assert mode == 0o600


def test_app_without_a_key_uses_the_instance_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SURVEY_APP_SECRET_KEY", raising=False)
    app = create_app({"DATABASE": str(tmp_path / "s.db")})
    assert app.config["SECRET_KEY"] == (Path(app.instance_path) / "secret_key").read_text()


def test_session_and_host_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SURVEY_APP_TRUSTED_HOSTS", " survey.example.org, .example.net ")
    monkeypatch.setenv("SURVEY_APP_SESSION_IDLE_MINUTES", "15")
    monkeypatch.setenv("SURVEY_APP_PASSWORD_HASH_METHOD", "scrypt:65536:8:1")
    values = load_settings()
    assert values["TRUSTED_HOSTS"] == ["survey.example.org", ".example.net"]
    assert values["SESSION_IDLE_MINUTES"] == 15
    assert values["SESSION_MAX_HOURS"] == 8
    assert values["PASSWORD_HASH_METHOD"] == "scrypt:65536:8:1"
    monkeypatch.setenv("SURVEY_APP_PASSWORD_HASH_METHOD", "md5")
    with pytest.raises(ValueError, match="SURVEY_APP_PASSWORD_HASH_METHOD"):
        load_settings()


def test_a_foreign_host_is_refused_when_hosts_are_set(tmp_path: Path) -> None:
    app = create_app(
        {
            "DATABASE": str(tmp_path / "s.db"),
            "SECRET_KEY": "k",
            "TRUSTED_HOSTS": ["survey.example.org"],
        }
    )
    client = app.test_client()
    assert client.get("/", headers={"Host": "survey.example.org"}).status_code == 200
    for path in ("/", "/research", "/login"):
        response = client.get(path, headers={"Host": "evil.example"})
        assert response.status_code == 400, path
        assert "evil.example" not in response.get_data(as_text=True)
        assert "Location" not in response.headers


@pytest.mark.parametrize("trusted_hosts", [None, ["evil.example"]])
def test_redirects_never_name_the_request_host(tmp_path: Path, trusted_hosts) -> None:
    """Werkzeug's slash redirect (/research to /research/) was built from the Host header:
    a forged Host came back as a link to another site."""
    app = create_app(
        {"DATABASE": str(tmp_path / "s.db"), "SECRET_KEY": "k", "TRUSTED_HOSTS": trusted_hosts}
    )
    client = app.test_client()
    for path in ("/research", "/research/", "/research/surveys/x"):
        response = client.get(path, headers={"Host": "evil.example"})
        assert 300 <= response.status_code < 400, path
        assert response.headers["Location"].startswith("/"), response.headers["Location"]
        assert "evil.example" not in response.headers["Location"]


@pytest.mark.parametrize(("preset", "expected"), [(None, "1"), ("3", "3")])
def test_blas_runs_one_thread_per_worker_unless_the_operator_says(preset, expected):
    """gunicorn imports the package before NumPy: BLAS must start single-threaded there
    (a fit at a million responses: 0.54 s against 3.75 s), yet an operator's value wins."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    code = "import os, survey_app; print(os.environ['OPENBLAS_NUM_THREADS'])"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == expected


def test_the_commands_link_to_the_development_address_when_base_url_is_empty():
    """No request tells a command the address in use: an empty BASE_URL (the default, under
    which the pages use the address being browsed) means ``survey-app run``'s address."""
    assert load_settings({})["BASE_URL"] == ""
    assert command_line_base("") == "http://127.0.0.1:5000"
    assert command_line_base("https://surveys.example.org/") == "https://surveys.example.org"
