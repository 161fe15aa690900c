"""The builder's preview walks a sectioned survey's sections, in Chromium against gunicorn.

With JavaScript the builder's live preview shows one section at a time: Previous and Next
(outside the disabled fieldset) step through them without a request, the focus moves to
the section's heading and a status says "Section 2 of 3"; the section shown stays shown
as the preview follows the typing. Without JavaScript the builder shows every section with
a link to the draft's preview page, which walks them by links, each section alone with its
heading focused. Both pass axe in English, Korean and Chinese and fit a 375 px phone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, layout_problems, watch

OWNER = "walker-ada"
PASSWORD = "correct horse battery"
SLUG = "walked-sections"
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
          - {{en: Third or later, ko: 3학년 이상, zh: 三年级及以上}}
        sensitive: false
  - title: {{en: Nights, ko: 밤, zh: 夜晚}}
    questions:
      - key: awake
        text: {{en: Awake all night this month, ko: 이번 달 밤을 새웠다, zh: 本月通宵未眠}}
        show_if: {{question: year, is: [1]}}
  - title: {{en: Naps, ko: 낮잠, zh: 午睡}}
    questions:
      - key: naps
        text: {{en: Naps in lectures, ko: 강의 중 낮잠, zh: 课上打盹}}
"""
DRAFT = f"/research/builder/drafts/{SLUG}"
PHONE = {"width": 375, "height": 740}
LANGUAGES = ["en", "ko", "zh"]


@pytest.fixture(scope="module")
def draft(live_server: LiveServer) -> str:
    live_server.cli("create-researcher", OWNER, "--password-stdin", stdin=PASSWORD + "\n")
    assert live_server.import_survey(DEFINITION, "--owner", OWNER, "--draft") == SLUG
    return SLUG


def logged_in(new_context: Callable[..., Any], server: LiveServer, **options: Any) -> Any:
    page = new_context(**options).new_page()
    page.goto(server.url("/login"))
    page.fill("#username", OWNER)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.locator("main button[type=submit]").click()
    return page


def shown_sections(page: Any) -> list[str]:
    """The ids of the preview's sections on screen (read without the page's JavaScript,
    which may be off)."""
    shown = page.locator(".preview-frame .survey-section:not([hidden])")
    return [section.get_attribute("id") for section in shown.all()]


def step(page: Any, name: str, index: int, count: int = 3) -> None:
    """Press Previous or Next section; section ``index`` alone is shown, its heading focused."""
    page.get_by_role("button", name=name).click()
    assert shown_sections(page) == [f"section-{index}"]
    expect(page.locator(f"#section-title-{index}")).to_be_focused()
    expect(page.locator("[data-walk-status]")).to_have_text(f"Section {index + 1} of {count}")


def test_the_builder_preview_walks_the_sections_in_the_page(
    live_server: LiveServer, draft: str, new_context: Callable[..., Any]
) -> None:
    page = logged_in(new_context, live_server)
    page.goto(live_server.url(DRAFT))
    walk = page.locator("[data-section-walk]")
    expect(walk).to_be_visible()
    expect(page.locator("[data-walk-note]")).to_be_hidden()
    assert shown_sections(page) == ["section-0"]
    expect(walk.get_by_role("button", name="Previous section")).to_be_disabled()
    log = watch(page)
    step(page, "Next section", 1)
    expect(page.locator("#only-awake")).to_be_visible()  # its display-logic note
    step(page, "Next section", 2)
    expect(walk.get_by_role("button", name="Next section")).to_be_disabled()
    step(page, "Previous section", 1)
    assert log.requests == [], "walking the preview asks the server nothing"
    # The preview follows the typing and stays at the section shown.
    page.locator("#b-s1-title-en").fill("Nights out")
    expect(page.locator("#preview-status")).to_have_text("Preview updated.")
    expect(page.locator("#section-title-1")).to_have_text("Nights out")
    assert shown_sections(page) == ["section-1"]
    # The buttons are outside the disabled fieldset; everything in it stays disabled.
    assert page.locator(".preview-frame [data-step]").count() == 0
    assert page.locator(".preview-frame button:enabled, .preview-frame input:enabled").count() == 0
    found = {}
    for language in LANGUAGES:
        page.goto(live_server.url(f"{DRAFT}?lang={language}"))
        page.locator("[data-section-walk] [data-step='1']").click()
        assert shown_sections(page) == ["section-1"]
        found[language] = layout_problems(page, PHONE)
    assert not any(found.values()), found


def test_without_javascript_the_preview_page_walks_by_links(
    live_server: LiveServer, draft: str, new_context: Callable[..., Any]
) -> None:
    page = logged_in(new_context, live_server, java_script_enabled=False)
    page.goto(live_server.url(DRAFT))
    expect(page.locator("[data-section-walk]")).to_be_hidden()
    assert shown_sections(page) == ["section-0", "section-1", "section-2"]
    with page.expect_navigation():
        page.get_by_role("link", name="Walk through the sections on the preview page").click()
    assert page.url.endswith(f"{DRAFT}/preview")
    assert shown_sections(page) == ["section-0"]
    with page.expect_navigation():
        page.get_by_role("link", name="Next section").click()
    assert page.url.endswith("preview?section=2") and shown_sections(page) == ["section-1"]
    expect(page.locator("#section-title-1")).to_be_focused()
    with page.expect_navigation():
        page.get_by_role("link", name="Next section").click()
    assert shown_sections(page) == ["section-2"]
    expect(page.get_by_role("link", name="Next section")).to_have_count(0)
    with page.expect_navigation():
        page.get_by_role("link", name="Previous section").click()
    assert page.url.endswith("preview?section=2")


def test_the_walked_preview_page_passes_axe_and_fits_a_phone(
    live_server: LiveServer, draft: str, new_context: Callable[..., Any]
) -> None:
    """The page has no script of its own: axe (a script) runs on it as served."""
    page = logged_in(new_context, live_server)
    found = {}
    for language in LANGUAGES:
        for at in ("", "&section=2", "&section=3"):
            page.goto(live_server.url(f"{DRAFT}/preview?lang={language}{at}"))
            found[language, at] = layout_problems(page, PHONE)
    assert not any(found.values()), found
