"""Questions and options in random order, in Chromium against gunicorn: the page shows the
order drawn for it, and the request does not carry it. With JavaScript the script posts
its reports in the order the questions are written: two respondents shown different
orders send the same fields in the same order at the same size. Without JavaScript the
browser posts its fields in the page's order (the server drew it and keeps nothing of it):
the same fields at the same size. Either way the database holds the options' indexes as
written and nothing about the order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, coin_stub, one_post, submit, watch
from tests.support.stored import stored_answers as every_stored_answer

SLUG = "display-order"
OWNER, PASSWORD = "shuffler", "a horse in random order"
DEFINITION = f"""\
slug: {SLUG}
title: Random order
question_order: random
questions:
  - {{key: cheated, text: "Cheated?", type: yes_no}}
  - {{key: where, text: "Where do you live?", type: choice, mechanism: grr,
     options: [Halls, A flat, With family, None of these],
     option_order: random, fixed_options: [4]}}
  - {{key: used, text: "Which have you used?", type: multiple,
     options: [Cannabis, Cocaine, Ecstasy], option_order: random}}
  - {{key: mood, text: "How are you?", type: scale, sensitive: false,
     options: [Bad, So-so, Good], option_order: reverse}}
  - {{key: year, text: "Which year?", type: choice, sensitive: false,
     options: [First, Second, Third, Fourth], option_order: random}}
  - {{key: drinks, text: "Drinks last week?", type: number, min: 0, max: 30}}
"""
KEYS = ["cheated", "where", "used", "mood", "year", "drinks"]
#: Every respondent's answers in words, by question (the group's name) or option.
CHOSEN = {
    "Cheated?": "No",
    "Where do you live?": "A flat",
    "How are you?": "Good",
    "Which year?": "Third",
    "Cannabis": "Yes",
    "Cocaine": "No",
    "Ecstasy": "Yes",
}
SHOWN = r"""() => [
  ...document.querySelectorAll('fieldset.question > legend'),
  ...document.querySelectorAll('#survey-form input[type=radio]'),
].map((e) => e.textContent.replace(/^\d+\. /, "") || e.name + "=" + e.value)"""


TICK_SLUG = "tick-order"
TICK_DEFINITION = f"""\
slug: {TICK_SLUG}
title: Ticks in random order
questions:
  - {{key: used, text: "Which have you used?", type: multiple,
     options: [Cannabis, Cocaine, Ecstasy, LSD], option_order: random}}
"""


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    live_server.cli("create-researcher", OWNER, "--password-stdin", stdin=PASSWORD + "\n")
    for slug, definition in ((SLUG, DEFINITION), (TICK_SLUG, TICK_DEFINITION)):
        path = live_server.workdir / f"{slug}.yaml"
        path.write_text(definition, encoding="utf-8")
        assert live_server.cli("import-survey", "--owner", OWNER, str(path)).strip() == slug
    return SLUG


def respond(page: Any, server: LiveServer, javascript: bool) -> tuple[list[str], str]:
    """One respondent: the order their page showed, and the body the browser posted."""
    log = watch(page)
    assert page.goto(server.url(f"/s/{SLUG}")).status == 200
    shown = page.evaluate(SHOWN)
    for group, words in CHOSEN.items():
        page.get_by_role("group", name=group).get_by_label(words, exact=True).check()
    if javascript:
        page.fill('input[type="number"][name="drinks"]', "4")
    else:
        page.select_option('select[name="drinks"]', "04")
    assert submit(page).status == 200
    expect(page.locator("h1")).to_have_text("Thank you")
    assert not log.page_errors and not log.console_errors
    (body,) = [body for _url, body in log.posts()]
    return shown, body


def two_orders(
    new_context: Callable[..., Any], server: LiveServer, javascript: bool
) -> list[tuple[list[str], str]]:
    """Respondents until two were shown different orders (6!·3!·3!·2·4! orders: 12 pages
    all alike would mean the order is not drawn)."""
    first = respond(new_context(java_script_enabled=javascript).new_page(), server, javascript)
    for _ in range(12):
        other = respond(new_context(java_script_enabled=javascript).new_page(), server, javascript)
        if other[0] != first[0]:
            return [first, other]
    raise AssertionError("every page showed the same order")


def names(body: str) -> list[str]:
    return [name for name, _value in parse_qsl(body, keep_blank_values=True)]


def stored_answers(server: LiveServer) -> list[dict[str, Any]]:
    return every_stored_answer(server.database)


def test_with_javascript_the_reports_go_in_the_written_order(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    (shown_a, body_a), (shown_b, body_b) = two_orders(new_context, live_server, True)
    assert sorted(shown_a) == sorted(shown_b)  # the same page, in another order
    assert names(body_a) == names(body_b)
    questions = [name for name in names(body_a) if name in KEYS]
    assert questions == KEYS  # as written, whatever the page showed first
    assert dict(parse_qsl(body_a))["randomized"] == "client"
    assert len(body_a) == len(body_b)


def test_without_javascript_the_same_fields_go_at_the_same_size(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    """The browser posts in the page's order, which the server drew and forgot: the
    request holds the same fields and bytes whatever the order."""
    before = len(stored_answers(live_server))
    (_, body_a), (_, body_b) = two_orders(new_context, live_server, False)
    assert sorted(parse_qsl(body_a)) != [] and "randomized" not in dict(parse_qsl(body_a))
    assert sorted(names(body_a)) == sorted(names(body_b))
    assert len(body_a) == len(body_b)
    # The plain answers chosen by their words are stored as their options' indexes as
    # written (Good is 2, Third is 2), wherever they were shown; every stored row
    # has the questions in the written order and nothing else.
    for answers in stored_answers(live_server)[before:]:
        assert list(answers) == KEYS
        assert (answers["mood"], answers["year"]) == (2, 2)


def test_a_tick_is_joined_by_its_option_as_written_not_its_place(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    """With every random byte 0 the sampler reports option 0 and keeps its tick ("0:1"
    when Cannabis, option 0 as written, is ticked), wherever the page put Cannabis."""
    for _ in range(12):
        page = new_context().new_page()
        page.add_init_script(coin_stub(0x00))
        log = watch(page)
        page.goto(live_server.url(f"/s/{TICK_SLUG}"))
        for j, tick in enumerate("ynnn"):
            page.check(f'input[name="used.{j}"][value="{tick}"]')
        first = page.locator("fieldset.tick legend").first.text_content()
        assert submit(page).status == 200
        assert one_post(log)[1]["used"] == "0:1"
        if first != "Cannabis":
            return
    raise AssertionError("Cannabis was shown first on every page")
