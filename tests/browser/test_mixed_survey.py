"""The survey of every question type, answered in Chromium with and without JavaScript,
then read on the dashboard and in the exports, against the real gunicorn server.

examples/mixed-survey.yaml: a consent step; year (plain choice); cheated (yes/no, ε 0.5);
skipped_meals (yes/no, ε 2); substance (5 options, GRR at ε 1); drinks (0-50, Duchi's
bit at ε 1); stress (optional yes/no, fair coins).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, one_post, submit, watch
from tests.support.paths import ROOT
from tests.support.stored import stored_answers

SLUG = "student-life"
USERNAME = "grace"
PASSWORD = "another horse battery"
CONTROLS = {"csrf_token", "submission_id", "design", "agreed"}
SENSITIVE = ("cheated", "skipped_meals", "substance", "drinks")


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    """The mixed survey, owned by USERNAME (every survey has an owner)."""
    live_server.cli("create-researcher", USERNAME, "--password-stdin", stdin=PASSWORD + "\n")
    mixed = str(ROOT / "examples" / "mixed-survey.yaml")
    out = live_server.cli("import-survey", "--owner", USERNAME, mixed)
    assert out.strip() == SLUG
    return SLUG


def agree_and_answer(page: Any, server: LiveServer, javascript: bool = True) -> None:
    """Through the consent step, then a whole survey: everything but the optional one.

    The number by its label: typed with JavaScript, chosen from the list without it."""
    response = page.goto(server.url(f"/s/{SLUG}"))
    assert response is not None and response.status == 200
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    with page.expect_navigation():
        page.get_by_role("button", name="I agree — show me the questions").click()
    page.get_by_role("group", name="Which year of study").get_by_label("2").check()
    page.get_by_role("group", name="cheated on an exam").get_by_label("Yes").check()
    page.get_by_role("group", name="skipped meals").get_by_label("No").check()
    page.get_by_role("group", name="Which of these").get_by_label("Cannabis").check()
    if javascript:
        page.get_by_role("spinbutton", name="A whole number from 0 to 50").fill("37")
    else:
        expect(page.get_by_role("spinbutton")).to_have_count(0)  # hidden, disabled
        number = page.get_by_role("combobox", name="A whole number from 0 to 50:", exact=True)
        expect(number.locator("option").first).to_have_text("Choose…")
        number.select_option(label="37")


def stored(server: LiveServer, submission_id: str) -> dict[str, Any]:
    # The form token's random part is what is stored.
    [answers] = stored_answers(server.database, submission_id=submission_id.split(".")[0])
    return answers


def test_with_javascript_only_reports_leave_the_browser(
    page: Any, live_server: LiveServer, survey: str
) -> None:
    log = watch(page)
    agree_and_answer(page, live_server)
    # The samplers of this survey's mechanisms and no others (no unary encoding, no Laplace).
    scripts = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    modules = ["mechanisms/two_coin.js", "mechanisms/grr.js", "mechanisms/duchi.js"]
    paths = [urlsplit(script).path for script in scripts]
    assert paths == [f"/js/{name}" for name in ("coins.js", *modules, "randomize.js")]
    assert submit(page).status == 200
    _, fields = one_post(log)
    assert set(fields) == CONTROLS | {"randomized", "year", *SENSITIVE}  # stress: skipped
    assert fields["randomized"] == "client"
    assert fields["year"] == "1"  # plain: sent as entered (the option's index)
    assert fields["drinks"] in {"0", "1"}  # Duchi's bit, never the 37 typed in
    assert fields["substance"] in {"0", "1", "2", "3", "4"}
    assert fields["cheated"] in {"y", "n"} and fields["skipped_meals"] in {"y", "n"}
    row = stored(live_server, fields["submission_id"])
    assert row == {
        "year": 1,
        "cheated": int(fields["cheated"] == "y"),
        "skipped_meals": int(fields["skipped_meals"] == "y"),
        "substance": int(fields["substance"]),
        "drinks": int(fields["drinks"]),
        "stress": None,
    }
    # Each cell holds every text it could show (equal sizes); only the stored one is shown.
    page.locator("details.stored summary").click()
    expect(page.locator('td[data-key="stress"] .shown')).to_have_text(
        "You skipped this question: it was stored as unanswered."
    )
    expect(page.locator('td[data-key="year"] .shown')).to_have_text("2")
    expect(page.locator('td[data-key="year"]')).to_have_js_property("innerText", "2")
    assert log.console_errors == []


def test_without_javascript_the_server_randomizes_every_type(
    new_context: Any, live_server: LiveServer, survey: str
) -> None:
    page = new_context(java_script_enabled=False).new_page()
    log = watch(page)
    agree_and_answer(page, live_server, javascript=False)
    assert submit(page).status == 200
    _, fields = one_post(log)
    assert "randomized" not in fields
    assert fields["drinks"] == "37" and fields["substance"] == "1"  # the true answers
    row = stored(live_server, fields["submission_id"])
    assert row["year"] == 1 and row["stress"] is None
    assert row["drinks"] in (0, 1)  # randomized by the server: the 37 is never stored
    assert row["substance"] in range(5) and row["cheated"] in (0, 1)


def test_the_dashboard_and_exports_show_every_type(
    page: Any, live_server: LiveServer, survey: str
) -> None:
    agree_and_answer(page, live_server)  # one response at least, whatever ran before
    assert submit(page).status == 200
    page.goto(live_server.url(f"/research/surveys/{SLUG}"))
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    expect(page.locator("h1")).to_have_text("Student life survey")
    expect(page.get_by_role("heading", name="Which of these have you used")).to_be_visible()
    options = page.locator("section.choice").nth(1).locator("tbody tr")
    expect(options).to_have_count(5)
    expect(page.locator("section.number h2")).to_have_text(
        "How many alcoholic drinks did you have last week?"
    )
    choice_plot = page.locator('img[src*="question=substance"]')
    expect(choice_plot).to_be_visible()
    # decode() waits for the image to load (visible is not loaded: a slow plot raced it).
    loaded = choice_plot.evaluate("img => img.decode().then(() => img.naturalWidth)")
    assert loaded > 0, "the choice plot did not load"

    with page.expect_download() as info:
        page.get_by_role("link", name="Aggregate CSV", exact=True).click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    categories = [(row["question"], row["category"]) for row in rows]
    assert ("drinks", "mean") in categories and ("substance", "Cannabis") in categories
    assert len([c for c in categories if c[0] == "year"]) == 4
    # n: every stored response that answered it (the tests before answered the survey).
    stored_drinks = [a.get("drinks") for a in stored_answers(live_server.database, SLUG)]
    answered = sum(drinks is not None for drinks in stored_drinks)
    assert {row["n"] for row in rows if row["question"] == "drinks"} == {str(answered)}


def test_screenshot_of_every_question_type_for_the_readme(
    page: Any, live_server: LiveServer, survey: str, screenshots: Path
) -> None:
    agree_and_answer(page, live_server)
    page.screenshot(path=str(screenshots / "mixed-survey.png"), full_page=True)
    assert (screenshots / "mixed-survey.png").stat().st_size > 10_000
