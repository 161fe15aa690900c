"""The survey builder in real Chromium against the real server.

A researcher builds a survey in English and Korean (yes/no, choice, number and a plain
covariate) with the builder's buttons, watches the live preview follow the typing (with
the ledger's total beside it, every mistake marked at its field), saves the draft and
opens its preview page. axe-core finds no WCAG 2.1 A/AA violation on the builder (also
with several errors shown) or the preview page in any language, and neither scrolls
sideways on a 320 px wide screen. Without JavaScript the same buttons still build the
survey. Five questions fold to one line each (the page under half its unfolded 5,727 px
at 1280 px); number boxes show on number questions only; a question moves up and down,
with and without JavaScript, coming back at its new place with its button focused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import DESKTOP, LiveServer, layout_problems, watch

USERNAME = "builder-ada"
PASSWORD = "correct horse battery"
SLUG = "builder-life"
BUILDER = "/research/builder/"
NARROW = {"width": 320, "height": 640}


@pytest.fixture(scope="module")
def account(live_server: LiveServer) -> str:
    live_server.cli("create-researcher", USERNAME, "--password-stdin", stdin=PASSWORD + "\n")
    return USERNAME


def logged_in_page(new_context: Callable[..., Any], server: LiveServer, **options: Any) -> Any:
    page = new_context(**options).new_page()
    page.goto(server.url(BUILDER))
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    expect(page.locator("h1")).to_have_text("New survey")
    return page


def press(page: Any, name: str) -> None:
    """Press a builder button (the first of that name) and wait for the page it posts to."""
    with page.expect_navigation():
        page.get_by_role("button", name=name, exact=True).first.click()


def unfold(page: Any, index: int) -> None:
    """Open question ``index`` (folded to one line) as a researcher does: its summary."""
    details = page.locator(f"#b-q{index} > details")
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    expect(page.locator(f"#b-q{index}-key")).to_be_visible()


def build_bilingual_survey(page: Any) -> None:
    """English and Korean; a yes/no, a choice, a number question and a plain covariate."""
    page.get_by_role("checkbox", name="한국어").check()
    press(page, "Preview")  # shows the Korean boxes
    for button in ("Add a choice question", "Add a number question", "Add a choice question"):
        press(page, button)
    for index in range(4):
        unfold(page, index)
    page.fill("#b-slug", SLUG)
    page.fill("#b-title-en", "Campus life")
    page.fill("#b-title-ko", "캠퍼스 생활")
    texts = [
        ("Have you cheated on an exam?", "시험에서 부정행위를 한 적이 있습니까?"),
        ("Which have you used?", "무엇을 사용했습니까?"),
        ("Drinks last week?", "지난주 음주 횟수?"),
        ("Year of study?", "학년?"),
    ]
    keys = ["cheated", "substance", "drinks", "year"]
    for index, (key, (english, korean)) in enumerate(zip(keys, texts, strict=True)):
        page.fill(f"#b-q{index}-key", key)
        page.fill(f"#b-q{index}-text-en", english)
        page.fill(f"#b-q{index}-text-ko", korean)
    page.fill("#b-q0-epsilon", "0.5")
    page.fill("#b-q1-options-en", "None\nCannabis\nStimulants")
    page.fill("#b-q1-options-ko", "없음\n대마\n각성제")
    page.fill("#b-q2-min", "0")
    page.fill("#b-q2-max", "50")
    page.fill("#b-q3-options-en", "1\n2\n3\n4+")
    page.fill("#b-q3-options-ko", "1학년\n2학년\n3학년\n4학년 이상")
    page.locator("#b-q3-sensitive").uncheck()


def test_build_preview_live_and_save_a_bilingual_survey(
    live_server: LiveServer, account: str, new_context: Callable[..., Any]
) -> None:
    page = logged_in_page(new_context, live_server)
    log = watch(page)
    build_bilingual_survey(page)
    panel = page.locator("#preview-panel")
    status = page.locator("#preview-status")
    # The live preview: typing alone, no button, brings the respondent's page and the ledger.
    expect(panel.locator("h1")).to_have_text("Campus life")
    expect(status).to_have_text("Preview updated.")
    expect(panel).to_contain_text("Have you cheated on an exam?")
    # ε: 0.5 + 1 (choice) + 1 (number) = 2.5; the covariate costs nothing.
    expect(panel.locator(".ledger-total")).to_contain_text(
        "3 randomized questions: a respondent who answers everything reveals at most "
        "ε = 2.50 in total."
    )
    expect(panel.locator(".planner")).to_contain_text("Respondents needed")
    page.fill("#b-q0-text-en", "Have you ever cheated on an exam?")
    expect(panel).to_contain_text("Have you ever cheated on an exam?")
    page.select_option("#b-preview-language", "ko")
    expect(panel.locator("h1")).to_have_text("캠퍼스 생활")
    expect(panel).to_contain_text("4학년 이상")
    # Mistakes are marked at their fields as the researcher types, all of them, with the
    # import's words.
    page.fill("#b-q2-max", "0")
    page.fill("#b-q0-epsilon", "abc")
    expect(page.locator("#b-q2-max-error")).to_have_text(
        "must be greater than min (got min 0, max 0)"
    )
    expect(page.locator("#b-q0-epsilon-error")).to_have_text(
        "must be a number from 0.01 to 10 with at most 3 decimals (got the text 'abc')"
    )
    expect(page.locator("#b-q2-max")).to_have_attribute("aria-invalid", "true")
    expect(panel.locator(".preview-missing li")).to_have_count(2)
    expect(status).to_contain_text("The preview waits for a valid survey")
    page.fill("#b-q2-max", "50")
    expect(page.locator("#b-q2-max-error")).to_have_count(0)
    expect(page.locator("#b-q0-epsilon-error")).to_have_count(1)
    page.fill("#b-q0-epsilon", "0.5")
    expect(page.locator("#b-q0-epsilon-error")).to_have_count(0)
    expect(panel.locator("h1")).to_have_text("캠퍼스 생활")
    # The type decides which fields show.
    expect(page.locator("#b-q0-options-en")).to_be_hidden()
    page.select_option("#b-q0-type", "choice")
    expect(page.locator("#b-q0-options-en")).to_be_visible()
    page.select_option("#b-q0-type", "yes_no")
    expect(page.locator("#b-q0-options-en")).to_be_hidden()
    # The preview can send nothing: its button is disabled.
    expect(panel.locator("#survey-form button[type=submit]")).to_be_disabled()

    press(page, "Save draft")
    assert page.url.endswith(f"/research/builder/drafts/{SLUG}?saved=1")
    expect(page.locator(".messages")).to_have_text("Draft saved.")
    assert not log.page_errors and not log.console_errors, (log.page_errors, log.console)
    assert not [url for url, _body in log.posts() if "/s/" in url], "the preview posted answers"

    page.get_by_role("link", name="Preview the saved draft on its own page").click()
    expect(page.locator("#preview-panel, .preview-page").locator("h1")).to_have_text("Campus life")
    expect(page.locator(".ledger-total")).to_contain_text("ε = 2.50")


@pytest.fixture(scope="module")
def saved_draft(live_server: LiveServer, account: str, browser: Any) -> str:
    """The bilingual draft, saved once for the layout and axe tests (with JavaScript off:
    the builder's buttons alone)."""
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1000, "height": 800}
    )
    try:
        page = context.new_page()
        page.goto(live_server.url(BUILDER))
        page.get_by_label("Username").fill(USERNAME)
        page.get_by_label("Password").fill(PASSWORD)
        with page.expect_navigation():
            page.get_by_role("button", name="Log in").click()
        build_bilingual_survey(page)
        page.fill("#b-slug", SLUG + "-nojs")
        press(page, "Preview")
        expect(page.locator("#preview-panel h1")).to_have_text("Campus life")
        press(page, "Save draft")
        assert page.url.endswith(f"/research/builder/drafts/{SLUG}-nojs?saved=1")
    finally:
        context.close()
    return SLUG + "-nojs"


