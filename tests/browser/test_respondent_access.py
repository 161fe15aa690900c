"""Every respondent page, in Chromium, in English, Korean and Chinese: accessible (axe-core,
WCAG 2.1 A and AA), usable with the keyboard alone, on a 320 px screen, and safe on a
shared computer (Back after a refused form restores no answer).

Narrow screens: the pages are checked at a 320 px wide viewport, the width WCAG's reflow
criterion asks for; 200% zoom of a 640 px window lays out the same 320 CSS pixels, so one
check covers both. "No sideways scrolling" is ``scrollWidth <= innerWidth``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from survey_app.web import form_tokens
from tests.support.browser import SECRET_KEY, LiveServer, axe_violations, sideways_overflow, watch

LANGUAGES = ("en", "ko", "zh")
SLUG = "access-check"
DEFINITION = f"""\
slug: {SLUG}
title: Accessibility check
description: One question of each kind, answered with the keyboard.
consent: Taking part is voluntary. You may stop at any time.
contact: study@example.edu
questions:
  - {{key: cheated, text: "Have you cheated on an exam?", type: yes_no, epsilon: 1}}
  - {{key: substance, text: "Which have you used?", type: choice, mechanism: grr,
      options: [None of these, Cannabis, Something else]}}
  - {{key: drinks, text: "How many drinks last week?", type: number, min: 0, max: 30}}
  - {{key: stress, text: "Have you felt stressed?", type: yes_no, required: false}}
"""
ANSWER = f"/s/{SLUG}?agree=yes"
PAGES_WITHOUT_STATE = {
    "index": ("/", 200),
    "consent": (f"/s/{SLUG}", 200),
    "survey": (ANSWER, 200),
    "draft": ("/s/access-draft", 404),
    "closed": ("/s/access-closed", 403),
    "not found": ("/s/no-such-survey", 404),
}


@pytest.fixture(scope="module")
def server(live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """The live server with the survey above, one in draft and one closed."""
    folder = tmp_path_factory.mktemp("access-surveys")
    for slug, status in ((SLUG, "open"), ("access-draft", "draft"), ("access-closed", "closed")):
        path = Path(folder) / f"{slug}.yaml"
        path.write_text(DEFINITION.replace(f"slug: {SLUG}", f"slug: {slug}"))
        live_server.cli("import-survey", str(path), *(["--draft"] if status == "draft" else []))
        if status == "closed":
            live_server.cli("close", slug)
    return live_server


def with_language(path: str, language: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={language}"


def answer_with_keyboard(page: Any) -> None:
    """The access-check survey from the skip link to the submit button, keys only: Tab to
    each group, arrows to choose, Space to check, digits to type, Enter to send."""
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    page.keyboard.press("Enter")  # skip the header: focus moves to the main content
    page.keyboard.press("Tab")  # the explanation's summary
    expect(page.locator("details.protection summary")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator('input[name="cheated"][value="y"]')).to_be_focused()
    page.keyboard.press("Space")  # "Yes"
    page.keyboard.press("Tab")
    expect(page.locator('input[name="substance"][value="0"]')).to_be_focused()
    page.keyboard.press("ArrowDown")  # "Cannabis" (arrows move and check)
    page.keyboard.press("Tab")
    expect(page.locator('input[type="number"][name="drinks"]')).to_be_focused()
    page.keyboard.type("7")
    page.keyboard.press("Tab")  # "Have you felt stressed?" is optional: left unanswered
    expect(page.locator('input[name="stress"][value="y"]')).to_be_focused()
    page.keyboard.press("Shift+Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # implicit submission from the number field


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_respondent_page_passes_axe(
    new_context: Callable[..., Any], server: LiveServer, language: str
) -> None:
    page = new_context().new_page()
    found: dict[str, list[str]] = {}
    for name, (path, status) in PAGES_WITHOUT_STATE.items():
        response = page.goto(server.url(with_language(path, language)))
        assert response is not None and response.status == status, name
        if name == "survey":
            page.locator("details.protection summary").click()  # the explanation open too
        found[name] = axe_violations(page)

    # A refused form (its token expired), with its problems listed.
    page.goto(server.url(with_language(ANSWER, language)))
    page.locator('input[name="submission_id"]').evaluate("(e, v) => e.value = v", expired(SLUG))
    answer_with_keyboard(page)
    expect(page.locator("#form-errors")).to_be_visible()
    found["refused form"] = axe_violations(page)

    # Thank-you page, its stored answers shown, then "already answered".
    answer_with_keyboard(page)
    expect(page.locator("h1")).to_have_count(1)
    page.locator("details.stored summary").click()
    found["thank you"] = axe_violations(page)
    page.goto(server.url(with_language(ANSWER, language)))
    found["already answered"] = axe_violations(page)
    assert not any(found.values()), {name: v for name, v in found.items() if v}


def expired(slug: str) -> str:
    """A form token this server issued for ``slug`` two days ago: past its 24 hours."""
    real_clock = form_tokens.now
    form_tokens.now = lambda: time.time() - 2 * 24 * 3600
    try:
        return form_tokens.issue_form_token([SECRET_KEY], slug)
    finally:
        form_tokens.now = real_clock


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_whole_survey_answered_with_the_keyboard_alone_on_a_phone(
    new_context: Callable[..., Any], server: LiveServer, language: str
) -> None:
    page = new_context(viewport={"width": 320, "height": 640}).new_page()
    log = watch(page)
    page.goto(server.url(with_language(f"/s/{SLUG}", language)))
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    for _ in range(12):  # to the consent button, past the switcher and the explanation
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.type") == "submit":
            break
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith(f"agree=yes&lang={language}")
    answer_with_keyboard(page)
    assert page.locator("details.stored").count() == 1  # the thank-you page
    assert not log.page_errors and not log.console_errors
    [(_url, body)] = log.posts()
    assert "randomized=client" in body and "stress=" not in body  # skipped: not sent


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_fits_320_px_and_the_questions_come_first(
    new_context: Callable[..., Any], server: LiveServer, language: str
) -> None:
    """No sideways scrolling on any page; on the survey page the first question starts
    within the first screen, the explanation folded into its one-line summary."""
    page = new_context(viewport={"width": 320, "height": 640}).new_page()
    for name, (path, _status) in PAGES_WITHOUT_STATE.items():
        page.goto(server.url(with_language(path, language)))
        assert not sideways_overflow(page), f"{name} scrolls sideways at 320 px"
    page.goto(server.url(with_language(ANSWER, language)))
    first = page.locator("fieldset.question").first.bounding_box()
    assert first is not None and first["y"] < 640, "the first question is below the fold"
    page.locator("details.protection summary").click()
    expect(page.locator("details.protection p").first).to_be_visible()  # explanation kept
    assert not sideways_overflow(page)
    page.locator('input[name="cheated"][value="y"]').check()
    page.locator('input[name="substance"][value="1"]').check()
    page.locator('input[type="number"][name="drinks"]').fill("3")
    with page.expect_navigation():
        page.locator('button[type="submit"]').click()
    page.locator("details.stored summary").click()
    assert not sideways_overflow(page), "the thank-you page scrolls sideways at 320 px"


def test_the_focus_ring_contrasts_at_least_3_to_1(
    new_context: Callable[..., Any], server: LiveServer
) -> None:
    page = new_context().new_page()
    page.goto(server.url(ANSWER))
    page.keyboard.press("Tab")
    ring = page.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
                   return [s.outlineStyle, s.outlineWidth, s.outlineColor]; }"""
    )
    assert ring[0] == "solid" and float(ring[1].rstrip("px")) >= 3
    assert contrast(parse_rgb(ring[2]), (255, 255, 255)) >= 3
    assert contrast(parse_rgb(ring[2]), (0xF3, 0xF5, 0xF7)) >= 3  # the header's wash


