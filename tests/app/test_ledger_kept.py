"""The ledger pages show is kept across requests per question and language: the same
entries as built afresh, in the page's own language, never another page's."""

from __future__ import annotations

from flask import Flask

from survey_app.domain.question_privacy import survey_ledger as built_afresh
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from survey_app.web.templates import survey_ledger


def test_kept_entries_equal_fresh_ones_in_each_language(app: Flask) -> None:
    """An English survey shown with the page in Korean or Chinese: the same questions,
    the privacy words in the page's language, so the language is part of the key."""
    with app.app_context():
        survey = get_survey(get_db(), "campus-health")  # stored by the app fixture
    assert survey is not None and survey.languages == ("en",)
    shown = {}
    for language in ("en", "ko", "zh", "en"):  # back to English: not the last one kept
        with app.test_request_context(f"/s/{survey.slug}?lang={language}"):
            page_survey = survey.localized(language)
            kept = survey_ledger(page_survey)
            assert kept == built_afresh(page_survey)
            assert survey_ledger(page_survey) == kept  # the second build: from the cache
            shown[language] = [entry.how for entry in kept]
    assert len({tuple(hows) for hows in shown.values()}) == 3
