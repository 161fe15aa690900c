"""The dashboard lists the questions as the survey asks them, not grouped by type: a
researcher reads it beside the questionnaire."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient

from tests.support.examples import MIXED_SLUG

# examples/mixed-survey.yaml's questions, in its order: a plain choice, two yes/no, a
# choice, a number and a yes/no again.
SURVEY_ORDER = ["year", "cheated", "skipped_meals", "substance", "drinks", "stress"]


def test_every_question_has_its_section_in_the_survey_s_order(
    mixed_app: Flask, logged_in: FlaskClient
) -> None:
    page = logged_in.get(f"/research/surveys/{MIXED_SLUG}").get_data(as_text=True)
    sections = re.findall(
        r'<section class="question ([a-z-]+)" aria-labelledby="q-([a-z_]+)">\s*<h2 id="q-\2">',
        page,
    )
    assert [key for _kind, key in sections] == SURVEY_ORDER
    assert [kind for kind, _key in sections] == [
        "choice", "yes-no", "yes-no", "choice", "number", "yes-no",
    ]  # fmt: skip
    # The yes/no questions are still drawn together, once, before the sections.
    assert page.index('id="yes-no-glance"') < page.index('id="q-year"')
