"""Rating scales (examples/rating-scales.yaml) in Chromium against the real server: answered
with JavaScript (only reports leave the browser) and without (the server randomizes),
every answer posting the same number of bytes; then axe-core and a 320 px phone on the
respondent page, the dashboard with its mean scores and the builder with a scale, in
English, Korean and Chinese."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import (
    LiveServer,
    layout_problems,
    one_post,
    submit,
    watch,
)
from tests.support.paths import ROOT

SLUG = "rating-scales"
USERNAME = "likert"
PASSWORD = "a fifth horse battery"
LANGUAGES = ("en", "ko", "zh")
PHONE = {"width": 320, "height": 640}
LABELS = ("Never", "Once or twice", "Monthly", "Weekly")


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    live_server.cli("create-researcher", USERNAME, "--password-stdin", stdin=PASSWORD + "\n")
    example = str(ROOT / "examples" / "rating-scales.yaml")
    assert live_server.cli("import-survey", "--owner", USERNAME, example).strip() == SLUG
    return SLUG


def answer(page: Any, server: LiveServer, binge: str) -> dict[str, str]:
    """One respondent's whole survey, the binge scale at ``binge``: what the form posted."""
    log = watch(page)
    response = page.goto(server.url(f"/s/{SLUG}"))
    assert response is not None and response.status == 200
    page.get_by_role("group", name="Which year of study").get_by_label("2").check()
    page.get_by_role("group", name="six or more drinks").get_by_label(binge).check()
    page.get_by_role("group", name="feel low").get_by_label("Several days").check()
    page.get_by_role("group", name="How satisfied").get_by_label("Satisfied", exact=True).check()
    assert submit(page).status == 200
    expect(page.locator("h1")).to_have_text("Thank you")
    _, fields = one_post(log)
    body_sizes.append(len(log.posts()[0][1]))
    assert log.console_errors == []
    return fields


body_sizes: list[int] = []


def test_with_javascript_only_reports_leave_the_browser(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    body_sizes.clear()
    for binge in LABELS:
        fields = answer(new_context().new_page(), live_server, binge)
        assert fields["randomized"] == "client"
        assert fields["binge"] in {"0", "1", "2", "3"}  # GRR's reported option
        assert len(fields["days_low"]) == 4 and set(fields["days_low"]) <= {"0", "1"}  # OUE
        assert fields["satisfied"] == "3"  # plain: as given
    assert len(set(body_sizes)) == 1, body_sizes


def test_without_javascript_the_server_randomizes(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    body_sizes.clear()
    for binge in LABELS:
        page = new_context(java_script_enabled=False).new_page()
        fields = answer(page, live_server, binge)
        assert "randomized" not in fields
        assert fields["binge"] == str(LABELS.index(binge))  # the server randomizes it
    assert len(set(body_sizes)) == 1, body_sizes


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pages_a_scale_changes_pass_axe_and_fit_a_phone(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str, language: str
) -> None:
    problems: dict[str, list[object]] = {}
    lang = f"?lang={language}"
    page = new_context().new_page()
    page.goto(live_server.url(f"/s/{SLUG}{lang}"))
    problems["respondent page"] = layout_problems(page, PHONE)
    page.goto(live_server.url("/login"))
    page.fill("#username", USERNAME)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    for name, path in {
        "dashboard": f"/research/surveys/{SLUG}{lang}",
        "groups": f"/research/surveys/{SLUG}/groups?question=binge&by=year&lang={language}",
    }.items():
        response = page.goto(live_server.url(path))
        assert response is not None and response.status == 200, name
        problems[name] = layout_problems(page, PHONE)
    page.goto(live_server.url(f"/research/builder/{lang}"))
    with page.expect_navigation():
        page.locator('button[name="add"][value="scale"]').click()
    page.locator("details.question-fold").last.evaluate("d => d.open = true")
    problems["builder"] = layout_problems(page, PHONE)
    assert not any(problems.values()), problems
