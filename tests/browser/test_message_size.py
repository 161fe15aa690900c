"""The sizes a network observer sees, from a real browser against gunicorn.

tests/hostile/test_message_size.py checks the server's side with every possible answer; here
Chromium answers a survey of every question type in very different ways, with real coins,
and the POST it sends and the thank-you page it gets back keep their lengths: with
JavaScript every value randomize.js sends is padded to its question's width; without it
yes/no, options and a tick-all question's yes/no pairs still are, and numbers are chosen
from a list (0-50) or typed at the fixed width each input's pattern asks for.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, answer, submit, watch

SLUG = "every-type"
DEFINITION = f"""\
slug: {SLUG}
title: Every question type
questions:
  - {{key: yn, text: Yes or no, type: yes_no}}
  - {{key: many, text: One of twelve, type: choice, mechanism: grr,
      options: [o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10, a much longer eleventh option]}}
  - {{key: unary, text: Unary, type: choice, options: [x, yy, zzz, w], mechanism: oue}}
  - {{key: sets, text: Sets of three, type: choice, mechanism: subset,
      options: [s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, the longest option of twelve]}}
  - {{key: ticks, text: Tick all that apply, type: multiple,
      options: [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, the longest option of twelve]}}
  - {{key: laplace, text: Laplace, type: number, min: -20, max: 500, mechanism: laplace}}
  - {{key: duchi, text: Duchi, type: number, min: 0, max: 50, mechanism: duchi}}
  - {{key: plain, text: Plain number, type: number, min: 0, max: 1000, sensitive: false}}
"""


def ticks(ticked: set[int]) -> dict[str, str]:
    """The tick-all question's yes/no pair per option."""
    return {f"ticks.{j}": "yes" if j in ticked else "no" for j in range(12)}


# Three respondents as different as they can be: answers, and the number of digits typed.
RESPONDENTS = [
    (
        {"yn": "yes", "many": "00", "unary": "0", "sets": "00", **ticks(set())},
        {"laplace": "-20", "duchi": "0", "plain": "0"},
    ),
    (
        {"yn": "no", "many": "11", "unary": "3", "sets": "11", **ticks(set(range(12)))},
        {"laplace": "7", "duchi": "50", "plain": "1000"},
    ),
    (
        {"yn": "no", "many": "05", "unary": "1", "sets": "05", **ticks({11})},
        {"laplace": "499", "duchi": "7", "plain": "42"},
    ),
]


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    assert live_server.import_survey(DEFINITION) == SLUG
    return SLUG


# Typed in full without JavaScript, as each field's label and pattern ask.
FIXED_WIDTH = {
    "laplace": {"-20": "-020", "7": "0007", "499": "0499"},
    "plain": {"0": "0000", "1000": "1000", "42": "0042"},
}


def sizes(new_context: Any, server: LiveServer, javascript: bool) -> set[Any]:
    seen = set()
    for choices, typed in RESPONDENTS:
        page = new_context(java_script_enabled=javascript).new_page()
        log = watch(page)
        assert page.goto(server.url(f"/s/{SLUG}")).status == 200
        answer(page, choices)
        for key, value in typed.items():
            if javascript:
                page.fill(f'input[type="number"][name="{key}"]', value)
            elif key == "duchi":  # a list: the option shown as the number
                page.select_option(f'select[name="{key}"]', label=value)
            else:  # typed in full, as the label asks
                field = page.locator(f'input[type="text"][name="{key}"]')
                field.fill(FIXED_WIDTH[key][value])
                assert field.evaluate("input => input.validity.valid")
        response = submit(page)
        assert response.status == 200
        (post,) = log.posts()
        seen.add((len(post[1]), len(response.body())))
    return seen


def test_with_javascript_request_and_page_sizes_do_not_depend_on_the_answers(
    new_context: Any, live_server: LiveServer, survey: str
) -> None:
    assert len(sizes(new_context, live_server, javascript=True)) == 1


def test_without_javascript_request_and_page_sizes_do_not_depend_on_the_answers(
    new_context: Any, live_server: LiveServer, survey: str
) -> None:
    assert len(sizes(new_context, live_server, javascript=False)) == 1


# The same questions in three sections: with JavaScript one POST at the end, without it a
# POST per section, each carrying the reports so far; neither their sizes nor the pages'
# depend on the answers.

SECTIONED_SLUG = "every-type-in-sections"
SECTIONS = [["yn", "many", "unary"], ["sets", "ticks"], ["laplace", "duchi", "plain"]]


@pytest.fixture(scope="module")
def sectioned(live_server: LiveServer) -> str:
    items = DEFINITION.split("questions:\n", 1)[1].rstrip("\n").split("\n  - ")
    items = [item.removeprefix("  - ") for item in items]
    by_key = {item.split(",")[0].removeprefix("{key: "): item for item in items}
    text = f"slug: {SECTIONED_SLUG}\ntitle: Every question type, in sections\nsections:\n"
    for number, keys in enumerate(SECTIONS, start=1):
        text += f"  - title: Part {number}\n    questions:\n"
        text += "".join("      - " + by_key[key].replace("\n", "\n    ") + "\n" for key in keys)
    definition = live_server.workdir / f"{SECTIONED_SLUG}.yaml"
    definition.write_text(text, encoding="utf-8")
    assert live_server.cli("import-survey", str(definition)).strip() == SECTIONED_SLUG
    return SECTIONED_SLUG


def section_sizes(new_context: Any, server: LiveServer, javascript: bool) -> set[Any]:
    seen = set()
    for choices, typed in RESPONDENTS:
        page = new_context(java_script_enabled=javascript).new_page()
        log = watch(page)
        assert page.goto(server.url(f"/s/{SECTIONED_SLUG}")).status == 200
        if javascript:  # the script adds the other sections before the walk
            expect(page.locator("section.survey-section")).to_have_count(len(SECTIONS))
        pages = []
        for index, keys in enumerate(SECTIONS):
            answer(page, {k: v for k, v in choices.items() if k.split(".")[0] in keys})
            for key, value in typed.items():
                if key not in keys:
                    continue
                if javascript:
                    page.fill(f'input[type="number"][name="{key}"]', value)
                elif key == "duchi":
                    page.select_option(f'select[name="{key}"]', label=value)
                else:
                    page.locator(f'input[type="text"][name="{key}"]').fill(FIXED_WIDTH[key][value])
            button = page.locator(f'#section-{index} button[value="next"]')
            if javascript and index < len(SECTIONS) - 1:
                button.click()  # the page walks on; nothing is sent
                continue
            with page.expect_navigation() as navigation:
                button.click()
            assert navigation.value.status == 200
            pages.append(len(navigation.value.body()))
        posts = tuple(len(body) for _url, body in log.posts())
        assert len(posts) == (1 if javascript else len(SECTIONS))
        seen.add((posts, tuple(pages)))
    return seen


def test_in_sections_with_javascript_sizes_do_not_depend_on_the_answers(
    new_context: Any, live_server: LiveServer, sectioned: str
) -> None:
    assert len(section_sizes(new_context, live_server, javascript=True)) == 1


def test_in_sections_without_javascript_sizes_do_not_depend_on_the_answers(
    new_context: Any, live_server: LiveServer, sectioned: str
) -> None:
    assert len(section_sizes(new_context, live_server, javascript=False)) == 1
