"""A respondent in real Chromium against the real server, checked in the real SQLite file.

These are the privacy invariants as a browser sees them: with JavaScript the true answers
never leave the page (invariant 2), without it the server randomizes (invariant 2), the
thank-you page shows exactly the stored row (invariant 5), a second answer is refused
(invariant 4), and all of it runs under the app's Content-Security-Policy.

The coins are made predictable by replacing ``crypto.getRandomValues`` before the page's
script runs, so each test knows what must be sent and can fail in either direction.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from babel.dates import format_date
from playwright.sync_api import expect

from tests.support.browser import (
    WORDS,
    LiveServer,
    answer,
    coin_stub,
    one_post,
    shown_answers,
    submit,
    watch,
)
from tests.support.examples import KEYS, SLUG
from tests.support.stored import opened, rows

# A flow that stores: served on PostgreSQL too.
pytestmark = pytest.mark.both_backends

CONTROL_FIELDS = {"csrf_token", "submission_id", "design"}
ALL_YES = dict.fromkeys(KEYS, "yes")
ALL_NO = dict.fromkeys(KEYS, "no")
MIXED = {"cheated": "yes", "drugs": "no", "skipped_meals": "yes"}


def open_survey(page: Any, server: LiveServer) -> None:
    response = page.goto(server.url(f"/s/{SLUG}"))
    assert response is not None and response.status == 200
    expect(page.locator("h1")).to_have_text("Campus health survey")


def answers_in(fields: dict[str, str]) -> dict[str, str]:
    """The yes/no answers a POST carries, in words; on the wire each is "y" or "n"."""
    assert {fields[key] for key in KEYS} <= set(WORDS), fields
    return {key: WORDS[fields[key]] for key in KEYS}


def stored_rows(server: LiveServer, submission_id: str | None = None) -> list[dict[str, Any]]:
    """Responses as stored in the server's database, read on a connection of our own."""
    condition = "survey_id = (SELECT id FROM surveys WHERE slug = ?)"
    params: list[str] = [SLUG]
    if submission_id is not None:
        condition += " AND submission_id = ?"
        params.append(submission_id.split(".")[0])  # a form token's random part
    with opened(server.database) as db:
        return rows(db, "responses", condition, params)


def stored_answers(server: LiveServer, submission_id: str) -> dict[str, str]:
    rows = stored_rows(server, submission_id)
    assert len(rows) == 1, f"expected one stored row for {submission_id}, found {len(rows)}"
    answers = json.loads(rows[0]["answers"])
    assert set(answers) == set(KEYS)
    return {key: {1: "yes", 0: "no"}[answers[key]] for key in KEYS}


def test_browser_posts_only_randomized_answers(page: Any, live_server: LiveServer) -> None:
    log = watch(page)
    open_survey(page, live_server)
    answer(page, MIXED)
    assert submit(page).status == 200

    url, fields = one_post(log)
    assert urlsplit(url).path == f"/s/{SLUG}"
    assert set(fields) == CONTROL_FIELDS | {"randomized", *KEYS}
    assert fields["randomized"] == "client"
    assert set(answers_in(fields).values()) <= {"yes", "no"}
    # Already randomized, so stored as sent.
    assert stored_answers(live_server, fields["submission_id"]) == answers_in(fields)
    expect(page.locator("main")).to_contain_text("randomized in your browser")


@pytest.mark.parametrize(
    ("coins", "truth", "sent"),
    [
        pytest.param((0x01,), ALL_YES, ALL_NO, id="randomize-then-no"),
        pytest.param((0x00,), MIXED, MIXED, id="keep-the-truth"),
        pytest.param((0x01, 0x00), ALL_NO, ALL_YES, id="randomize-then-yes"),
    ],
)
def test_the_coins_decide_what_is_sent_and_stored(
    page: Any,
    live_server: LiveServer,
    coins: tuple[int, ...],
    truth: dict[str, str],
    sent: dict[str, str],
) -> None:
    page.add_init_script(coin_stub(*coins))
    log = watch(page)
    open_survey(page, live_server)
    answer(page, truth)
    submit(page)

    _, fields = one_post(log)
    assert fields["randomized"] == "client"
    assert answers_in(fields) == sent
    assert stored_answers(live_server, fields["submission_id"]) == sent
    assert shown_answers(page) == sent
    assert int(page.evaluate("sessionStorage.getItem('coinCalls')") or 0) > 0, "stub unused"


def test_true_answers_never_leave_the_page_when_the_coins_randomize(
    page: Any, live_server: LiveServer
) -> None:
    page.add_init_script(coin_stub(0x01))
    log = watch(page)
    open_survey(page, live_server)
    answer(page, ALL_YES)
    submit(page)
    shown_answers(page)

    assert log.requests, "no requests recorded"
    for method, url, body in log.requests:
        query = urlsplit(url).query
        assert "=yes" not in url, f"{method} {url} carries a true answer"
        assert "=yes" not in body, f"{method} {url} carries a true answer: {body}"
        for text in (query, body):
            values = [value for _, value in parse_qsl(text, keep_blank_values=True)]
            assert "yes" not in values, f"{method} {url} carries a true answer"
            assert "y" not in values, f"{method} {url} carries a true answer (on the wire)"
    # The respondent's own form is never submitted: one POST, the randomized one.
    assert len(log.posts()) == 1


