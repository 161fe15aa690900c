"""From estimates by group to a public results page, in Chromium against the real server.

A researcher reads a sensitive question by year of study on the dashboard's group page,
compares two years, sets a central privacy budget, publishes the estimates (from noisy
counts) with a noisy histogram and noisy by-group estimates, and an anonymous visitor
reads the public page, which sets no cookie and says what it guarantees. A release that
would overspend the budget is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey
from tests.support.browser import LiveServer, axe_violations, sideways_overflow
from tests.support.paths import ROOT
from tests.support.stored import opened

# A flow that stores: served on PostgreSQL too.
pytestmark = pytest.mark.both_backends

OWNER = "publisher-ida"
PASSWORD = "correct horse battery"
SLUG = "published-life"
PER_YEAR = 60


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    """The mixed example survey, owned by OWNER, with PER_YEAR responses in each year."""
    live_server.cli("create-researcher", OWNER, "--password-stdin", stdin=PASSWORD + "\n")
    text = (ROOT / "examples" / "mixed-survey.yaml").read_text(encoding="utf-8")
    live_server.import_survey(
        text.replace("slug: student-life\n", f"slug: {SLUG}\n"), "--owner", OWNER
    )
    with opened(live_server.database) as db:
        stored = get_survey(db, SLUG)
        assert stored is not None
        for i in range(4 * PER_YEAR):
            year = i % 4
            reported = {q.key: None for q in stored.questions} | {
                "year": year,
                "cheated": i % 10 < 2 + 2 * year,  # more "yes" reports in later years
                "skipped_meals": i % 3 == 0,
            }
            record_response(db, stored, reported, f"published-{i}")
    return SLUG


def log_in(page: Any, server: LiveServer, path: str) -> None:
    page.goto(server.url(path))
    page.get_by_label("Username").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()


def click(page: Any, name: str, role: str = "button") -> None:
    with page.expect_navigation():
        page.get_by_role(role, name=name).first.click()


def test_from_estimates_by_group_to_a_public_page(
    live_server: LiveServer, survey: str, new_context: Callable[..., Any], screenshots: Path
) -> None:
    owner = new_context().new_page()
    log_in(owner, live_server, f"/research/surveys/{survey}")
    click(owner, "Estimates by group", role="link")
    owner.select_option("#question", "cheated")
    owner.select_option("#by", "year")
    click(owner, "Estimate")
    groups = owner.locator("table").first
    for year in ("1", "2", "3", "4+"):
        expect(groups).to_contain_text(year)
    owner.select_option("#first", label="4+")
    owner.select_option("#second", label="1")
    click(owner, "Estimate")
    expect(owner.locator("main")).to_contain_text("Difference")
    assert axe_violations(owner) == []

    owner.goto(live_server.url(f"/research/surveys/{survey}/study"))
    click(owner, "Publish results on a public page, and set the privacy budget…", role="link")
    owner.locator("#budget-field").fill("1")
    click(owner, "Set the budget…")
    click(owner, "Yes, set the budget")
    expect(owner.locator("#budget-status")).to_contain_text("remaining 1")

    owner.locator('input[name="figure"][value="estimates"]').check()
    owner.locator('input[name="figure"][value="histogram:year"]').check()
    owner.locator('input[name="figure"][value="groups:cheated:year"]').check()
    owner.locator("#epsilon-field").fill("0.6")
    click(owner, "Publish…")
    click(owner, "Yes, publish")
    expect(owner.locator("#budget-status")).to_contain_text("spent 0.6")
    assert axe_violations(owner) == []

    # Another release of 0.6 would take the budget past 1: refused, nothing spent.
    owner.locator('input[name="figure"][value="mode:year"]').check()
    owner.locator("#epsilon-field").fill("0.6")
    click(owner, "Publish…")
    expect(owner.locator(".errors")).to_contain_text("budget")
    owner.goto(live_server.url(f"/research/surveys/{survey}/publish"))
    expect(owner.locator("#budget-status")).to_contain_text("spent 0.6")

    visitor_context = new_context(viewport={"width": 320, "height": 640})
    visitor = visitor_context.new_page()
    response = visitor.goto(live_server.url(f"/results/{survey}"))
    assert response is not None and response.status == 200
    assert "set-cookie" not in response.headers
    expect(visitor.locator("h1")).to_contain_text("Student life survey")
    main = visitor.locator("main")
    expect(main).to_contain_text("Have you cheated on an exam in the past year?")
    expect(main).to_contain_text("Accuracy")
    expect(main).to_contain_text("Which year of study are you in?")
    # Every figure from noisy counts: the page claims central DP for all that was published,
    # with the total spent, and lists the release and the budget it was charged to.
    expect(main).to_contain_text("Together they are differentially private with ε = 0.6")
    expect(main).to_contain_text("Noisy number who answered")
    releases = visitor.locator("#releases + p + table")
    expect(releases).to_contain_text("Privacy budget set to ε = 1.")
    expect(releases).to_contain_text("(shown on this page)")
    assert visitor_context.cookies() == []
    assert sideways_overflow(visitor) == 0
    assert axe_violations(visitor) == []
    visitor.set_viewport_size({"width": 900, "height": 900})
    visitor.screenshot(path=str(screenshots / "public-results.png"), full_page=True)
