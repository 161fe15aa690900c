"""A sectioned survey in Chromium against gunicorn, with JavaScript and without.

With JavaScript the page walks its sections itself: Next checks the section shown (the
browser's own validation, said in words too), Back goes back, the progress and the focus
follow, and the only request with answers is the one POST at the end, of reports, as for
a survey of one page. Without JavaScript each section is a page and a POST; the response is
stored once, after the last. Every page passes axe in English, Korean and Chinese, and
fits a 375 px wide phone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, answer, axe_violations, sideways_overflow, watch
from tests.support.stored import stored_answers

SLUG = "sleep-in-sections"
DEFINITION = f"""\
slug: {SLUG}
languages: [en, ko, zh]
title: {{en: Sleep, ko: 수면, zh: 睡眠}}
sections:
  - title: {{en: About you, ko: 당신에 대해, zh: 关于你}}
    description: {{en: Not randomized., ko: 무작위화하지 않습니다., zh: 不随机化。}}
    questions:
      - key: year
        text: {{en: Year of study, ko: 학년, zh: 年级}}
        type: choice
        options:
          - {{en: First, ko: 1학년, zh: 一年级}}
          - {{en: Second, ko: 2학년, zh: 二年级}}
          - {{en: Third or later, ko: 3학년 이상, zh: 三年级及以上}}
        sensitive: false
  - title: {{en: Nights, ko: 밤, zh: 夜晚}}
    questions:
      - key: awake
        text: {{en: Awake all night this month, ko: 이번 달 밤을 새웠다, zh: 本月通宵未眠}}
  - title: {{en: Naps, ko: 낮잠, zh: 午睡}}
    questions:
      - key: naps
        text: {{en: Naps in lectures, ko: 강의 중 낮잠, zh: 课上打盹}}