def test_without_javascript_the_server_randomizes(
    new_context: Any, live_server: LiveServer
) -> None:
    page = new_context(java_script_enabled=False).new_page()
    log = watch(page)
    open_survey(page, live_server)
    expect(page.locator(".js-only")).to_be_hidden()
    answer(page, MIXED)
    assert submit(page).status == 200

    _, fields = one_post(log)
    assert "randomized" not in fields
    assert set(fields) == CONTROL_FIELDS | set(KEYS)
    shown = shown_answers(page)
    assert shown == stored_answers(live_server, fields["submission_id"])
    expect(page.locator("main")).to_contain_text("randomized on the server")


def test_thank_you_page_shows_exactly_the_stored_row(page: Any, live_server: LiveServer) -> None:
    log = watch(page)
    open_survey(page, live_server)
    answer(page, MIXED)
    submit(page)

    _, fields = one_post(log)
    (row,) = stored_rows(live_server, fields["submission_id"])
    stored = json.loads(row["answers"])
    assert shown_answers(page) == {key: "yes" if stored[key] else "no" for key in KEYS}
    meta = page.locator("dl.stored-meta")
    expect(meta).to_contain_text(SLUG)
    day = format_date(datetime.date.fromisoformat(row["answered_on"]), "long", locale="en")
    expect(meta).to_contain_text(f"{day} (the day only)")
    expect(meta).to_contain_text(row["design"])
    for how in page.locator("table.stored td:nth-child(3)").all_inner_texts():
        assert "used with probability 50%" in how and "(ε = 1.099)" in how


def test_a_second_submission_from_the_same_browser_stores_nothing(
    new_context: Any, live_server: LiveServer
) -> None:
    context = new_context()
    first = context.new_page()
    open_survey(first, live_server)
    # A second tab opened before answering: its form still posts, with its own id.
    second = context.new_page()
    open_survey(second, live_server)

    answer(first, MIXED)
    submit(first)
    shown_answers(first)
    rows_after_first = len(stored_rows(live_server))

    answer(second, ALL_YES)
    refused = submit(second)
    assert refused.status == 409
    expect(second.locator("h1")).to_have_text("You have already answered this survey")
    assert len(stored_rows(live_server)) == rows_after_first

    # Coming back to the survey shows the same page, with no form to send.
    again = first.goto(live_server.url(f"/s/{SLUG}"))
    assert again is not None and again.status == 200
    expect(first.locator("h1")).to_have_text("You have already answered this survey")
    expect(first.locator("form")).to_have_count(0)
    assert len(stored_rows(live_server)) == rows_after_first


def test_pages_have_no_inline_scripts_and_run_under_the_csp(
    page: Any, live_server: LiveServer
) -> None:
    log = watch(page)
    response = page.goto(live_server.url(f"/s/{SLUG}"))
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy

    def check_scripts() -> None:
        sources = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
        assert all(sources), f"inline <script> on {page.url}: {sources}"
        handlers = page.evaluate(
            """() => [...document.querySelectorAll('*')].flatMap(
                 el => [...el.attributes].map(a => a.name).filter(n => n.startsWith('on')))"""
        )
        assert handlers == [], f"inline event handlers: {handlers}"

    check_scripts()
    scripts = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    paths = [urlsplit(script).path for script in scripts]
    assert paths == ["/js/coins.js", "/js/mechanisms/two_coin.js", "/js/randomize.js"]
    # The randomizing scripts loaded and ran under the policy: they reveal the JS-only note.
    page.locator("details.protection summary").click()
    expect(page.locator(".js-only")).to_be_visible()
    answer(page, MIXED)
    submit(page)
    shown_answers(page)
    check_scripts()

    assert log.console_errors == []
    assert log.page_errors == []
    # Control: a CSP violation does reach the console, so the empty list above means something.
    with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        page.evaluate(
            "() => { const img = document.createElement('img');"
            " img.src = 'http://example.invalid/x.png'; document.body.appendChild(img); }"
        )


def test_screenshots_for_the_readme(page: Any, live_server: LiveServer, screenshots: Path) -> None:
    page.add_init_script(coin_stub(0x00))  # truthful coins: the same picture every run
    open_survey(page, live_server)
    answer(page, MIXED)
    page.screenshot(path=str(screenshots / "survey.png"), full_page=True)
    submit(page)
    shown_answers(page)
    page.screenshot(path=str(screenshots / "thanks.png"), full_page=True)
    for name in ("survey.png", "thanks.png"):
        assert (screenshots / name).stat().st_size > 10_000