def parse_rgb(css: str) -> tuple[int, int, int]:
    red, green, blue = (int(part) for part in css[css.index("(") + 1 : -1].split(",")[:3])
    return red, green, blue


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio of two sRGB colours."""

    def luminance(rgb: tuple[int, int, int]) -> float:
        linear = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def checked_or_filled(page: Any) -> list[str]:
    """Every input on the page that holds an answer: a checked radio, a typed or chosen value."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('form.survey input, form.survey select')]
                 .filter((e) => e.type !== 'hidden')
                 .filter((e) => e.checked || (e.type !== 'radio' && e.value !== ''))
                 .map((e) => e.name + '=' + (e.type === 'radio' ? e.value : e.value))"""
        )
    )


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
@pytest.mark.parametrize("refusal", ["expired form", "csrf refused"])
def test_back_after_a_refused_form_restores_no_answer(
    new_context: Callable[..., Any], server: LiveServer, javascript: bool, refusal: str
) -> None:
    """Answer, have the submission refused (a form token past its lifetime, or the CSRF
    session gone), press Back: not one input is checked or filled."""
    context = new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(server.url(ANSWER))
    page.locator('input[name="cheated"][value="y"]').check()
    page.locator('input[name="substance"][value="1"]').check()
    page.locator('input[name="stress"][value="n"]').check()
    number = page.locator('[name="drinks"]:enabled')
    if javascript:
        number.fill("7")
    else:
        number.select_option("07")
    assert len(checked_or_filled(page)) == 4
    if refusal == "expired form":
        page.locator('input[name="submission_id"]').evaluate("(e, v) => e.value = v", expired(SLUG))
    else:
        context.clear_cookies()  # the session holding the CSRF token is gone
    with page.expect_navigation() as navigation:
        page.locator('button[type="submit"]').click()
    assert navigation.value.status == 400
    expect(page.locator("#form-errors")).to_be_visible()
    assert checked_or_filled(page) == []  # the refused form comes back empty
    page.go_back()
    expect(page.locator("form.survey")).to_be_visible()
    assert page.url == server.url(ANSWER)
    assert checked_or_filled(page) == [], "Back brought true answers back"
