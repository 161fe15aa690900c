"""The respondent's "answered" record: that this browser answered an open survey.

Privacy invariant 4: a browser answers an open survey once. On a shared computer that
record is also a trace of having taken part, so it says as little as it can, for as short
a time as it can:

- One cookie per survey, named ``answered-`` and a keyed hash of the survey's slug
  (HMAC-SHA256 under the app's secret key). Whoever reads the cookie jar learns that this
  browser answered some surveys on this site, not which: without the key a guessed slug
  cannot be checked against a name.
- Its value is a signature of its name (so a record is the server's, not a made-up one),
  and holds no time: the cookie expires ``ANSWERED_RECORD_DAYS`` after the day it was set,
  at midnight UTC, so even its expiry tells the day, never the time of day.
- When the browser comes back to a respondent page, every record naming no survey that is
  open for answers (closed, back to draft, deleted, or signed with a retired key) is
  deleted.

It is apart from the Flask session that carries a researcher's login: answering a survey
does not change how long a login lasts, and logging in or out does not forget what a
browser answered. Records of earlier versions (a signed list of slugs in a cookie named
``answered``, or in the session) still count, and are rewritten in the new form.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
from collections.abc import Iterable
from typing import Any

from flask import after_this_request, current_app, g, request
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import BadSignature, Signer, URLSafeTimedSerializer
from werkzeug.wrappers import Response

from survey_app.web.signing_keys import signing_keys

PREFIX = "answered-"
LEGACY_COOKIE = "answered"  # one signed list of every slug answered, kept a year
LEGACY_SESSION_KEY = "answered"  # before that, the same list inside the Flask session


def _name(slug: str, key: bytes) -> str:
    digest = hmac.new(key, b"answered survey " + slug.encode(), hashlib.sha256).digest()
    return PREFIX + base64.urlsafe_b64encode(digest[:16]).decode("ascii").rstrip("=")


def record_name(slug: str) -> str:
    """The cookie name of the record for ``slug`` under the current key."""
    return _name(slug, signing_keys()[-1])


def _signer() -> Signer:
    return Signer(signing_keys(), salt="answered-survey record", digest_method=hashlib.sha256)


def _is_valid(name: str) -> bool:
    value = request.cookies.get(name, "")
    return bool(value) and _signer().verify_signature(name.encode(), value.encode())


def has_answered(slug: str) -> bool:
    """Whether this browser holds a record of answering the survey ``slug``."""
    return any(_is_valid(_name(slug, key)) for key in signing_keys()) or slug in _legacy_slugs()


def mark_answered(slug: str) -> None:
    """Record, on this request's response, that this browser answered the survey ``slug``."""
    _pending()["set"].add(slug)


def holds_records() -> bool:
    """Whether this request carries any record, of this version or an earlier one."""
    return any(name.startswith(PREFIX) for name in request.cookies) or bool(
        LEGACY_COOKIE in request.cookies or _legacy_slugs()
    )


def forget_finished_surveys(open_slugs: Iterable[str]) -> None:
    """Delete the records of surveys no longer open; rewrite earlier versions' records.

    ``open_slugs`` are the surveys answered once per browser that still take answers.
    """
    present = [name for name in request.cookies if name.startswith(PREFIX)]
    legacy = _legacy_slugs()
    still_open = set(open_slugs)
    kept = {_name(slug, key) for slug in still_open for key in signing_keys()}
    pending = _pending()
    pending["delete"].update(name for name in present if name not in kept or not _is_valid(name))
    pending["set"].update(
        slug for slug in legacy if slug in still_open and not _is_valid(record_name(slug))
    )
    if LEGACY_COOKIE in request.cookies:
        pending["delete"].add(LEGACY_COOKIE)


def _legacy_slugs() -> list[str]:
    """Slugs recorded by earlier versions, read whatever their age, so no browser can
    answer again because the app was upgraded."""
    if "answered_legacy" not in g:
        g.answered_legacy = [*_legacy_cookie_slugs(), *_legacy_session_slugs()]
    found: list[str] = g.answered_legacy
    return found


def _slug_list(value: Any) -> list[str]:
    if isinstance(value, list) and all(isinstance(slug, str) for slug in value):
        return value
    return []


def _legacy_cookie_slugs() -> list[str]:
    raw = request.cookies.get(LEGACY_COOKIE)
    if not raw:
        return []
    serializer = URLSafeTimedSerializer(signing_keys(), salt="answered-surveys")
    try:
        return _slug_list(serializer.loads(raw))
    except BadSignature:
        return []


def _legacy_session_slugs() -> list[str]:
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
    return _slug_list(data.get(LEGACY_SESSION_KEY)) if isinstance(data, dict) else []


def record_expiry(today: datetime.date, days: int) -> datetime.datetime:
    """Midnight UTC ``days`` days after ``today``'s end: the day shows, the time does not."""
    end = today + datetime.timedelta(days=days + 1)
    return datetime.datetime.combine(end, datetime.time(), tzinfo=datetime.UTC)


def _pending() -> dict[str, set[str]]:
    """This response's changes to the records, written once after the view."""
    if "answered_pending" not in g:
        g.answered_pending = {"set": set(), "delete": set()}
        after_this_request(_write_records)
    pending: dict[str, set[str]] = g.answered_pending
    return pending


def _write_records(response: Response) -> Response:
    pending = g.answered_pending
    secure = bool(current_app.config["SESSION_COOKIE_SECURE"])
    days = int(current_app.config["ANSWERED_RECORD_DAYS"])
    expires = record_expiry(datetime.datetime.now(datetime.UTC).date(), days)
    names = sorted(record_name(slug) for slug in pending["set"])
    for name in pending["delete"] - set(names):
        response.delete_cookie(name, path="/", secure=secure, httponly=True, samesite="Lax")
    signer = _signer()
    for name in names:
        value = signer.get_signature(name.encode()).decode("ascii")
        response.set_cookie(
            name, value, expires=expires, path="/", secure=secure, httponly=True, samesite="Lax"
        )
    return response