@pytest.mark.parametrize("language", ["en", "ko", "zh"])
def test_builder_and_preview_pages_pass_axe_and_fit_a_phone(
    live_server: LiveServer,
    saved_draft: str,
    new_context: Callable[..., Any],
    language: str,
) -> None:
    page = logged_in_page(new_context, live_server)
    pages = {
        "new survey": BUILDER,
        "draft": f"{BUILDER}drafts/{saved_draft}",
        "draft preview": f"{BUILDER}drafts/{saved_draft}/preview",
    }
    page.set_viewport_size(DESKTOP)
    problems = {}
    for name, path in pages.items():
        page.goto(live_server.url(f"{path}?lang={language}"))
        problems[name] = layout_problems(page, NARROW)
    # An error state: saving with three mistakes, each shown at its field, with a summary.
    page.goto(live_server.url(f"{BUILDER}drafts/{saved_draft}?lang={language}"))
    page.fill("#b-slug", "Not A Slug")
    for index in (1, 2):
        unfold(page, index)
    page.fill("#b-q1-text-ko", "")
    page.fill("#b-q2-max", "0")
    with page.expect_navigation():  # "Save draft" in the page's language
        page.locator('button[name="save"]').first.click()
    expect(page.locator("#builder-errors")).to_be_focused()
    expect(page.locator("#builder-errors li")).to_have_count(3)
    for field in ("b-slug", "b-q1-text-ko", "b-q2-max"):
        expect(page.locator(f"#{field}-error")).to_be_visible()
    problems["error"] = layout_problems(page, NARROW)
    assert not any(problems.values()), problems


