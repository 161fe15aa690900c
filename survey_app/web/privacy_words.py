"""The privacy library's words in the page's language.

Mechanisms describe themselves in ``survey_app.privacy.words.Text`` markers (the privacy
package may not import Flask); the ledger, the thank-you page and the researcher's pages
show them. ``init_app`` makes every marker speak through Flask-Babel: the request's
language and its locale's numbers, English outside a request, as every other word of the
app.
"""

from __future__ import annotations

from collections.abc import Mapping

from flask import Flask

from survey_app.privacy.words import speak_with
from survey_app.web import i18n


class PageWording:
    """``privacy.words.Wording`` through the app's Flask-Babel catalogs and locale."""

    def gettext(self, msgid: str, arguments: Mapping[str, object]) -> str:
        return i18n.gettext(msgid, **arguments)

    def ngettext(
        self, singular: str, plural: str, num: int, arguments: Mapping[str, object]
    ) -> str:
        return i18n.ngettext(singular, plural, num, **arguments)

    def format_decimal(self, number: float, pattern: str) -> str:
        return i18n.format_decimal(number, format=pattern)

    def format_percent(self, number: float, pattern: str) -> str:
        return i18n.format_percent(number, format=pattern)


def init_app(app: Flask) -> None:
    """Put the privacy library's words through the app's catalogs. The library has one
    wording for the whole process, so this holds for every app made in it."""
    speak_with(PageWording())
