"""Issue 20's "done when", in Chromium against gunicorn: a three-section survey with display
logic and questions and options in random order, answered from a panel link that carries
a participant id, with JavaScript and without, each to the completion code.

Two respondents go through each way: one in the fourth year, to whom the placement section
applies, and one in the first, to whom it does not. Then:

- the participant id, after the panel's own link, is in no request, no response, neither
  of gunicorn's logs, nor the database file or its WAL (``assert_marker_nowhere``);
- the true amount typed (a marker number) is in no response, log or stored row, and with
  JavaScript in no request either; without JavaScript it goes to the server, which keeps
  only its report (a discrete Laplace report equals it with probability at most
  (1 - α)/(1 + α) < 10⁻⁶, α = e^(−1/999999): the test could fail that rarely by chance);
- the stored rows hold "n/a" exactly for the questions that did not apply, and nothing
  that says which order anyone saw (the answers in the written order, keys as written);
- the requests have the same sizes for both respondents: with JavaScript the one POST,
  hidden questions and all; without it each section's carried reports are the same length,
  whatever was answered and whichever order was shown.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, answer, one_post, watch
from tests.support.stored import stored_answers
from tests.support.traffic import Traffic, assert_marker_nowhere

SLUG = "long-panel"
CODE = "LP7Q2R9X"
AMOUNT = "482193"  # a marker: the true amount, typed
DEFINITION = f"""\
slug: {SLUG}
title: Clinical placements and money
question_order: random
completion: {{code: {CODE}}}
thank_you: Your answers help the placement office.
sections:
  - title: About you
    questions:
      - {{key: year, text: "Which year are you in?", type: choice, sensitive: false,
         options: [First, Second, Third, Fourth]}}
      - {{key: campus, text: "Which campus?", type: choice, sensitive: false,
         options: [North, South]}}
  - title: Placements
    description: Only for students on placements.
    questions:
      - {{key: harassed, text: "Were you harassed on a placement?",
         show_if: {{question: year, is: [3, 4]}}}}
      - {{key: unsafe, text: "Did you feel unsafe on a placement?",
         show_if: {{question: year, is: [3, 4]}}}}
      - {{key: support, text: "Whom did you turn to?", type: choice, mechanism: grr,
         options: [A tutor, A nurse, A peer, Nobody, None of these],
         option_order: random, fixed_options: [5], show_if: {{question: year, is: [3, 4]}}}}
  - title: Money
    questions:
      - {{key: debt, text: "Are you in debt to a lender?"}}
      - {{key: gambling, text: "How many pounds did you lose gambling last year?",
         type: number, min: 0, max: 999999, mechanism: laplace, epsilon: 1}}
      - {{key: used, text: "Which have you used?", type: multiple,
         options: [Cannabis, Cocaine, Ecstasy], option_order: random}}
"""
WRITTEN = ["year", "campus", "harassed", "unsafe", "support", "debt", "gambling", "used"]
PLACEMENTS = ["harassed", "unsafe", "support"]
#: Each respondent's true answers, section by section: the fourth-year student answers the
#: placements; the first-year student is not asked them.
FOURTH_YEAR = [
    {"year": "3", "campus": "0"},
    {"harassed": "yes", "unsafe": "no", "support": "3"},
    {"debt": "yes", "used.0": "y", "used.1": "n", "used.2": "y"},
]
FIRST_YEAR = [
    {"year": "0", "campus": "1"},
    {},
    {"debt": "no", "used.0": "n", "used.1": "n", "used.2": "n"},
]


@pytest.fixture(scope="module")
def server(live_server: LiveServer) -> LiveServer:
    assert live_server.import_survey(DEFINITION) == SLUG
    return live_server


def panel_link(server: LiveServer, marker: str) -> str:
    return server.url(f"/s/{SLUG}?PROLIFIC_PID={marker}&STUDY_ID=S{marker}&SESSION_ID=X{marker}")


def latest_row(server: LiveServer) -> dict[str, Any]:
    return stored_answers(server.database, SLUG)[-1]


def shown_order(page: Any) -> list[str]:
    """The questions in the order the page shows them, by key."""
    names = page.locator("fieldset.question input, fieldset.question select").evaluate_all(
        "(inputs) => inputs.map((i) => i.name.split('.')[0])"
    )
    return list(dict.fromkeys(names))


def type_amount(page: Any, javascript: bool) -> None:
    field = 'input[name="gambling"]:enabled' if javascript else "#n-gambling"
    page.fill(field, AMOUNT)


def carried(page: Any) -> str:
    return str(page.locator('input[name="sections-carried"]').input_value())


def with_javascript(page: Any, sections: list[dict[str, str]]) -> list[str]:
    """Walk the sections in the page; nothing is posted until the last."""
    for index, answers in enumerate(sections):
        answer(page, answers)
        if index == len(sections) - 1:
            type_amount(page, javascript=True)
            with page.expect_navigation():
                page.locator(f"#section-{index} button[value=next]").click()
        else:
            page.locator(f"#section-{index} .section-next").click()
            expect(page.locator(f"#section-{index + 1}")).to_be_visible()
    return []


def without_javascript(page: Any, sections: list[dict[str, str]]) -> list[str]:
    """A page and a POST per section; the carried field of each page after the first."""
    lengths = []
    for index, answers in enumerate(sections):
        shown = page.locator("section.survey-section:not([hidden])")
        expect(shown).to_contain_text(f"Section {index + 1} of 3")
        lengths.append(str(len(carried(page))))
        answer(page, answers)
        if index == len(sections) - 1:
            type_amount(page, javascript=False)
        with page.expect_navigation():
            shown.locator("button[value=next]").click()
    return lengths


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_panel_participant_answers_three_sections_and_leaks_nothing(
    server: LiveServer, new_context: Callable[..., Any], javascript: bool
) -> None:
    walk = with_javascript if javascript else without_javascript
    sizes, carried_lengths, rows = [], [], []
    for respondent in (FOURTH_YEAR, FIRST_YEAR):
        marker = f"pid{secrets.token_hex(8)}"
        page = new_context(java_script_enabled=javascript).new_page()
        log, traffic = watch(page), Traffic(page)
        page.goto(panel_link(server, marker))
        if javascript:  # the script adds the other sections to the page
            expect(page.locator("section.survey-section")).to_have_count(3)
            assert sorted(shown_order(page)) == sorted(WRITTEN)
        carried_lengths.append(walk(page, respondent))
        expect(page.locator("h1")).to_have_text("Thank you")
        expect(page.locator("#completion-code")).to_have_text(CODE)
        assert_marker_nowhere(server, traffic, marker, SLUG)
        assert_marker_nowhere(server, traffic, AMOUNT, SLUG, posted=javascript)
        if javascript:  # one POST, its reports in the written order
            _url, posted = one_post(log)
            assert [name for name in posted if name in WRITTEN] == WRITTEN, list(posted.items())
            sizes.append(len(log.posts()[0][1]))
        else:  # a POST per section
            sizes.append(len(log.posts()))
        rows.append(latest_row(server))

    fourth, first = rows
    assert list(fourth) == WRITTEN and list(first) == WRITTEN  # as written, whatever shown
    assert all(fourth[key] != "n/a" for key in PLACEMENTS)
    assert all(first[key] == "n/a" for key in PLACEMENTS)
    assert all(row["gambling"] != int(AMOUNT) for row in rows)
    assert sizes[0] == sizes[1]  # one POST of one size, or three POSTs each
    assert carried_lengths[0] == carried_lengths[1]
