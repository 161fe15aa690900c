"""Login and logout, setting a password from a link, and the guard that keeps everything
under /research/ for researchers.

The session cookie holds a random token, the database the session it stands for
(accounts.py): logging out deletes that, so the cookie is worthless wherever it was copied.
A browser that logged in once also keeps a device cookie, which gives it a guessing count
of its own: others' wrong passwords cannot lock the owner out of it.

``/set-password/<token>`` is opened by someone not logged in (a new colleague, or one whose
password was reset), so it lives here, outside the guard. The token is the only key to the
account until it is used: the app writes it to no log, the page is never cached and sends
no Referer (security_headers.py), and a link that is used, expired or unknown gets the same
page, so nothing tells which.
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
from survey_app.storage.accounts import (
    AccountError,
    LoginThrottled,
    Researcher,
    SessionLimits,
    authenticate,
)
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.i18n import ngettext
from survey_app.web.limits import limit_logins, limit_password_links
from survey_app.web.research.forms import LoginForm
from survey_app.web.research.people_forms import NewPasswordForm, refusal

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


def throttled(err: LoginThrottled) -> str:
    """Too many wrong passwords, in words: at login, and for the current password when a
    researcher changes theirs."""
    return ngettext(
        "Too many failed logins. Try again in %(num)d second.",
        "Too many failed logins. Try again in %(num)d seconds.",
        err.retry_after,
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
            error, status = throttled(err), 429
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


def new_password_error(form: NewPasswordForm) -> str | None:
    """What is wrong with a submitted new-password form before the rules are asked, or
    None; a form not submitted is not wrong."""
    if request.method != "POST":
        return None
    if not form.validate_on_submit():
        return _("Please fill in every field.")
    if not form.typed_twice_alike():
        return _("The two new passwords differ: type the same one twice.")
    return None


@bp.route("/set-password/<token>", methods=["GET", "POST"])
@limit_password_links
def set_password(token: str) -> Response | tuple[str, int]:
    """Set the password of the account the link was made for, then log in with it.

    The link is used up, and every session of the account ends: whoever had it before a
    reset is out. A link that is not live gets 410, the same page whatever the reason.
    """
    db = get_db()
    researcher = accounts.password_link_account(db, token, accounts.current_time())
    if researcher is None:
        return render_template("research/set_password.html", form=None), 410
    form = NewPasswordForm()
    error = new_password_error(form)
    if request.method == "POST" and error is None:
        try:
            done = accounts.set_password_with_link(
                db, token, form.password.data, accounts.current_time()
            )
        except AccountError as err:
            error = refusal(err)
        else:
            if done is None:  # used meanwhile, in another tab
                return render_template("research/set_password.html", form=None), 410
            return redirect(url_for("auth.login"))
    page = render_template(
        "research/set_password.html",
        form=form,
        researcher=researcher,
        error=error,
        min_length=accounts.MIN_PASSWORD_LENGTH,
    )
    return page, 400 if error else 200