def answer_in_korean_with_the_keyboard(page: Any) -> None:
    """The built survey from the skip link to the submit button, keys only."""
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(page.locator("details.protection summary")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator('input[name="cheated"][value="y"]')).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect(page.locator('input[name="substance"][value="0"]')).to_be_focused()
    page.keyboard.press("ArrowDown")  # 대마
    page.keyboard.press("Tab")
    expect(page.locator('input[type="number"][name="drinks"]')).to_be_focused()
    page.keyboard.type("3")
    page.keyboard.press("Tab")
    expect(page.locator('input[name="year"][value="0"]')).to_be_focused()
    page.keyboard.press("ArrowDown")  # 2학년
    page.keyboard.press("Tab")
    expect(page.locator('button[type="submit"]')).to_be_focused()
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_a_built_survey_is_opened_answered_in_korean_on_a_phone_and_estimated(
    live_server: LiveServer, account: str, new_context: Callable[..., Any], screenshots: Path
) -> None:
    """The issue's whole journey: build (yes/no, choice, number, a covariate; English and
    Korean), preview, open from the dashboard, answer in Korean on a 375 px phone with the
    keyboard alone, and read the estimates on the dashboard."""
    slug = SLUG + "-journey"
    researcher = logged_in_page(new_context, live_server)
    build_bilingual_survey(researcher)
    researcher.fill("#b-slug", slug)
    expect(researcher.locator("#preview-panel h1")).to_have_text("Campus life")
    researcher.set_viewport_size({"width": 1280, "height": 900})
    researcher.evaluate("window.scrollTo(0, 0)")
    researcher.screenshot(path=str(screenshots / "builder.png"))
    press(researcher, "Save draft")
    researcher.goto(live_server.url(f"/research/surveys/{slug}/study"))
    expect(researcher.locator("#status")).to_contain_text("draft")
    with researcher.expect_navigation():
        researcher.get_by_role("link", name="Open the survey…").click()
    press(researcher, "Yes, open the survey")
    expect(researcher.locator(".messages")).to_contain_text("The survey is open")

    phone = new_context(viewport={"width": 375, "height": 667}, locale="ko-KR").new_page()
    log = watch(phone)
    phone.goto(live_server.url(f"/s/{slug}"))  # Korean from the browser's Accept-Language
    expect(phone.locator("html")).to_have_attribute("lang", "ko")
    expect(phone.locator("h1")).to_have_text("캠퍼스 생활")
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    phone.screenshot(path=str(screenshots / "survey-korean-phone.png"))
    answer_in_korean_with_the_keyboard(phone)
    expect(phone.locator("html")).to_have_attribute("lang", "ko")
    expect(phone.locator("details.stored")).to_have_count(1)
    assert not log.page_errors and not log.console_errors, (log.page_errors, log.console)
    [(_url, body)] = log.posts()
    assert "randomized=client" in body and "year=1" in body  # the covariate as given

    researcher.goto(live_server.url(f"/research/surveys/{slug}"))
    for key, text in (
        ("cheated", "Have you cheated on an exam?"),
        ("substance", "Which have you used?"),
        ("drinks", "Drinks last week?"),
    ):
        expect(researcher.locator(f"#q-{key}")).to_have_text(text)
        expect(researcher.locator(f"#q-{key} + .note")).to_contain_text("n = 1")


FIVE = """\
slug: five-questions
title: Five questions
description: A draft with a question of every type, and two more.
questions:
  - key: cheated
    text: Have you cheated on an exam in the past year?
    epsilon: 0.5
  - key: substance
    text: Which of these have you used most often in the past month?
    type: choice
    options: [None of these, Cannabis, Prescription stimulants, Sleeping pills, Something else]
  - key: drinks
    text: How many alcoholic drinks did you have last week?
    type: number
    min: 0
    max: 50
  - key: year
    text: Which year of study are you in?
    type: choice
    options: ["1", "2", "3", "4+"]
    sensitive: false
  - key: stress
    text: Have you felt overwhelmed by stress in the past two weeks?
    required: false
"""
WIDE = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def five_questions(live_server: LiveServer, account: str) -> str:
    """The builder's address for a saved draft of FIVE."""
    path = live_server.workdir / "five-questions.yaml"
    path.write_text(FIVE, encoding="utf-8")
    live_server.cli("import-survey", "--owner", USERNAME, "--draft", str(path))
    return f"{BUILDER}drafts/five-questions"


