"""A tick-all-that-apply question through the respondent's form, on a real SQLite file.

Without JavaScript a yes/no pair per option posts every answer at one length, and the
server joins and randomizes it; the browser's report "j:b" is checked before anything is
stored (malformed: 400, the form empty, nothing stored); the per-option answers are
refused beside a browser's report; the thank-you page has one length whatever was stored.
"""

from __future__ import annotations

import re

import pytest
from flask import Flask

from survey_app.domain.definitions import parse_definition
from survey_app.privacy.mechanisms import SampledOption
from survey_app.storage.surveys import Survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.respondents import post_without_javascript, stored_answers
from tests.support.stored import stored_cells

SLUG = "used"
OPTIONS = [f"drug {index}" for index in range(12)]
SURVEY_FILE = f"""\
slug: {SLUG}
title: Used
questions:
  - {{key: used, text: Which have you used, type: multiple, epsilon: 1,
     options: [{", ".join(OPTIONS)}]}}
  - {{key: note, text: Anything else, type: multiple, options: [a, b], required: false}}
"""
#: Reports about one of 12 options: the index two digits wide, a colon, the bit.
MALFORMED = {
    "past the last": "12:1",
    "unpadded": "7:1",
    "too wide": "007:1",
    "bit 2": "07:2",
    "no colon": "071",
    "two bits": "07:11",
    "the answer's bits": "010000000000",
    "negative": "-1:1",
    "spaces": "07: 1",
}


@pytest.fixture
def survey(app: Flask) -> Survey:
    with app.app_context():
        return store_survey(get_db(), parse_definition(SURVEY_FILE))


def pairs(ticked: set[int], k: int = len(OPTIONS), key: str = "used") -> dict[str, str]:
    """Every option's yes/no pair as the page without JavaScript posts it."""
    return {f"{key}.{index}": "y" if index in ticked else "n" for index in range(k)}


def post(app: Flask, data: dict[str, str]) -> tuple[int, str, int]:
    return post_without_javascript(app, SLUG, data)


def test_the_page_asks_a_yes_no_pair_per_option_in_fieldsets(app: Flask, survey: Survey) -> None:
    page = app.test_client().get(f"/s/{SLUG}").get_data(as_text=True)
    for index, option in enumerate(OPTIONS):
        assert f'<fieldset class="tick"><legend>{option}</legend>' in page
        # One required radio makes its group required: the pair must be answered.
        assert f'name="used.{index}" value="y" required>' in page
        assert f'name="used.{index}" value="n">' in page
    assert 'name="note.1" value="y">' in page  # optional: not required
    assert "No to all of them: none of these." in page


def test_without_javascript_every_set_posts_one_length_and_is_randomized(
    app: Flask, survey: Survey
) -> None:
    mechanism = survey.questions[0].mechanism
    assert isinstance(mechanism, SampledOption) and mechanism.k == len(OPTIONS)
    lengths, thanks = set(), set()
    for ticked in (set(), {0}, {3, 11}, set(range(12))):
        status, page, length = post(app, pairs(ticked) | pairs({1}, 2, "note"))
        assert status == 200, page
        lengths.add(length)
        table = page[page.index("<table") : page.index("</table>")]
        thanks.add(len(re.sub(r'class="shown"|hidden=hidden', "", table)))
    assert len(lengths) == 1 and len(thanks) == 1
    answers = stored_answers(app)
    assert len(answers) == 4
    for answer in answers:
        assert isinstance(answer["used"], int)
        assert mechanism.report(mechanism.report_format.load(answer["used"]))  # (j, b) in range
    cells = stored_cells(app)["used"]
    assert cells["n"] == 4 and sum(v for c, v in cells.items() if c != "n") == 4
    assert set(cells) <= {"n", *(f"{j}:{b}" for j in range(12) for b in (0, 1))}


def test_an_optional_question_left_blank_is_skipped_and_a_partial_answer_refused(
    app: Flask, survey: Survey
) -> None:
    status, _page, _length = post(app, pairs({2}))
    assert status == 200 and stored_answers(app) == [{"used": stored_answers(app)[0]["used"],
                                                      "note": None}]  # fmt: skip
    partial = {**pairs({2}), "note.0": "y"}
    status, page, _length = post(app, partial)
    assert status == 400 and "Please answer yes or no for every option." in page
    assert len(stored_answers(app)) == 1


def test_a_malformed_report_is_refused_with_the_form_empty_and_nothing_stored(
    app: Flask, survey: Survey
) -> None:
    for label, report in [*MALFORMED.items(), ("honest", "07:1")]:
        status, page, _length = post(app, {"used": report, "randomized": "client"})
        assert status == (200 if label == "honest" else 400), (label, report)
        if label != "honest":
            assert f'value="{report}"' not in page and "checked" not in page, label
    assert stored_answers(app) == [{"used": 15, "note": None}]  # 2·7 + 1
    cells = stored_cells(app)["used"]
    assert cells["7:1"] == 1 and cells["n"] == 1


def test_the_per_option_answers_are_refused_beside_a_browsers_report(
    app: Flask, survey: Survey
) -> None:
    """A browser that randomized must not send the true answers too: a 400, nothing stored."""
    status, page, _length = post(app, {"used": "07:1", "randomized": "client", **pairs({7})})
    assert status == 400 and "unexpected field" in page
    status, page, _length = post(app, {"used": "0" * 12, **pairs({7})})  # both, no JS
    assert status == 400 and stored_answers(app) == []
