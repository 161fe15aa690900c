"""A respondent page's query string: the app's own arguments in, nothing else, and none
of it in the server's access log.

Panels append their participant's id to the survey's address
(``/s/slug?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``, MTurk's ``workerId``, ...).
That id names a person; kept next to a response it would undo the anonymity the
randomizing is for. So it is dropped at the door, before Flask sees the request: a
respondent page's view, its language links, its forms and redirects, its error pages and
the app's own logging only ever meet ``RESPONDENT_ARGUMENTS``.

Gunicorn's access log (off unless ``--access-logfile`` is given) writes the request line
from the same WSGI environ once the response is sent, so the query is then taken out of
it altogether: a respondent page is logged by its path only, without the invitation
token, which names an invitee just as the panel's id names a participant.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

#: The query arguments respondent pages define: the page's language, the consent step's
#: agreement, an invitation's token.
RESPONDENT_ARGUMENTS = frozenset({"lang", "agree", "invitation"})
#: Where respondents land from a link: each survey's address (and the list of surveys, "/").
RESPONDENT_PREFIXES = ("/s/",)
# The request line as sent, as gunicorn (RAW_URI) and Werkzeug (REQUEST_URI) record it.
_REQUEST_LINE_KEYS = ("RAW_URI", "REQUEST_URI")


def is_respondent_path(path: str) -> bool:
    """Whether ``path`` is a respondent page's, whose query is the app's alone."""
    return path == "/" or path.startswith(RESPONDENT_PREFIXES)


def kept_query(query: str) -> str:
    """``query`` with only ``RESPONDENT_ARGUMENTS``, each part exactly as it was sent."""
    return "&".join(part for part in query.split("&") if _name(part) in RESPONDENT_ARGUMENTS)


def _name(part: str) -> str:
    return unquote_plus(part.partition("=")[0])


class RespondentQuery:
    """WSGI middleware: a respondent page's request reaches the app with ``kept_query``
    only, and leaves no query in the environ that the access log is written from."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[Any]:
        if not is_respondent_path(environ.get("PATH_INFO", "")):
            return self.app(environ, start_response)
        _set_query(environ, kept_query(environ.get("QUERY_STRING", "")))
        response = self.app(environ, start_response)
        # The view has read its arguments (respondent pages are never streamed).
        _set_query(environ, "")
        return response


def _set_query(environ: WSGIEnvironment, query: str) -> None:
    environ["QUERY_STRING"] = query
    for key in _REQUEST_LINE_KEYS:
        if key in environ:
            path = str(environ[key]).partition("?")[0]
            environ[key] = f"{path}?{query}" if query else path
