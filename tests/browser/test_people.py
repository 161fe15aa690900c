"""People in Chromium (issue 18, item 4): an administrator adds a researcher, copies the
single-use link, and the researcher sets a password in a browser of their own and logs
in; every new page (people, a question, the link, the account, setting a password and a
link that cannot be used) has no axe-core WCAG 2.1 A/AA violation and does not scroll
sideways on a 375 px phone, in English, Korean and Chinese. All without JavaScript.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, axe_violations, sideways_overflow

ADMIN = "people-admin"
COLLEAGUE = "people-bob"
PASSWORD = "an administrator's horse battery"
NEW_PASSWORD = "a colleague's new password"
LANGUAGES = ("en", "ko", "zh")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 700}


@pytest.fixture(scope="module")
def administrator(live_server: LiveServer) -> str:
    """An administrator (whichever test file made the first account) and a colleague."""
    live_server.cli("create-researcher", ADMIN, "--admin", "--password-stdin", stdin=PASSWORD)
    live_server.cli("create-researcher", COLLEAGUE, "--password-stdin", stdin=PASSWORD)
    return ADMIN


def log_in(page: Any, server: LiveServer, username: str, password: str) -> None:
    page.goto(server.url("/login"))
    page.fill("#username", username)
    page.fill("#password", password)
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.url.endswith("/research/"), page.url


def press(page: Any, name: str) -> Any:
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name=name).click()
    return navigation.value


def add_researcher(page: Any, username: str) -> str:
    """Add ``username`` from the People page as it is; the link the next page shows."""
    page.fill("#username", username)
    with page.expect_navigation():
        page.locator("form[action*='/research/people'] button").click()
    link = page.locator("textarea#link").input_value().strip()
    assert "/set-password/" in link, link
    return str(link)


def test_an_administrator_adds_a_researcher_who_sets_a_password_and_logs_in(
    live_server: LiveServer, administrator: str, new_context: Callable[..., Any]
) -> None:
    admin = new_context(java_script_enabled=False).new_page()
    log_in(admin, live_server, administrator, PASSWORD)
    with admin.expect_navigation():
        admin.get_by_role("link", name="People").click()
    expect(admin.locator("h1")).to_have_text("People")
    admin.get_by_label("Username of the new researcher").fill("people-carol")
    press(admin, "Add and make the link")
    expect(admin.locator("h1")).to_contain_text("people-carol")
    link = admin.locator("textarea#link").input_value().strip()
    assert link.startswith(live_server.url("/set-password/")), link

    colleague = new_context(java_script_enabled=False).new_page()
    assert colleague.goto(link).status == 200  # type: ignore[union-attr]
    colleague.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    colleague.get_by_label("New password, again").fill(NEW_PASSWORD)
    press(colleague, "Set the password")
    assert colleague.url == live_server.url("/login")
    log_in(colleague, live_server, "people-carol", NEW_PASSWORD)
    expect(colleague.get_by_role("link", name="Your account")).to_be_visible()
    expect(colleague.get_by_role("link", name="People")).to_have_count(0)
    assert colleague.goto(link).status == 410  # type: ignore[union-attr]

    admin.goto(live_server.url("/research/people"))
    row = admin.locator("tr[data-username='people-carol']")
    expect(row).to_contain_text("active")
    expect(admin.locator("table.events")).to_contain_text("password set from a link")


def problems_here(page: Any, name: str, problems: dict[tuple[str, int], Any]) -> None:
    """axe on a desktop and a 375 px phone; sideways scrolling on the phone."""
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        violations = axe_violations(page)
        overflow = sideways_overflow(page) if viewport is PHONE else 0
        if violations or overflow:
            problems[name, viewport["width"]] = (violations, overflow)
    page.set_viewport_size(DESKTOP)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_people_pages_pass_axe_and_fit_a_phone(
    live_server: LiveServer,
    administrator: str,
    new_context: Callable[..., Any],
    language: str,
) -> None:
    problems: dict[tuple[str, int], Any] = {}
    lang = f"?lang={language}"
    admin = new_context().new_page()
    log_in(admin, live_server, administrator, PASSWORD)

    admin.goto(live_server.url(f"/research/people{lang}"))
    problems_here(admin, "people", problems)
    admin.fill("#username", COLLEAGUE)  # taken: the page says so
    with admin.expect_navigation() as refused:
        admin.locator("form[action*='/research/people'] button").click()
    assert refused.value.status == 400
    problems_here(admin, "people, refused", problems)
    link = add_researcher(admin, f"people-{language}")
    problems_here(admin, "link", problems)
    for name, path in {
        "deactivate?": f"/research/people/deactivate?username={COLLEAGUE}&lang={language}",
        "make administrator?": f"/research/people/make-admin?username={COLLEAGUE}&lang={language}",
        "account": f"/research/account{lang}",
    }.items():
        assert admin.goto(live_server.url(path)).status == 200, name  # type: ignore[union-attr]
        problems_here(admin, name, problems)
    admin.fill("#current", PASSWORD)
    admin.fill("#password", NEW_PASSWORD)
    admin.fill("#again", NEW_PASSWORD + "?")
    with admin.expect_navigation() as differing:
        admin.locator("form[action*='/research/account'] button").click()
    assert differing.value.status == 400
    problems_here(admin, "account, refused", problems)

    newcomer = new_context().new_page()
    assert newcomer.goto(f"{link}{lang}").status == 200  # type: ignore[union-attr]
    assert newcomer.evaluate("document.documentElement.lang") in {language, "zh-Hans"}
    problems_here(newcomer, "set password", problems)
    newcomer.fill("#password", NEW_PASSWORD)
    newcomer.fill("#again", NEW_PASSWORD + "?")
    with newcomer.expect_navigation() as differing:
        newcomer.locator("form[method=post] button").click()
    assert differing.value.status == 400
    problems_here(newcomer, "set password, refused", problems)
    gone = newcomer.goto(live_server.url(f"/set-password/not-a-link{lang}"))
    assert gone is not None and gone.status == 410
    problems_here(newcomer, "link not valid", problems)
    assert not problems, problems
