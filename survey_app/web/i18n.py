"""The page language: English, Korean or Simplified Chinese, chosen per request.

The language comes from the URL's ``lang`` query parameter when there is one, else from
the browser's ``Accept-Language`` header. It is never kept in a cookie: a cookie naming a
survey site's language would be one more trace, on a shared computer, of having taken
part. Instead every URL the app builds while serving a request carries the request's
``lang`` on, so a choice made with the switcher lasts for the visit and no longer.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import flask_babel
from flask import Flask, g, has_request_context, request
from flask_babel import Babel, get_locale

from survey_app.domain.languages import LANGUAGES
from survey_app.web.respondent_query import RESPONDENT_ARGUMENTS, is_respondent_path

DEFAULT_LANGUAGE = "en"
# Each language named in itself, as a reader of that language looks for it in a switcher.
LANGUAGE_NAMES = {"en": "English", "ko": "한국어", "zh": "简体中文"}
# The HTML ``lang`` value: "zh" alone does not say which script the page is written in.
HTML_LANG = {"en": "en", "ko": "ko", "zh": "zh-Hans"}


# Flask-Babel ships no type information; these typed doors to it keep mypy's checks on the
# words and numbers every page is built from.
def gettext(string: str, **variables: Any) -> str:
    """``string`` in the page's language, with ``%(name)s`` placeholders filled.

    Always a format string, as in the templates (Jinja's gettext): "%%" is a literal "%"
    even in a message without placeholders."""
    return str(flask_babel.gettext(string)) % variables


def ngettext(singular: str, plural: str, num: int, **variables: Any) -> str:
    """The singular or plural form for ``num`` (``%(num)d``) in the page's language."""
    return str(flask_babel.ngettext(singular, plural, num, **variables))


def format_decimal(number: float, format: str | None = None) -> str:
    """A number in the page's locale (grouping and decimal signs) with a CLDR pattern."""
    return str(flask_babel.format_decimal(number, format=format))


def format_percent(number: float, format: str | None = None) -> str:
    """A share as the page's locale writes a percentage."""
    return str(flask_babel.format_percent(number, format=format))


def format_date(day: datetime.date, format: str = "long") -> str:
    """A day as the page's locale writes a date."""
    return str(flask_babel.format_date(day, format=format))


def url_language() -> str | None:
    """The language the URL asks for, if it names one of ours."""
    asked = request.args.get("lang")
    return asked if asked in LANGUAGES else None


def select_locale() -> str:
    """The URL's choice, else the browser's preference, else English."""
    if not has_request_context():  # a command run from the terminal
        return DEFAULT_LANGUAGE
    return url_language() or request.accept_languages.best_match(LANGUAGES) or DEFAULT_LANGUAGE


def current_language() -> str:
    """The page's language code (``en``, ``ko`` or ``zh``)."""
    return str(get_locale() or DEFAULT_LANGUAGE)


def language_links(offered: Sequence[str] = LANGUAGES) -> list[tuple[str, str]]:
    """(language, address) for a switcher: this page in each offered language.

    The address is this page's path and query with ``lang`` set, so the choice lives in
    the URL only; on a respondent's page only the query's own arguments, never an id a
    panel appended. After a POST the page's own address is a GET of the same path (the
    survey form again), without the POST's data.
    """
    query = request.args.to_dict(flat=False) if request.method == "GET" else {}
    if is_respondent_path(request.path):  # never a panel's participant id
        query = {name: given for name, given in query.items() if name in RESPONDENT_ARGUMENTS}
    query.pop("lang", None)
    links = []
    for language in offered:
        if language in LANGUAGES:
            links.append(
                (language, f"{request.path}?{urlencode({**query, 'lang': language}, doseq=True)}")
            )
    return links


def _carry_language(endpoint: str, values: dict[str, Any]) -> None:
    """Keep the URL's language on every link and form action built for this request
    (not on a file's: a script or a stylesheet is the same in every language)."""
    if endpoint in ("static", "respond.script") or "lang" in values:
        return
    chosen = g.get("url_language")
    if chosen:
        values["lang"] = chosen


def _remember_url_language() -> None:
    g.url_language = url_language()


def init_app(app: Flask, translations_dir: str) -> None:
    """Choose each request's language, and carry the URL's choice on every link."""
    Babel(app, locale_selector=select_locale, default_translation_directories=translations_dir)
    app.before_request(_remember_url_language)
    app.url_defaults(_carry_language)
