"""A panel's participant id appended to a survey's address is never echoed: not in a
link, a form, a redirect or an error page, and not in the request line the server's
access log is written from. (The whole path, browser and gunicorn, is
tests/browser/test_panels.py.)"""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from survey_app.web.i18n import language_links
from survey_app.web.respondent_query import RespondentQuery, kept_query
from tests.support.examples import MIXED_SLUG, SLUG

MARKER = "PIDmarker5f3a9c"
# What gunicorn's access log writes the request line and query from.
LOGGED_KEYS = ("QUERY_STRING", "RAW_URI", "REQUEST_URI")
PANEL = f"PROLIFIC_PID={MARKER}&STUDY_ID=S{MARKER}&SESSION_ID=X{MARKER}&workerId=W{MARKER}"


def seen_environs(app: Flask) -> list[dict[str, str]]:
    """Each request's WSGI environ as the server holds it once the app has answered."""
    environs: list[dict[str, str]] = []
    inner = app.wsgi_app

    def recording(environ: dict[str, str], start_response: object) -> object:
        environs.append(environ)
        return inner(environ, start_response)  # type: ignore[arg-type]

    app.wsgi_app = recording  # type: ignore[assignment,method-assign]
    return environs


def test_only_the_apps_own_arguments_are_kept_each_as_sent() -> None:
    query = f"{PANEL}&lang=ko&agree=yes&invitation=a%2Db&l%61ng=zh&PROLIFIC_PID"
    assert kept_query(query) == "lang=ko&agree=yes&invitation=a%2Db&l%61ng=zh"
    assert kept_query(PANEL) == ""


def test_the_language_switcher_offers_no_foreign_argument(app: Flask) -> None:
    """Called without the door's filter, as if a panel's id had reached the view."""
    with app.test_request_context(f"/s/{SLUG}?{PANEL}&agree=yes&lang=ko"):
        links = dict(language_links())
    assert links == {code: f"/s/{SLUG}?agree=yes&lang={code}" for code in ("en", "ko", "zh")}


def test_research_pages_keep_their_arguments_in_the_switcher(app: Flask) -> None:
    with app.test_request_context("/research/surveys/x/groups?question=a&by=b"):
        links = dict(language_links())
    assert links["ko"] == "/research/surveys/x/groups?question=a&by=b&lang=ko"


def test_respondent_pages_never_echo_a_panel_id(mixed_app: Flask, client: FlaskClient) -> None:
    environs = seen_environs(mixed_app)
    pages = [
        f"/?{PANEL}",
        f"/s/{SLUG}?{PANEL}",
        f"/s/{SLUG}?{PANEL}&lang=ko",
        f"/s/{MIXED_SLUG}?{PANEL}",  # the consent step and its "I agree" form
        f"/s/{MIXED_SLUG}?{PANEL}&agree=yes&lang=zh",
        f"/s/no-such-survey?{PANEL}",  # an error page
    ]
    for address in pages:
        response = client.get(address)
        assert response.status_code in (200, 404)
        assert MARKER not in response.get_data(as_text=True), address
        assert not any(MARKER in value for _name, value in response.headers), address
        logged = [environs[-1].get(key, "") for key in LOGGED_KEYS]
        assert not any(MARKER in value for value in logged), address


def test_the_access_log_request_line_has_no_query(app: Flask) -> None:
    """What gunicorn logs (``%(r)s``, ``%(q)s``) is read from the environ after the
    response: a respondent page leaves no query there, not even its own arguments."""
    seen: dict[str, str] = {}

    def view(environ: dict, start_response: object) -> list[bytes]:
        seen["query"] = environ["QUERY_STRING"]
        return [b""]

    environ = {
        "PATH_INFO": f"/s/{SLUG}",
        "QUERY_STRING": f"{PANEL}&invitation=tok",
        "RAW_URI": f"/s/{SLUG}?{PANEL}&invitation=tok",
        "REQUEST_URI": f"/s/{SLUG}?{PANEL}&invitation=tok",
    }
    RespondentQuery(view)(environ, lambda *args: None)  # type: ignore[arg-type]
    assert seen["query"] == "invitation=tok"
    assert environ == {
        "PATH_INFO": f"/s/{SLUG}",
        "QUERY_STRING": "",
        "RAW_URI": f"/s/{SLUG}",
        "REQUEST_URI": f"/s/{SLUG}",
    }


def test_other_paths_keep_their_query(app: Flask) -> None:
    environ = {"PATH_INFO": "/research/x", "QUERY_STRING": "a=1", "RAW_URI": "/research/x?a=1"}
    RespondentQuery(lambda environ, start: [b""])(environ, lambda *args: None)  # type: ignore[arg-type]
    assert environ["RAW_URI"] == "/research/x?a=1"
