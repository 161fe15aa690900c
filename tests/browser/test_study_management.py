"""Managing a study in Chromium against gunicorn: the study page with its new controls,
the confirmation pages of deleting a draft and a survey (and a wrong address typed) pass
axe in English, Korean and Chinese and fit a phone; then the owner deletes a survey by
typing its address, and neither the database file nor its WAL holds its answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, layout_problems
from tests.support.stored import database_bytes

# A flow that stores: served on PostgreSQL too.
pytestmark = pytest.mark.both_backends

OWNER = "rosalind"
VIEWER = "maurice"
PASSWORD = "a fifth horse battery"
SURVEY = "lab-habits"
DRAFT = "lab-sketch"
PLAIN_ANSWER = "918273"  # a plain number is stored as given: its bytes can be looked for
DEFINITION = f"""\
slug: {SURVEY}
title: Lab habits, a survey whose title is long enough to wrap on a phone
questions:
  - {{key: cheated, text: "Have you ever made up a measurement?", type: yes_no}}
  - {{key: code, text: "Your participant code", type: number, min: 0, max: 999999,
      sensitive: false}}
"""
LANGUAGES = ("en", "ko", "zh")
PHONE = {"width": 375, "height": 740}


@pytest.fixture(scope="module")
def study(live_server: LiveServer) -> LiveServer:
    """rosalind owns the survey, answered twice, shared with maurice, and a draft."""
    for name in (OWNER, VIEWER):
        live_server.cli("create-researcher", name, "--password-stdin", stdin=PASSWORD + "\n")
    for slug, extra in ((SURVEY, []), (DRAFT, ["--draft"])):
        path = live_server.workdir / f"{slug}.yaml"
        path.write_text(DEFINITION.replace(f"slug: {SURVEY}", f"slug: {slug}"), encoding="utf-8")
        live_server.cli("import-survey", "--owner", OWNER, *extra, str(path))
    live_server.cli("share", SURVEY, VIEWER)
    return live_server


def logged_in(new_context: Callable[..., Any], server: LiveServer) -> Any:
    page = new_context().new_page()
    page.goto(server.url("/login"))
    page.fill("#username", OWNER)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    return page


def answer(new_context: Callable[..., Any], server: LiveServer) -> None:
    """A respondent without JavaScript, as the page's form posts it."""
    page = new_context(java_script_enabled=False).new_page()
    page.goto(server.url(f"/s/{SURVEY}"))
    page.check('input[name="cheated"][value="y"]')
    page.fill('input[name="code"]', PLAIN_ANSWER)
    with page.expect_navigation():
        page.click('button[type="submit"]')
    expect(page.locator("h1")).to_have_text("Thank you")


def stored_bytes(server: LiveServer) -> bytes:
    return database_bytes(server.database)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_study_page_and_the_deletion_pages_pass_axe(
    study: LiveServer, new_context: Callable[..., Any], language: str
) -> None:
    page = logged_in(new_context, study)
    found = {}
    for name, path in {
        "study page": f"/research/surveys/{SURVEY}/study",
        "draft's study page": f"/research/surveys/{DRAFT}/study",
        "delete the survey?": f"/research/surveys/{SURVEY}/delete",
        "delete the draft?": f"/research/surveys/{DRAFT}/delete",
    }.items():
        response = page.goto(study.url(f"{path}?lang={language}"))
        assert response is not None and response.status == 200, name
        found[name] = layout_problems(page, PHONE)
    page.goto(study.url(f"/research/surveys/{SURVEY}/delete?lang={language}"))
    page.fill("#slug", "not-this-one")
    with page.expect_navigation() as refused:
        page.locator("form.study-form button[type=submit]").click()
    assert refused.value.status == 400
    expect(page.locator(".errors")).to_be_visible()
    found["wrong address typed"] = layout_problems(page, PHONE)
    page.goto(study.url(f"/research/surveys/{SURVEY}/study?lang={language}"))
    # A day before today: the date input's min stops it in the browser; past that (an old
    # browser), the server refuses it on the page.
    page.eval_on_selector("#retain_until", "input => input.removeAttribute('min')")
    page.fill("#retain_until", "2000-01-01")
    with page.expect_navigation() as past:
        page.locator("form[action*='/retention'] button").click()
    assert past.value.status == 400
    found["retention refused"] = layout_problems(page, PHONE)
    assert not any(found.values()), found


def test_the_owner_deletes_a_survey_by_typing_its_address(
    study: LiveServer, new_context: Callable[..., Any]
) -> None:
    for _ in range(2):
        answer(new_context, study)
    assert PLAIN_ANSWER.encode() in stored_bytes(study)
    page = logged_in(new_context, study)
    page.goto(study.url(f"/research/surveys/{SURVEY}/study"))
    with page.expect_navigation():
        page.get_by_role("link", name="Delete the survey and its data…").click()
    expect(page.locator("ul.holdings")).to_contain_text("2 responses")
    page.get_by_label("To confirm, type the survey's address name:").fill(SURVEY[:-1])
    with page.expect_navigation():
        page.get_by_role("button", name="Delete the survey and its data").click()
    expect(page.locator(".errors")).to_contain_text("nothing was deleted")
    assert PLAIN_ANSWER.encode() in stored_bytes(study)

    page.get_by_label("To confirm, type the survey's address name:").fill(SURVEY)
    with page.expect_navigation():
        page.get_by_role("button", name="Delete the survey and its data").click()
    assert page.url.endswith("/research/")
    expect(page.locator(".messages")).to_contain_text("is deleted, with its 2 responses")
    expect(page.locator(f"tr[data-slug={SURVEY}]")).to_have_count(0)
    assert PLAIN_ANSWER.encode() not in stored_bytes(study)
    gone = page.goto(study.url(f"/research/surveys/{SURVEY}"))
    assert gone is not None and gone.status == 404
