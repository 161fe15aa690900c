"""A panel participant in Chromium against gunicorn, with JavaScript and without: from a
link carrying their participant id to the completion code, or back to the panel.

The id is a unique marker. After the first GET (whose address the panel made), nothing
carries it: no request's address, headers (Referer included) or body, no response's
headers or body, not gunicorn's access log nor its error log, not the database file nor
its WAL.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, answer, axe_violations, sideways_overflow, submit
from tests.support.traffic import Traffic, assert_marker_nowhere

CODE = "C1AB2CD3"
REDIRECT = "https://app.prolific.com/submissions/complete?cc=C1AB2CD3"
SLUG = "panel-code"
RETURN_SLUG = "panel-return"
DEFINITION = """\
slug: {slug}
languages: [en, ko, zh]
title: {{en: Panel study, ko: 패널 연구, zh: 小组研究}}
consent: {{en: "Taking part is voluntary.", ko: "참여는 자발적입니다.", zh: "参与完全自愿。"}}
thank_you:
  en: "Thank you for taking part.\\n\\nResults appear in June."
  ko: "참여해 주셔서 감사합니다.\\n\\n결과는 6월에 공개됩니다."
  zh: "感谢您的参与。\\n\\n结果将于六月公布。"
completion: {{{completion}}}
questions:
  - key: cheated
    text: {{en: "Have you cheated on an exam?", ko: "시험에서 부정행위를 한 적이 있습니까?",
           zh: "您是否在考试中作弊过？"}}
"""
PHONE = {"width": 375, "height": 740}


@pytest.fixture(scope="module")
def server(live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    folder = tmp_path_factory.mktemp("panel-surveys")
    for slug, completion in ((SLUG, f"code: {CODE}"), (RETURN_SLUG, f"redirect: '{REDIRECT}'")):
        path = Path(folder) / f"{slug}.yaml"
        path.write_text(DEFINITION.format(slug=slug, completion=completion), encoding="utf-8")
        live_server.cli("import-survey", str(path))
    return live_server


def panel_link(server: LiveServer, slug: str, marker: str) -> str:
    ids = f"PROLIFIC_PID={marker}&STUDY_ID=S{marker}&SESSION_ID=X{marker}&workerId=W{marker}"
    return server.url(f"/s/{slug}?{ids}")


def answer_from_panel(page: Any, server: LiveServer, slug: str, marker: str) -> None:
    """From the panel's link through the consent step (in Korean, by the switcher, and
    back to English) to the thank-you page."""
    page.goto(panel_link(server, slug, marker))
    page.click('nav.languages a[hreflang="ko"]')
    expect(page.locator("h1")).to_have_text("패널 연구")
    page.click('nav.languages a[hreflang="en"]')
    page.click("form button[type=submit]")  # I agree
    answer(page, {"cheated": "yes"})
    assert submit(page).status == 200
    expect(page.locator("h1")).to_have_text("Thank you")


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_panel_participant_gets_the_code_and_their_id_goes_nowhere(
    server: LiveServer, new_context: Callable[..., Any], javascript: bool
) -> None:
    marker = f"pid{secrets.token_hex(8)}"
    page = new_context(java_script_enabled=javascript).new_page()
    traffic = Traffic(page)
    answer_from_panel(page, server, SLUG, marker)
    expect(page.locator("#completion-code")).to_have_text(CODE)
    expect(page.get_by_text("Results appear in June.")).to_be_visible()
    copy = page.locator("button.copy")
    if javascript:
        expect(copy).to_be_visible()
    else:
        expect(copy).to_be_hidden()
    assert_marker_nowhere(server, traffic, marker, SLUG)


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_panel_participant_is_sent_back_to_the_panel(
    server: LiveServer, new_context: Callable[..., Any], javascript: bool
) -> None:
    marker = f"pid{secrets.token_hex(8)}"
    context = new_context(java_script_enabled=javascript)
    panel_requests: list[Any] = []

    def at_the_panel(route: Any) -> None:
        panel_requests.append(route.request)
        route.fulfill(status=200, body="panel", content_type="text/plain")

    context.route("https://app.prolific.com/**", at_the_panel)
    page = context.new_page()
    if javascript:
        page.clock.install()  # the page's few seconds pass when the test says so
    traffic = Traffic(page)
    answer_from_panel(page, server, RETURN_SLUG, marker)
    link = page.locator("#completion-link")
    expect(link).to_have_attribute("href", REDIRECT)
    if javascript:
        expect(page.locator("#completion-note")).to_be_visible()
        page.clock.run_for(6_000)
        page.wait_for_url(REDIRECT)
    else:
        expect(page.locator("#completion-note")).to_be_hidden()
        page.wait_for_timeout(6_000)  # nothing moves without JavaScript
        assert not panel_requests
        link.click()
        page.wait_for_url(REDIRECT)
    (arrived,) = panel_requests
    assert "referer" not in arrived.all_headers()
    assert_marker_nowhere(server, traffic, marker, RETURN_SLUG)


def test_staying_on_the_page_stops_the_return(
    server: LiveServer, new_context: Callable[..., Any]
) -> None:
    page = new_context().new_page()
    page.clock.install()  # the page's few seconds pass when the test says so
    answer_from_panel(page, server, RETURN_SLUG, f"pid{secrets.token_hex(8)}")
    page.click("#completion-stay")
    expect(page.locator("#completion-note")).to_be_hidden()
    expect(page.locator("#completion-link")).to_be_focused()
    page.clock.run_for(6_000)
    page.wait_for_timeout(500)  # time for a navigation the timer would have started
    assert page.url == server.url(f"/s/{RETURN_SLUG}?lang=en")


@pytest.mark.parametrize("language", ["en", "ko", "zh"])
def test_the_thank_you_page_with_a_code_passes_axe_and_fits_a_phone(
    server: LiveServer, new_context: Callable[..., Any], language: str
) -> None:
    page = new_context(viewport=PHONE).new_page()
    page.goto(server.url(f"/s/{SLUG}?agree=yes&lang={language}"))
    answer(page, {"cheated": "no"})
    submit(page)
    expect(page.locator("#completion-code")).to_have_text(CODE)
    assert axe_violations(page) == []
    assert sideways_overflow(page) == 0
