"""The storage layer wired into the app: the app's database, its connection, its settings.

Storage keeps one connection per thread for a database path and knows nothing of Flask;
this module tells it which database the current app uses (``DATABASE``), leaves each
thread's connection clean when an app context ends, and hands accounts the app's
password hash method.
"""

from __future__ import annotations

from flask import Flask, current_app, has_app_context

from survey_app.config import DEFAULT_PASSWORD_HASH_METHOD
from survey_app.storage import accounts
from survey_app.storage.backends import Database, roll_back_unfinished, thread_connection


def get_db() -> Database:
    """This thread's connection to the current app's database (migrated on first use)."""
    return thread_connection(current_app.config["DATABASE"])


def _end_app_context(_error: BaseException | None = None) -> None:
    roll_back_unfinished()


def _app_hash_method() -> str:
    """The current app's ``PASSWORD_HASH_METHOD``; OWASP's default outside any app."""
    if has_app_context():
        return str(current_app.config.get("PASSWORD_HASH_METHOD") or DEFAULT_PASSWORD_HASH_METHOD)
    return DEFAULT_PASSWORD_HASH_METHOD


def init_app(app: Flask) -> None:
    app.teardown_appcontext(_end_app_context)
    accounts.read_hash_method_from(_app_hash_method)