"""
LANGUAGES = ["en", "ko", "zh"]


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    assert live_server.import_survey(DEFINITION) == SLUG
    return SLUG


def responses(server: LiveServer) -> int:
    return len(stored_answers(server.database, SLUG))


def test_with_javascript_the_page_walks_its_sections_and_posts_once(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    page = new_context().new_page()
    log = watch(page)
    before = responses(live_server)
    page.goto(live_server.url(f"/s/{SLUG}"))
    # The page holds the first section; the script adds the others, fetched without answers.
    expect(page.locator("section.survey-section")).to_have_count(3)
    fetched = [(method, url, body) for method, url, body in log.requests if "/sections?" in url]
    assert fetched == [("GET", live_server.url(f"/s/{SLUG}/sections?lang=en"), "")]
    first, second, third = (page.locator(f"#section-{index}") for index in range(3))
    expect(first).to_be_visible()
    expect(second).to_be_hidden()
    # Next with the section unanswered: the browser's own check, said in words too.
    first.locator(".section-next").click()
    expect(first).to_be_visible()
    expect(first.locator(".section-problem")).to_have_text(
        "Please answer the questions marked before going on."
    )
    expect(page.locator('input[name="year"]').first).to_be_focused()
    answer(page, {"year": "1"})
    first.locator(".section-next").click()
    expect(second).to_be_visible()
    expect(first).to_be_hidden()
    expect(page.locator("#section-title-1")).to_be_focused()
    expect(second.locator("progress")).to_have_attribute("value", "2")
    expect(second).to_contain_text("Section 2 of 3")
    answer(page, {"awake": "yes"})
    second.locator(".section-back").click()
    expect(first).to_be_visible()
    expect(page.locator("#section-title-0")).to_be_focused()
    first.locator(".section-next").click()
    second.locator(".section-next").click()
    expect(third).to_be_visible()
    answer(page, {"naps": "no"})
    assert log.posts() == []  # nothing left the browser on the way
    with page.expect_navigation():
        third.locator('button[value="next"]').click()
    expect(page.locator("h1")).to_have_text("Thank you")
    ((url, body),) = log.posts()
    assert url.endswith(f"/s/{SLUG}")
    assert "randomized=client" in body and "sections-carried" not in body
    assert "sections-go" not in body
    assert responses(live_server) == before + 1
    assert not log.page_errors and not log.console_errors


def test_without_javascript_each_section_is_a_page_and_stored_once(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    page = new_context(java_script_enabled=False).new_page()
    log = watch(page)
    before = responses(live_server)
    page.goto(live_server.url(f"/s/{SLUG}"))
    steps = [({"year": "2"}, "Section 2 of 3"), ({"awake": "no"}, "Section 3 of 3")]
    for answers, shown in steps:
        answer(page, answers)
        with page.expect_navigation():
            page.locator('section:not([hidden]) button[value="next"]').click()
        expect(page.locator("section.survey-section")).to_have_count(1)
        expect(page.locator("section.survey-section")).to_contain_text(shown)
        expect(page.locator("input:checked")).to_have_count(0)  # every page comes back empty
        assert responses(live_server) == before
    answer(page, {"naps": "yes"})
    with page.expect_navigation():
        page.locator('button[value="next"]').click()
    expect(page.locator("h1")).to_have_text("Thank you")
    assert len(log.posts()) == 3
    assert responses(live_server) == before + 1


def test_if_the_other_sections_never_come_each_next_goes_to_the_server(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    """With JavaScript but the other sections' fetch failing, the page works as without
    it: each Next posts its section, the server randomizes it, the response is stored once."""
    page = new_context().new_page()
    page.route("**/sections?*", lambda route: route.abort())
    log = watch(page)
    before = responses(live_server)
    page.goto(live_server.url(f"/s/{SLUG}"))
    for answers in ({"year": "2"}, {"awake": "no"}, {"naps": "yes"}):
        answer(page, answers)
        with page.expect_navigation():
            page.locator('section:not([hidden]) button[value="next"]').click()
    expect(page.locator("h1")).to_have_text("Thank you")
    assert len(log.posts()) == 3 and "randomized=client" not in log.posts()[0][1]
    assert responses(live_server) == before + 1


@pytest.mark.parametrize("language", LANGUAGES)
def test_section_pages_pass_axe_and_fit_a_phone(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str, language: str
) -> None:
    found: dict[str, list[str]] = {}
    phone = {"viewport": {"width": 375, "height": 740}}
    page = new_context(**phone).new_page()
    page.goto(live_server.url(f"/s/{SLUG}?lang={language}"))
    expect(page.locator("section.survey-section")).to_have_count(3)
    found["first section"] = axe_violations(page)
    assert sideways_overflow(page) == 0
    answer(page, {"year": "2"})
    page.locator("#section-0 .section-next").click()
    expect(page.locator("#section-1")).to_be_visible()
    found["second section, in the page"] = axe_violations(page)
    page.locator("#section-1 .section-next").click()  # unanswered: the problem shown
    expect(page.locator("#section-1 .section-problem")).to_be_visible()
    found["second section, a problem"] = axe_violations(page)
    assert sideways_overflow(page) == 0

    # The pages of the way through without JavaScript (axe needs a script to run, so the
    # browser has JavaScript but no crypto: the survey is then walked as without it).
    context = new_context(**phone)
    context.add_init_script("Object.defineProperty(window, 'crypto', {value: undefined})")
    plain = context.new_page()
    plain.goto(live_server.url(f"/s/{SLUG}?lang={language}"))
    answer(plain, {"year": "2"})
    with plain.expect_navigation():
        plain.locator("#section-0 .section-next").click()
    expect(plain.locator("section.survey-section")).to_have_count(1)
    found["second section, its own page"] = axe_violations(plain)
    assert sideways_overflow(plain) == 0
    plain.locator("input[required]").evaluate_all(
        "(inputs) => inputs.forEach((i) => { i.required = false; })"
    )
    with plain.expect_navigation():
        plain.locator("#section-1 .section-next").click()  # refused: unanswered
    expect(plain.locator("#form-errors")).to_be_visible()
    found["second section, refused"] = axe_violations(plain)
    assert not any(found.values()), {name: v for name, v in found.items() if v}
