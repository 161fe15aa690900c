"""The page language: English, Korean or Simplified Chinese, chosen per request.

The language comes from the URL's ``lang`` query parameter when there is one, else from
the browser's ``Accept-Language`` header. It is never kept in a cookie: a cookie naming a
survey site's language would be one more trace, on a shared computer, of having taken
part. Instead every URL the app builds while serving a request carries the request's
``lang`` on, so a choice made with the switcher lasts for the visit and no longer.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, g, has_request_context, request
from flask_babel import Babel

LANGUAGES = ("en", "ko", "zh")
DEFAULT_LANGUAGE = "en"
# Each language named in itself, as a reader of that language looks for it in a switcher.
LANGUAGE_NAMES = {"en": "English", "ko": "한국어", "zh": "简体中文"}
# The HTML ``lang`` value: "zh" alone does not say which script the page is written in.
HTML_LANG = {"en": "en", "ko": "ko", "zh": "zh-Hans"}


def url_language() -> str | None:
    """The language the URL asks for, if it names one of ours."""
    asked = request.args.get("lang")
    return asked if asked in LANGUAGES else None


def select_locale() -> str:
    """The URL's choice, else the browser's preference, else English."""
    if not has_request_context():  # a command run from the terminal
        return DEFAULT_LANGUAGE
    return url_language() or request.accept_languages.best_match(LANGUAGES) or DEFAULT_LANGUAGE


def _carry_language(endpoint: str, values: dict[str, Any]) -> None:
    """Keep the URL's language on every link and form action built for this request."""
    if endpoint == "static" or "lang" in values:
        return
    chosen = g.get("url_language")
    if chosen:
        values["lang"] = chosen


def _remember_url_language() -> None:
    g.url_language = url_language()


def init_app(app: Flask, translations_dir: str) -> None:
    Babel(app, locale_selector=select_locale, default_translation_directories=translations_dir)
    app.before_request(_remember_url_language)
    app.url_defaults(_carry_language)
    app.jinja_env.globals.update(
        LANGUAGES=LANGUAGES, LANGUAGE_NAMES=LANGUAGE_NAMES, HTML_LANG=HTML_LANG
    )
