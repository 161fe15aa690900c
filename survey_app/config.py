"""Settings, declared once as data so the table in docs/operating.md and the code cannot
drift apart.

Precedence, lowest first: the defaults below, ``SURVEY_APP_<NAME>`` environment variables,
then the mapping passed to ``create_app`` (tests use that).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_PREFIX = "SURVEY_APP_"
#: A ``DATABASE`` setting starting so names a PostgreSQL database, not a SQLite file.
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


class SettingError(ValueError):
    """A setting the app cannot start with; the message names it and says why, in one line
    (the command line prints it as it is, instead of a traceback)."""


def _parse_switch(text: str) -> bool:
    value = text.strip().lower()
    if value in {"on", "true", "1", "yes"}:
        return True
    if value in {"off", "false", "0", "no"}:
        return False
    raise ValueError(f"expected on or off, got {text!r}")


def _parse_host_list(text: str) -> list[str] | None:
    hosts = [host.strip() for host in text.split(",") if host.strip()]
    return hosts or None


# OWASP Password Storage Cheat Sheet: scrypt with N = 2^17, r = 8, p = 1 (128 MiB, about
# 0.4 s per hash here). Werkzeug's own default is N = 2^15.
DEFAULT_PASSWORD_HASH_METHOD = "scrypt:131072:8:1"  # noqa: S105 (a method, not a password)
PASSWORD_HASH_PATTERN = re.compile(r"scrypt:\d+:\d+:\d+|pbkdf2:\w+:\d+")


def _parse_hash_method(text: str) -> str:
    if not PASSWORD_HASH_PATTERN.fullmatch(text.strip()):
        raise ValueError(f"expected scrypt:N:r:p or pbkdf2:HASH:ITERATIONS, got {text!r}")
    return text.strip()


@dataclass(frozen=True)
class Setting:
    """One configuration value: its name (without the prefix), default and meaning."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env_var(self) -> str:
        return ENV_PREFIX + self.name


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "DATABASE",
        None,
        "Path of the SQLite database file (its folder must exist), or the address of a "
        "PostgreSQL database (`postgresql://user@host/name`; the `postgres` extra). Default: "
        "`survey.db` in the instance folder "
        "(`instance/` in a clone installed with `pip install -e .`, "
        "`<venv>/var/survey_app-instance/` when installed with `pip install .`).",
    ),
    Setting(
        "SECRET_KEY",
        None,
        "Signs session cookies, CSRF and form tokens. Default: generated once and kept in "
        "the instance folder's `secret_key` (see DATABASE); set it when several machines "
        "serve the same database.",
    ),
    Setting(
        "MAX_CONTENT_LENGTH",
        64 * 1024,
        "Largest request body accepted, in bytes; larger requests are refused.",
        int,
    ),
    Setting(
        "RATE_LIMITS",
        True,
        "`off` turns every rate limit off (tests and benchmarks hammer the app from one address).",
        _parse_switch,
    ),
    Setting(
        "SUBMIT_RATE_LIMIT",
        "120 per minute",
        "Survey submissions accepted per address (a class behind one router shares one).",
    ),
    Setting(
        "LOGIN_RATE_LIMIT",
        "10 per minute",
        "Login attempts accepted per address, on top of the per-account slow-down.",
    ),
    Setting(
        "RATE_LIMIT_STORAGE",
        "memory://",
        "Where respondents' submission counters live: `memory://` counts per worker "
        "process; `redis://host:port` shares them between workers and machines. Never the "
        "database (privacy invariant 6); researchers' limits are always counted there.",
    ),
    Setting(
        "TRUSTED_PROXIES",
        0,
        "How many reverse proxies stand in front of the app; their X-Forwarded-For/-Proto "
        "headers are then believed (for rate limits and HTTPS detection).",
        int,
    ),
    Setting(
        "BASE_URL",
        "",
        "The app's public address (e.g. `https://surveys.example.org`). The research pages "
        "show survey addresses and make invitation links on it, with a warning when you "
        "browse on another; empty, they use the address you browse on. `survey-app invite` "
        "and `publish` write their links on it (on `http://127.0.0.1:5000` when empty).",
    ),
    Setting(
        "SESSION_COOKIE_SECURE",
        False,
        "Send the session cookie over HTTPS only (`on` behind HTTPS, as in production).",
        _parse_switch,
    ),
    Setting(
        "FORM_MAX_AGE_HOURS",
        24,
        "How long a survey form can be sent after it was shown, in hours; each form stores "
        "one response, and an expired one is shown again, empty, to answer anew.",
        int,
    ),
    Setting(
        "ANSWERED_RECORD_DAYS",
        30,
        "How many days a browser keeps the record that it answered an open survey (which "
        "refuses a second answer from it); the record is deleted sooner once the survey "
        "closes and the browser comes back.",
        int,
    ),
    Setting(
        "SESSION_IDLE_MINUTES",
        30,
        "A researcher's login ends after this many minutes without a request.",
        int,
    ),
    Setting(
        "SECTION_MAX_AGE_HOURS",
        2,
        "Without JavaScript, a sectioned survey's page may be sent this many hours after it "
        "was shown; after that the respondent starts again and nothing is stored.",
        int,
    ),
    Setting(
        "SESSION_MAX_HOURS",
        8,
        "A researcher's login ends this many hours after logging in, however active.",
        int,
    ),
    Setting(
        "TRUSTED_HOSTS",
        None,
        "Comma-separated host names the app answers to (`.example.org` also matches its "
        "subdomains); a request for any other Host gets 400. Default: any host.",
        _parse_host_list,
    ),
    Setting(
        "PASSWORD_HASH_METHOD",
        DEFAULT_PASSWORD_HASH_METHOD,
        "How new passwords are hashed, in Werkzeug's notation (scrypt:N:r:p or "
        "pbkdf2:HASH:ITERATIONS); older hashes are re-hashed at the next login.",
        _parse_hash_method,
    ),
)


#: Where the commands' links point when ``BASE_URL`` is empty: ``survey-app run``'s address.
COMMAND_LINE_BASE_URL = "http://127.0.0.1:5000"


def command_line_base(configured: str) -> str:
    """The base the command line builds links on (no request tells it the address in use):
    ``BASE_URL``, or the development server's address when it is empty."""
    return (configured or COMMAND_LINE_BASE_URL).rstrip("/")


def load_settings(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Resolve every setting from defaults, the environment, then explicit overrides."""
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        values[setting.name] = setting.default
        raw = os.environ.get(setting.env_var)
        if raw is not None:
            try:
                values[setting.name] = setting.parse(raw)
            except ValueError as err:
                raise SettingError(f"{setting.env_var}: {err}") from err
    values.update(overrides or {})
    return values


def check_database_folder(path: str | Path) -> None:
    """Refuse a database path whose folder does not exist.

    A mistyped ``SURVEY_APP_DATABASE`` would otherwise create a new, empty database in a
    new folder, and the app would run on it as if the survey data had vanished. A
    PostgreSQL address has no folder: its server is checked when it is first opened.
    """
    if str(path).startswith(POSTGRESQL_SCHEMES):
        return
    folder = Path(path).parent
    if not folder.is_dir():
        raise SettingError(
            f"{ENV_PREFIX}DATABASE: the folder {str(folder)!r} does not exist; create it "
            "first or correct the path"
        )


def instance_secret_key(instance_path: str | Path) -> str:
    """The instance's secret key, generated on first use and kept readable by us only.

    Written to a temporary file and hard-linked into place, so two workers starting at
    once agree on one key instead of one overwriting the other's.
    """
    path = Path(instance_path) / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".secret_key.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
    return path.read_text().strip()
