"""Login and logout, and the guard that keeps everything under /research/ for researchers."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from flask import Blueprint, g, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from ..accounts import LoginThrottled, Researcher, authenticate, get_researcher
from ..db import get_db
from ..limits import limit_logins
from .forms import LoginForm

bp = Blueprint("auth", __name__)

SESSION_KEY = "researcher_id"


def current_researcher() -> Researcher | None:
    if "researcher" not in g:
        researcher_id = session.get(SESSION_KEY)
        g.researcher = get_researcher(get_db(), researcher_id) if researcher_id else None
    researcher: Researcher | None = g.researcher
    return researcher


def require_researcher() -> Response | None:
    """``before_request`` for the research blueprint: anonymous visitors go to /login."""
    if current_researcher() is None:
        return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
    return None


def safe_next(target: str | None) -> str:
    """Where to go after login: a path on this site only, never another host.

    ``//evil.example`` and ``/\\evil.example`` are read by browsers as other hosts, so
    only a single leading slash followed by a path character is accepted.
    """
    fallback = url_for("research.index")
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return fallback
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in target):
        return fallback
    return target


@bp.route("/login", methods=["GET", "POST"])
@limit_logins
def login() -> Response | tuple[str, int]:
    form = LoginForm()
    error, status = None, 200
    if form.validate_on_submit():
        try:
            researcher = authenticate(
                get_db(),
                form.username.data or "",
                form.password.data or "",
                address=request.remote_addr or "",
                now=time.time(),
            )
        except LoginThrottled as err:
            error, status = f"Too many failed logins: {err}.", 429
        else:
            if researcher is not None:
                session.clear()  # a fresh session on login: no fixation
                session[SESSION_KEY] = researcher.id
                return redirect(safe_next(request.args.get("next")))
            error, status = "Wrong username or password.", 401
    elif request.method == "POST":
        error, status = "Please give a username and password.", 400
    page = render_template("research/login.html", form=form, error=error)
    return page, status


@bp.route("/logout", methods=["GET", "POST"])
def logout() -> Response | str:
    """GET asks, POST (with its CSRF token) logs out: a link alone cannot log anyone out."""
    if request.method == "POST":
        session.clear()
        return redirect(url_for("auth.login"))
    return render_template("research/logout.html")