def test_five_questions_fold_to_one_line_each_and_the_page_to_well_under_half(
    live_server: LiveServer, five_questions: str, new_context: Callable[..., Any]
) -> None:
    page = logged_in_page(new_context, live_server, viewport=WIDE)
    page.goto(live_server.url(five_questions))
    summaries = page.locator(".question-fold > summary")
    expect(summaries).to_have_count(5)
    expect(summaries.nth(2)).to_contain_text("A whole number in a range")
    line = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('.question-fold > summary'))"
        ".lineHeight)"
    )
    heights = summaries.evaluate_all("all => all.map(s => s.getBoundingClientRect().height)")
    assert all(height < 2 * line for height in heights), (heights, line)
    expect(page.locator("#b-q0-key")).to_be_hidden()
    height = page.evaluate("document.documentElement.scrollHeight")
    unfold(page, 2)
    expect(page.locator("#b-q2-min")).to_be_visible()
    expect(page.locator("#b-q1-key")).to_be_hidden()
    for index in (0, 1, 3, 4):
        unfold(page, index)
    unfolded = page.evaluate("document.documentElement.scrollHeight")
    assert height < unfolded / 2, (height, unfolded)


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_number_boxes_show_only_on_number_questions(
    live_server: LiveServer,
    five_questions: str,
    new_context: Callable[..., Any],
    javascript: bool,
) -> None:
    page = logged_in_page(new_context, live_server, java_script_enabled=javascript)
    page.goto(live_server.url(five_questions))
    for index in range(5):
        unfold(page, index)
    shown = {
        "min": [page.locator(f"#b-q{i}-min").is_visible() for i in range(5)],
        "max": [page.locator(f"#b-q{i}-max").is_visible() for i in range(5)],
        "options": [page.locator(f"#b-q{i}-options-en").is_visible() for i in range(5)],
        "sensitive": [page.locator(f"#b-q{i}-sensitive").is_visible() for i in range(5)],
    }
    assert shown == {
        "min": [False, False, True, False, False],
        "max": [False, False, True, False, False],
        "options": [False, True, False, True, False],
        "sensitive": [False, True, True, True, False],
    }
    # Each group says which types it is for, in the type menu's words.
    expect(page.locator("#b-q2 fieldset.range legend")).to_have_text(
        "Only for questions of type: A whole number in a range"
    )
    if not javascript:
        return
    display = "q => getComputedStyle(document.querySelector(q)).display"
    assert page.evaluate(display, "#b-q0 fieldset.range") == "none"
    assert page.evaluate(display, "#b-q1 fieldset.range") == "none"
    # With JavaScript the fields follow the type menu, and so does the folded line.
    page.select_option("#b-q0-type", "number")
    expect(page.locator("#b-q0-min")).to_be_visible()
    expect(page.locator("#b-q0 .question-type")).to_have_text("A whole number in a range")
    page.select_option("#b-q0-type", "choice")
    expect(page.locator("#b-q0-min")).to_be_hidden()
    expect(page.locator("#b-q0-options-en")).to_be_visible()
    page.select_option("#b-q0-type", "yes_no")
    expect(page.locator("#b-q0-options-en")).to_be_hidden()
    expect(page.locator("#b-q0-sensitive")).to_be_hidden()


def question_keys(page: Any) -> list[str]:
    return [page.locator(f"#b-q{i}-key").input_value() for i in range(5)]


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_question_moves_up_and_down_keeping_its_place_on_screen_and_what_was_typed(
    live_server: LiveServer,
    five_questions: str,
    new_context: Callable[..., Any],
    javascript: bool,
) -> None:
    page = logged_in_page(new_context, live_server, viewport=WIDE, java_script_enabled=javascript)
    page.goto(live_server.url(five_questions))
    unfold(page, 2)
    page.fill("#b-q2-text-en", "Drinks last week (typed, not saved)?")
    with page.expect_navigation():
        page.get_by_role("button", name="Move question 3 up").click()
    # Back at the question's new place: the button pressed, there, in sight and focused,
    # with the question's line above it.
    assert page.url.endswith("/drafts/five-questions#b-q1-move_up"), page.url
    assert question_keys(page) == ["cheated", "drinks", "substance", "year", "stress"]
    expect(page.locator("#b-q1 .question-text")).to_have_text(
        "Drinks last week (typed, not saved)?"
    )
    expect(page.locator("#b-q1 summary")).to_be_in_viewport()
    expect(page.locator("#b-q1-move_up")).to_be_focused()
    # So the keyboard presses it again. Now first, it has only "Move down", focused.
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith("#b-q0-move_down")
    assert question_keys(page) == ["drinks", "cheated", "substance", "year", "stress"]
    expect(page.locator("#b-q0-move_up")).to_have_count(0)
    expect(page.locator("#b-q0-move_down")).to_be_focused()
    expect(page.locator("#b-q4-move_down")).to_have_count(0)
    with page.expect_navigation():
        page.get_by_role("button", name="Move question 1 down").click()
    assert question_keys(page) == ["cheated", "drinks", "substance", "year", "stress"]
    expect(page.locator("#b-q1 .question-text")).to_have_text(
        "Drinks last week (typed, not saved)?"
    )
