"""A Flask app that collects survey answers under local differential privacy."""

# ruff: noqa: E402 (the thread settings below must come before any import of NumPy)

from __future__ import annotations

import os

# Before NumPy loads its BLAS: one thread per process. The app's matrices are small (a
# regression over a few thousand covariate patterns) and gunicorn already runs a worker per
# core, so BLAS threads only contend: a million-response fit took 3.75 s with the default
# threads and 0.54 s with one on a busy two-core server (benchmarks/REGRESSION.md). An
# operator's own setting wins.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import datetime
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Response, render_template, request
from flask.globals import request_ctx
from flask_wtf.csrf import CSRFProtect
from werkzeug.exceptions import HTTPException

from . import db, i18n, limits
from .config import check_database_folder, instance_secret_key, load_settings

try:
    __version__ = version("survey-app")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0+unknown"

PACKAGE_DIR = Path(__file__).resolve().parent

csrf = CSRFProtect()


def bundled_path(name: str) -> Path:
    """A bundled folder (templates, static, ...): in an installed wheel, else the checkout's."""
    inside = PACKAGE_DIR / name
    return inside if inside.is_dir() else PACKAGE_DIR.parent / name


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The application factory; ``config`` overrides defaults and the environment."""
    app = Flask(
        __name__,
        template_folder=str(bundled_path("templates")),
        static_folder=str(bundled_path("static")),
    )
    app.config.update(load_settings(config))
    if not app.config["DATABASE"]:
        # The default lives in the instance folder, which is ours to create.
        Path(app.instance_path).mkdir(mode=0o700, parents=True, exist_ok=True)
        app.config["DATABASE"] = str(Path(app.instance_path) / "survey.db")
    check_database_folder(app.config["DATABASE"])
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
    )

    db.init_app(app)
    i18n.init_app(app, str(bundled_path("translations")))
    csrf.init_app(app)
    limits.init_app(app)

    from .cli import register_commands
    from .health import bp as health_bp
    from .public import bp as public_bp
    from .research import auth_bp
    from .research import bp as research_bp
    from .research.analysis import bp as analysis_bp
    from .research.builder import bp as builder_bp
    from .research.publishing import bp as publishing_bp
    from .respond import bp as respond_bp
    from .security import add_security_headers

    app.register_blueprint(respond_bp)
    app.register_blueprint(health_bp)
    app.register_blueprint(auth_bp)
    app.register_blueprint(research_bp)
    app.register_blueprint(builder_bp)
    app.register_blueprint(publishing_bp)
    app.register_blueprint(public_bp)
    app.register_blueprint(analysis_bp)
    app.after_request(add_security_headers)
    app.after_request(_relative_redirect)
    app.register_error_handler(HTTPException, _render_http_error)
    register_commands(app)
    app.jinja_env.globals["app_version"] = __version__
    from .ledger import odds_text, survey_ledger

    app.jinja_env.globals.update(survey_ledger=survey_ledger, odds_text=odds_text)
    return app


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
