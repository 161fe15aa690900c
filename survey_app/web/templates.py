"""Every name a template uses that its view does not pass: registered here, once.

Jinja's globals and filters belong to the whole app, whichever blueprint renders the
page, so they are declared in one place rather than by the blueprints that happen to use
them: a reader looking for where a template's name comes from finds it here, and no name
is registered twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import Flask

from survey_app import __version__
from survey_app.domain.answers import (
    fixed_width_number,
    fixed_width_pattern,
    listed_numbers,
    number_digits,
    option_value,
    report_alternatives,
)
from survey_app.domain.builder_fields import field_id
from survey_app.domain.languages import LANGUAGES
from survey_app.domain.question_privacy import (
    LedgerEntry,
    SurveyLedger,
    epsilon_text,
    ledger_entry,
    method_name,
    odds_text,
)
from survey_app.storage.surveys import Question, Survey
from survey_app.web import privacy_words
from survey_app.web.i18n import (
    HTML_LANG,
    LANGUAGE_NAMES,
    current_language,
    format_decimal,
    format_percent,
    language_links,
)
from survey_app.web.research.publishing import epsilon_shown
from survey_app.web.research.routes import MECHANISM_NAMES, METHOD_NAMES, STATUS_NAMES
from survey_app.web.respond.scripts import stylesheet_address
from survey_app.web.respond.tick_fields import option_name
from survey_app.web.respond.wording import error_wording, stored_day, typing_examples
from survey_app.web.survey_address import address_qr, differing_base, survey_address

#: Ledger entries kept across requests: a question's entry depends only on the question
#: (frozen and hashable: its words, mechanism and parameters) and the reader's language.
#: A 60-question page builds its ledger twice (the form and the protection summary).
LEDGER_ENTRIES_KEPT = 4096


@functools.lru_cache(maxsize=LEDGER_ENTRIES_KEPT)
def _kept_entry(question: Question, language: str) -> LedgerEntry:
    """``question``'s entry in ``language``, the current page's (part of the key)."""
    return ledger_entry(question)


def survey_ledger(survey: Survey) -> SurveyLedger:
    """The ledger of ``survey`` in the page's language, from entries kept across requests
    (``question_privacy.survey_ledger`` builds it afresh)."""
    language = current_language()
    return SurveyLedger(_kept_entry(question, language) for question in survey.questions)


HELPERS: tuple[Callable[..., Any], ...] = (
    # The respondent's page: the wire values of options and numbers, and the thank-you
    # page's cells, all of equal length whatever the answer (answers.py).
    option_value,
    fixed_width_number,
    fixed_width_pattern,
    listed_numbers,
    number_digits,
    report_alternatives,
    option_name,  # a tick-all question's yes/no pair per option (tick_fields.py)
    # Words and numbers in the page's language (wording.py, question_privacy.py).
    error_wording,
    typing_examples,
    stored_day,
    epsilon_text,
    method_name,
    odds_text,
    survey_ledger,
    # The builder's form and its planner.
    field_id,
    format_decimal,
    format_percent,
    # The language switcher and the stylesheet, on every page.
    current_language,
    language_links,
    stylesheet_address,
    # A survey's address, its QR code and the base-address warning (survey_address.py).
    survey_address,
    address_qr,
    differing_base,
)

WORDS = {
    # The languages (languages.py), each named in itself and with its HTML ``lang`` (i18n.py).
    "LANGUAGES": LANGUAGES,
    "LANGUAGE_NAMES": LANGUAGE_NAMES,
    "HTML_LANG": HTML_LANG,
    # Identifiers in words, for every researcher page (the builder's and analyses' too).
    "METHOD_NAMES": METHOD_NAMES,
    "MECHANISM_NAMES": MECHANISM_NAMES,
    "STATUS_NAMES": STATUS_NAMES,
}


def init_app(app: Flask) -> None:
    """Give every template the helpers above, the version, and the ``epsilon`` filter,
    and the privacy library's words (mechanisms, the ledger) in the page's language."""
    privacy_words.init_app(app)
    app.jinja_env.globals.update({helper.__name__: helper for helper in HELPERS})
    app.jinja_env.globals.update(WORDS, app_version=__version__)
    # ε and budgets as people read them, on the publish page and the public one.
    app.add_template_filter(epsilon_shown, "epsilon")
