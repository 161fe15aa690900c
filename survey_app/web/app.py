"""The application factory: settings, extensions, blueprints and error pages."""

from __future__ import annotations

import datetime
import itertools
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Response, abort, current_app, render_template, request
from flask.globals import request_ctx
from flask_wtf.csrf import CSRFProtect
from werkzeug.exceptions import HTTPException

from survey_app import PACKAGE_DIR
from survey_app.config import check_database_folder, instance_secret_key, load_settings
from survey_app.storage.backends import connect, migrate
from survey_app.storage.destruction import destroy_expired
from survey_app.storage.postgresql import DatabaseUnavailableError
from survey_app.web import database_session as db
from survey_app.web import i18n, limits
from survey_app.web.i18n import gettext as _
from survey_app.web.respondent_query import RespondentQuery

csrf = CSRFProtect()


def create_app(config: Mapping[str, Any] | None = None, *, retention_check: bool = True) -> Flask:
    """The application factory; ``config`` overrides defaults and the environment.

    ``retention_check``: migrate the database and destroy the answers of every survey past
    its retention date before serving (``_destroy_expired_answers``). The command line's
    app leaves it to its commands.
    """
    app = Flask("survey_app")
    app.config.update(load_settings(config))
    if not app.config["DATABASE"]:
        # The default lives in the instance folder, which is ours to create.
        Path(app.instance_path).mkdir(mode=0o700, parents=True, exist_ok=True)
        app.config["DATABASE"] = str(Path(app.instance_path) / "survey.db")
    check_database_folder(app.config["DATABASE"])
    if retention_check and not _destroy_expired_answers(app.config["DATABASE"]):
        app.before_request(_retention_check_once_the_database_answers)
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = instance_secret_key(app.instance_path)
    # A respondent may take a while over a survey; the token still dies with the session.
    csrf_time_limit = 24 * 3600
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # The Flask session carries CSRF tokens and a researcher's session token, never a
        # respondent's "answered" record (a cookie of its own, see answered.py), and is a
        # browser-session cookie. Its signature is refused past the longer of the two
        # lifetimes; the login itself is checked against the database (accounts.py).
        PERMANENT_SESSION_LIFETIME=datetime.timedelta(
            seconds=max(csrf_time_limit, int(app.config["SESSION_MAX_HOURS"]) * 3600)
        ),
        WTF_CSRF_TIME_LIMIT=csrf_time_limit,
        # Over HTTPS Flask-WTF would also demand a same-origin Referer, which no browser
        # sends here: every page asks for none (security_headers; a survey's address may
        # carry a panel's participant id), and a POST's Origin is then "null" too. The
        # token, bound to the Lax session cookie, is the check.
        WTF_CSRF_SSL_STRICT=False,
    )

    db.init_app(app)
    i18n.init_app(app, str(PACKAGE_DIR / "translations"))
    csrf.init_app(app)
    limits.init_app(app)
    # Outermost, so a panel's participant id is gone before anything else sees the request.
    app.wsgi_app = RespondentQuery(app.wsgi_app)  # type: ignore[method-assign]

    from survey_app.cli.commands import register_commands
    from survey_app.web import templates
    from survey_app.web.health import bp as health_bp
    from survey_app.web.public_page import bp as public_bp
    from survey_app.web.research import auth_bp
    from survey_app.web.research import bp as research_bp
    from survey_app.web.respond import bp as respond_bp
    from survey_app.web.security_headers import add_security_headers

    app.register_blueprint(respond_bp)
    app.register_blueprint(health_bp)
    app.register_blueprint(auth_bp)
    app.register_blueprint(research_bp)
    app.register_blueprint(public_bp)
    app.before_request(_refuse_nul_characters)
    app.after_request(add_security_headers)
    app.after_request(_relative_redirect)
    app.register_error_handler(HTTPException, _render_http_error)
    app.register_error_handler(DatabaseUnavailableError, _database_unavailable)
    register_commands(app)
    templates.init_app(app)
    return app


RETRY_AFTER_SECONDS = 5


def _destroy_expired_answers(path: str) -> bool:
    """Destroy what is past its retention date before the first request, so a server
    restarted after the date never shows it (cron's ``survey-app destroy-expired`` covers
    a server that runs for days).

    Every gunicorn worker runs this as it starts: migrating and each destruction are write
    transactions that re-check under the lock, so the workers together do each once. On a
    connection of its own, closed after: no connection made here outlives the start (a
    forked worker must not inherit one).

    A database that does not answer (PostgreSQL restarting) must not make the server
    crash-loop: it logs one line and returns False, and the server answers 503 until the
    database is back, doing this check before its first request then.
    """
    try:
        db = connect(path)
    except DatabaseUnavailableError as err:
        logging.getLogger(__name__).error("%s; answering 503 until it is back", err)
        return False
    try:
        migrate(db)
        destroy_expired(db)
    finally:
        db.conn.close()
    return True


_retention_checked: set[str] = set()


def _retention_check_once_the_database_answers() -> None:
    """The start's retention check, for a server that started without its database: run
    before this process's first request that finds the database (until then each request
    raises ``DatabaseUnavailableError``, a 503)."""
    setting = current_app.config["DATABASE"]
    if setting not in _retention_checked:
        destroy_expired(db.get_db())
        _retention_checked.add(setting)


def _refuse_nul_characters() -> None:
    """A NUL character in a query or form field is refused (400) before any route reads
    it: PostgreSQL cannot store one in text where SQLite can, and the app must answer
    alike on both. No form here has a use for one. A request no route takes is left to
    its 404 or 405: reading its form first would answer a too-large one with 400."""
    if request.routing_exception is not None:
        return
    fields = request.args.items(multi=True)
    if request.method == "POST":
        fields = itertools.chain(fields, request.form.items(multi=True))
    if any("\x00" in name or "\x00" in value for name, value in fields):
        abort(400)


def _relative_redirect(response: Response) -> Response:
    """Never send the request's Host header back in a redirect.

    Werkzeug's own redirects (``/research`` to ``/research/``) are absolute URLs built
    from the Host header, so a forged Host would come back as a link to another site
    (cache poisoning, phishing). A redirect to this request's own host drops the host.
    ``SURVEY_APP_TRUSTED_HOSTS`` refuses foreign Host headers outright (400).
    """
    location = response.headers.get("Location")
    if location and response.status_code in range(300, 400):
        parts = urlsplit(location)
        if parts.netloc and parts.netloc == request.host:
            response.headers["Location"] = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    return response


def _render_http_error(error: HTTPException) -> tuple[str, int]:
    """Plain pages for 404s and friends; never the request's data.

    A request Werkzeug could not even route (a malformed Host header) has no URL adapter,
    so the page template, which builds URLs, cannot render: it gets plain text instead.
    """
    if request_ctx.url_adapter is None:
        return f"{error.code} {error.name}", error.code or 400
    page = render_template("error.html", title=error.name, message=error.description)
    return page, error.code or 500


def _database_unavailable(_error: DatabaseUnavailableError) -> tuple[str, int, dict[str, str]]:
    """The database went away mid-request (PostgreSQL restarting, the network): 503 and
    a hint to retry, never a traceback. Nothing is half-stored (the server rolled back
    what was not committed), and the next request opens a new connection, so service
    comes back with the database, without a restart."""
    page = render_template(
        "error.html",
        title=_("Temporarily unavailable"),
        message=_("The server cannot reach its database just now. Please try again in a minute."),
        nothing_stored=True,
    )
    return page, 503, {"Retry-After": str(RETRY_AFTER_SECONDS)}
