"""Display logic in Chromium against gunicorn: shown and hidden live as the plain answer
changes; a hidden question posts its "not applicable" value at the length of its reports,
so the request is as large whether it was shown and answered or not; the server stores
"n/a" for it; without JavaScript the note says who answers; axe in en, ko and zh.
"""

from __future__ import annotations

from typing import Any

import pytest

from survey_app.domain.display_logic import NOT_APPLICABLE
from tests.support.browser import (
    LiveServer,
    answer,
    axe_violations,
    one_post,
    sideways_overflow,
    submit,
    watch,
)
from tests.support.stored import stored_answers

SLUG = "placements-browser"
DEFINITION = f"""\
slug: {SLUG}
languages: [en, ko, zh]
title: {{en: Placements, ko: 실습, zh: 实习}}
questions:
  - key: year
    text: {{en: "Which year are you in?", ko: "몇 학년입니까?", zh: 你几年级？}}
    type: choice
    sensitive: false
    options:
      - {{en: First year, ko: 1학년, zh: 一年级}}
      - {{en: Second year, ko: 2학년, zh: 二年级}}
      - {{en: Third year, ko: 3학년, zh: 三年级}}
      - {{en: Fourth year, ko: 4학년, zh: 四年级}}
  - key: age
    text: {{en: "How old are you?", ko: "몇 살입니까?", zh: 你几岁？}}
    type: number
    sensitive: false
    min: 16
    max: 99
  - key: harassed
    text: {{en: "Were you harassed on a placement?", ko: "실습 중 괴롭힘?", zh: 实习中被骚扰？}}
    show_if: {{question: year, is: [3, 4]}}
  - key: drinks
    text: {{en: "Drinks last week?", ko: "지난주 음주?", zh: 上周饮酒？}}
    type: number
    mechanism: laplace
    min: 0
    max: 40
    show_if: {{question: age, min: 18, max: 25}}
  - key: used
    text: {{en: "Which have you used?", ko: "사용한 것?", zh: 用过哪些？}}
    type: multiple
    options:
      - {{en: pills, ko: 알약, zh: 药片}}
      - {{en: powder, ko: 가루, zh: 粉末}}
      - {{en: smoke, ko: 연기, zh: 烟}}
    show_if: {{question: year, is: [4]}}
"""
CONDITIONED = ("harassed", "drinks", "used")


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    definition = live_server.workdir / f"{SLUG}.yaml"
    definition.write_text(DEFINITION, encoding="utf-8")
    assert live_server.cli("import-survey", str(definition)).strip() == SLUG
    return SLUG


def stored_rows(server: LiveServer) -> list[dict[str, object]]:
    return stored_answers(server.database, SLUG)


def shown(page: Any) -> dict[str, bool]:
    return {key: page.locator(f'fieldset[data-key="{key}"]').is_visible() for key in CONDITIONED}


def test_questions_show_and_hide_live_as_the_plain_answer_changes(
    new_context: Any, live_server: LiveServer, survey: str
) -> None:
    page = new_context().new_page()
    page.goto(live_server.url(f"/s/{SLUG}"))
    assert shown(page) == dict.fromkeys(CONDITIONED, False)
    answer(page, {"year": "3"})
    page.fill('input[type="number"][name="age"]', "20")
    assert shown(page) == {"harassed": True, "drinks": True, "used": True}
    harassed = page.locator('input[name="harassed"][value="y"]')
    assert harassed.evaluate("input => input.required")
    answer(page, {"year": "0"})
    page.fill('input[type="number"][name="age"]', "30")
    assert shown(page) == dict.fromkeys(CONDITIONED, False)
    assert harassed.evaluate("input => input.disabled && !input.required")


def respond(
    new_context: Any, server: LiveServer, year: str, age: str
) -> tuple[tuple[int, int], dict[str, str]]:
    """One respondent with JavaScript: answers every question shown, sends; the sizes of
    the POST and of the thank-you page, and the POST's fields."""
    page = new_context().new_page()
    log = watch(page)
    page.goto(server.url(f"/s/{SLUG}"))
    answer(page, {"year": year})
    page.fill('input[type="number"][name="age"]', age)
    if shown(page)["harassed"]:
        answer(page, {"harassed": "yes"})
    if shown(page)["drinks"]:
        page.fill('input[type="number"][name="drinks"]', "12")
    if shown(page)["used"]:
        answer(page, {f"used.{j}": "yes" for j in range(3)})
    response = submit(page)
    assert response.status == 200
    (post,) = log.posts()
    return (len(post[1]), len(response.body())), one_post(log)[1]


def test_with_javascript_request_and_page_are_the_same_size_shown_and_answered_or_not(
    new_context: Any, live_server: LiveServer, survey: str
) -> None:
    before = len(stored_rows(live_server))
    all_shown, sent_shown = respond(new_context, live_server, year="3", age="20")
    none_shown, sent_hidden = respond(new_context, live_server, year="0", age="30")
    assert all_shown == none_shown
    assert sent_shown["randomized"] == sent_hidden["randomized"] == "client"
    assert sent_hidden["harassed"] == "_" and sent_hidden["used"] == "_:_"
    assert sent_hidden["drinks"] == "_" * 17 and len(sent_shown["drinks"]) == 17
    answered, skipped = stored_rows(live_server)[before:]
    assert all(answered[key] != NOT_APPLICABLE for key in CONDITIONED)
    assert all(skipped[key] == NOT_APPLICABLE for key in CONDITIONED)


def test_without_javascript_the_note_says_who_answers_and_the_server_decides(
    new_context: Any, live_server: LiveServer, survey: str
) -> None:
    page = new_context(java_script_enabled=False).new_page()
    page.goto(live_server.url(f"/s/{SLUG}"))
    note = page.locator("#only-harassed")
    assert note.inner_text() == (
        "Only if you answered Third year or Fourth year to “Which year are you in?”."
    )
    before = len(stored_rows(live_server))
    answer(page, {"year": "1"})
    page.select_option('select[name="age"]', label="40")
    answer(page, {"harassed": "yes"})  # answered though it does not apply: dropped
    assert submit(page).status == 200
    (row,) = stored_rows(live_server)[before:]
    assert row["harassed"] == NOT_APPLICABLE and row["year"] == 1 and row["age"] == 40


@pytest.mark.parametrize("language", ["en", "ko", "zh"])
def test_a_page_with_conditioned_questions_passes_axe_and_fits_a_phone(
    new_context: Any, live_server: LiveServer, survey: str, language: str
) -> None:
    """Some conditioned questions shown with their notes (Fourth year), one hidden."""
    page = new_context().new_page()
    page.goto(live_server.url(f"/s/{SLUG}?lang={language}"))
    answer(page, {"year": "3"})
    assert shown(page) == {"harassed": True, "drinks": False, "used": True}
    assert page.locator("html").get_attribute("lang") in {language, "zh-Hans"}
    assert axe_violations(page) == []
    page.set_viewport_size({"width": 375, "height": 800})
    assert sideways_overflow(page) == 0
