"""Login and logout, and the guard that keeps everything under /research/ for researchers.

The session cookie holds a random token, the database the session it stands for
(accounts.py): logging out deletes that, so the cookie is worthless wherever it was copied.
A browser that logged in once also keeps a device cookie, which gives it a guessing count
of its own: others' wrong passwords cannot lock the owner out of it.
"""

from __future__ import annotations

import datetime
import secrets
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    current_app,
    g,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response

from survey_app.storage import accounts
from survey_app.storage.accounts import LoginThrottled, Researcher, SessionLimits, authenticate
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.i18n import ngettext
from survey_app.web.limits import limit_logins
from survey_app.web.research.forms import LoginForm

bp = Blueprint("auth", __name__)

SESSION_KEY = "login"  # the session's token; only its hash is in the database
DEVICE_COOKIE = "login_device"
DEVICE_LIFETIME = datetime.timedelta(days=90)


def session_limits() -> SessionLimits:
    return SessionLimits(
        idle_seconds=int(current_app.config["SESSION_IDLE_MINUTES"]) * 60,
        max_seconds=int(current_app.config["SESSION_MAX_HOURS"]) * 3600,
    )


def current_researcher() -> Researcher | None:
    if "researcher" not in g:
        token = session.get(SESSION_KEY)
        researcher = None
        if isinstance(token, str):
            researcher = accounts.session_researcher(
                get_db(), token, accounts.current_time(), session_limits()
            )
            if researcher is None:
                session.pop(SESSION_KEY)  # ended, idle or too old: drop the dead token
        g.researcher = researcher
    found: Researcher | None = g.researcher
    return found


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
    fallback = url_for("research.dashboard.index")
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return fallback
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in target):
        return fallback
    return target


def _device_serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key or "", salt="login-device")


def _trusted_device(username: str) -> str | None:
    """This browser's device id, if it logged in to ``username`` before (signed by us)."""
    raw = request.cookies.get(DEVICE_COOKIE)
    if not raw:
        return None
    try:
        data = _device_serializer().loads(raw, max_age=int(DEVICE_LIFETIME.total_seconds()))
    except BadSignature:
        return None
    if not isinstance(data, dict) or data.get("user") != username.lower():
        return None
    device = data.get("device")
    return device if isinstance(device, str) else None


def _remember_device(response: Response, username: str, device: str | None) -> None:
    value = {"user": username.lower(), "device": device or secrets.token_urlsafe(16)}
    response.set_cookie(
        DEVICE_COOKIE,
        _device_serializer().dumps(value),
        max_age=int(DEVICE_LIFETIME.total_seconds()),
        path=url_for("auth.login"),
        secure=bool(current_app.config["SESSION_COOKIE_SECURE"]),
        httponly=True,
        samesite="Lax",
    )


@bp.route("/login", methods=["GET", "POST"])
@limit_logins
def login() -> Response | tuple[str, int]:
    form = LoginForm()
    error, status = None, 200
    if form.validate_on_submit():
        username = form.username.data or ""
        device = _trusted_device(username)
        db = get_db()
        try:
            researcher = authenticate(
                db,
                username,
                form.password.data or "",
                address=request.remote_addr or "",
                now=accounts.current_time(),
                trusted_device=device,
            )
        except LoginThrottled as err:
            error = ngettext(
                "Too many failed logins. Try again in %(num)d second.",
                "Too many failed logins. Try again in %(num)d seconds.",
                err.retry_after,
            )
            status = 429
        else:
            if researcher is not None:
                old_token = session.get(SESSION_KEY)
                if isinstance(old_token, str):
                    accounts.end_session(db, old_token)
                session.clear()  # a fresh session on login: no fixation
                session[SESSION_KEY] = accounts.start_session(
                    db, researcher, accounts.current_time(), session_limits()
                )
                response = make_response(redirect(safe_next(request.args.get("next"))))
                _remember_device(response, researcher.username, device)
                return response
            error, status = _("Wrong username or password."), 401
    elif request.method == "POST":
        error, status = _("Please give a username and password."), 400
    page = render_template("research/login.html", form=form, error=error)
    return page, status


@bp.route("/logout", methods=["GET", "POST"])
def logout() -> Response | str:
    """GET asks, POST (with its CSRF token) logs out: a link alone cannot log anyone out.

    The session is revoked in the database, not only forgotten by this browser.
    """
    if request.method == "POST":
        token = session.get(SESSION_KEY)
        if isinstance(token, str):
            accounts.end_session(get_db(), token)
        session.clear()
        return redirect(url_for("auth.login"))
    return render_template("research/logout.html")
