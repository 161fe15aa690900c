"""Where a respondent's answer ticket waits between starting and answering.

Starting from an invitation link spends the link for a one-time answer ticket
(``storage/invitations.py``). The form carries the ticket in its hidden ``invitation``
field, and the POST that stores the response reads it there. A GET needs it too: a reload,
or coming back to the page, must show the questions again though the link in the address
no longer works. So the ticket is also kept in a cookie, not in an address: an address is
kept in the history, bookmarked, shared and pasted; the cookie is HttpOnly, sent only to
the survey's own pages (its path is ``/s/<slug>``), and has no expiry, so it goes when the
browser closes and tells nothing of when it was set. It holds the ticket only, never an
answer, and is deleted once the response is stored.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import after_this_request, current_app, request, url_for
from werkzeug.wrappers import Response

COOKIE = "answer-ticket"


def kept_ticket() -> str | None:
    """The ticket this browser keeps for the survey whose page this is, if any."""
    return request.cookies.get(COOKIE)


def _path(slug: str) -> str:
    """The survey's address without a query (``url_for`` may add the page's language)."""
    return urlsplit(url_for("respond.survey_form", slug=slug)).path


def keep_ticket(response: Response, slug: str, ticket: str) -> None:
    """Give the browser the ticket on ``response``, for the survey's pages only."""
    secure = bool(current_app.config["SESSION_COOKIE_SECURE"])
    response.set_cookie(
        COOKIE, ticket, path=_path(slug), secure=secure, httponly=True, samesite="Lax"
    )


def forget_ticket(slug: str) -> None:
    """Delete the ticket's cookie on this request's response: a response used it."""
    path = _path(slug)
    secure = bool(current_app.config["SESSION_COOKIE_SECURE"])

    @after_this_request
    def delete(response: Response) -> Response:
        response.delete_cookie(COOKIE, path=path, secure=secure, httponly=True, samesite="Lax")
        return response
