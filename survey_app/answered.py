"""The respondent's "answered" record: which open surveys this browser has answered.

Privacy invariant 4: a browser answers an open survey once. The record says *that* it
answered a survey (its slug), never *what*. It is a signed cookie of its own, apart from
the Flask session that carries a researcher's login: answering a survey does not change
how long a login lasts, and logging in or out does not forget what a browser answered.
"""

from __future__ import annotations

import datetime
from typing import Any

from flask import after_this_request, current_app, g, request
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response

COOKIE_NAME = "answered"
LIFETIME = datetime.timedelta(days=365)
LEGACY_SESSION_KEY = "answered"  # where the record lived before, inside the Flask session


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key or "", salt="answered-surveys")


def _slugs(value: Any) -> list[str]:
    if isinstance(value, list) and all(isinstance(slug, str) for slug in value):
        return value
    return []


def _legacy_slugs() -> list[str]:
    """A record kept inside the Flask session cookie by earlier versions (a year-long
    cookie then), read whatever the session's age, so no browser can answer again
    because the app was upgraded. It moves into the record's own cookie."""
    raw = request.cookies.get(current_app.config["SESSION_COOKIE_NAME"])
    interface = current_app.session_interface
    if not raw or not isinstance(interface, SecureCookieSessionInterface):
        return []
    serializer = interface.get_signing_serializer(current_app)
    if serializer is None:
        return []
    try:
        data = serializer.loads(raw)
    except BadSignature:
        return []
    return _slugs(data.get(LEGACY_SESSION_KEY)) if isinstance(data, dict) else []


def answered_slugs() -> list[str]:
    """The slugs of the open surveys this browser has answered."""
    if "answered_slugs" not in g:
        slugs: list[str] = []
        raw = request.cookies.get(COOKIE_NAME)
        if raw:
            try:
                slugs = _slugs(_serializer().loads(raw, max_age=int(LIFETIME.total_seconds())))
            except BadSignature:
                slugs = []
        legacy = [slug for slug in _legacy_slugs() if slug not in slugs]
        g.answered_slugs = [*slugs, *legacy]
        if legacy:
            _store_on_response()
    found: list[str] = g.answered_slugs
    return found


def has_answered(slug: str) -> bool:
    return slug in answered_slugs()


def mark_answered(slug: str) -> None:
    """Record that this browser answered the survey ``slug``, on this request's response."""
    if not has_answered(slug):
        g.answered_slugs = [*answered_slugs(), slug]
        _store_on_response()


def _store_on_response() -> None:
    if g.get("answered_store_pending"):
        return
    g.answered_store_pending = True

    @after_this_request
    def set_cookie(response: Response) -> Response:
        response.set_cookie(
            COOKIE_NAME,
            _serializer().dumps(g.answered_slugs),
            max_age=int(LIFETIME.total_seconds()),
            path="/",
            secure=bool(current_app.config["SESSION_COOKIE_SECURE"]),
            httponly=True,
            samesite="Lax",
        )
        return response
