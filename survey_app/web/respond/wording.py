"""Respondent-facing words that depend on the request's language, for the templates.

Every sentence here is whole, with named placeholders, so a translator can reorder it;
numbers and dates go through the locale's own formats.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from babel.lists import format_list
from flask_babel import get_locale, lazy_gettext
from werkzeug.exceptions import default_exceptions
from werkzeug.http import HTTP_STATUS_CODES

from survey_app.domain.answers import fixed_width_number
from survey_app.storage.surveys import Question
from survey_app.web.i18n import current_language, format_date
from survey_app.web.i18n import gettext as _


@dataclass(frozen=True)
class Wording:
    title: str
    message: str


# Why a survey cannot be answered, by reason: a title and one message. (A draft has no
# reason here: its address answers as one where no survey exists.)
UNAVAILABLE = {
    "closed": (
        lazy_gettext("Survey closed"),
        lazy_gettext("This survey is closed and no longer accepts answers. Nothing was stored."),
    ),
    "invitation": (
        lazy_gettext("Invitation needed"),
        lazy_gettext(
            "This survey can only be answered through a personal invitation link, and this "
            "link is missing, not valid, or has already been used. Nothing was stored."
        ),
    ),
}

# HTTP errors the app's error handler renders with Werkzeug's English name and
# description: their wording in the page's language.
HTTP_ERRORS = {
    400: (lazy_gettext("Bad request"), lazy_gettext("The request could not be understood.")),
    403: (lazy_gettext("Not allowed"), lazy_gettext("You may not open this page.")),
    404: (
        lazy_gettext("Page not found"),
        lazy_gettext("There is no page at this address. Please check the link."),
    ),
    405: (
        lazy_gettext("Not allowed"),
        lazy_gettext("This page cannot be used that way. Please open it from a link."),
    ),
    413: (
        lazy_gettext("Request refused"),
        lazy_gettext("What was sent was far larger than any answer; nothing was stored."),
    ),
    429: (
        lazy_gettext("Too many requests"),
        lazy_gettext("Too many requests came from your network. Please wait a minute."),
    ),
    500: (
        lazy_gettext("Something went wrong"),
        lazy_gettext("The server failed to answer. Nothing was stored. Please try later."),
    ),
}
_STANDARD = {HTTP_STATUS_CODES[code]: cls for code, cls in default_exceptions.items()}


def error_wording(title: str, message: str) -> Wording:
    """The error page's title and message in the page's language.

    The app's handler passes Werkzeug's English name and description; a description
    given by the code that refused (already translated) is kept.
    """
    standard = _STANDARD.get(title)
    if standard is None or standard.code not in HTTP_ERRORS:
        return Wording(title, message)
    our_title, our_message = HTTP_ERRORS[standard.code]
    keep = message and message != standard.description
    return Wording(str(our_title), message if keep else str(our_message))


def typing_examples(question: Question) -> str:
    """How to type a number at its fixed width, as examples ("0007 for 7, -020 for -20")."""
    assert question.min is not None and question.max is not None
    numbers = [question.min] + ([question.max] if question.min < 0 <= question.max else [])
    examples = [
        _("%(typed)s for %(number)s", typed=fixed_width_number(question, n), number=n)
        for n in numbers
    ]
    return format_list(examples, locale=get_locale() or current_language())


def stored_day(iso_day: str) -> str:
    """A stored response's day, as the page's locale writes a date."""
    return format_date(datetime.date.fromisoformat(iso_day), format="long")
