"""Invitation-only surveys in real Chromium: each link answers once, with or without JS.

The operator's path from the README: a definition with ``access: invitation`` imported with
``survey-app import-survey``, links written by ``survey-app invite`` with
``SURVEY_APP_BASE_URL`` set to the server's address, then opened as respondents would. The
database (SQLite or PostgreSQL) is read on a connection of our own, as an auditor would:
one response and one spent answer ticket per answered link, and no link stored in a form
that would work again.
Opening a link shows a start page; its button spends the link for an answer ticket, which
the form carries (``storage/invitations.py``).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from survey_app.storage.invitations import TICKET_PATTERN
from tests.support.browser import (
    WORDS,
    LiveServer,
    answer,
    coin_stub,
    layout_problems,
    one_post,
    shown_answers,
    submit,
    watch,
)
from tests.support.stored import count, database_bytes, opened

SLUG = "staff-wellbeing"
TITLE = "Staff wellbeing survey"
KEYS = ("burnout", "harassment")
DEFINITION = f"""\
slug: {SLUG}
title: {TITLE}
description: For staff who received a personal link. Each link answers once.
access: invitation
questions:
  - key: burnout
    text: Have you felt burned out at work in the past month?
    type: yes_no
  - key: harassment
    text: Have you been harassed at work in the past year?
    type: yes_no
"""
ALL_YES = dict.fromkeys(KEYS, "yes")
CONTROL_FIELDS = {"csrf_token", "submission_id", "invitation", "design"}


@pytest.fixture(scope="module")
def links(live_server: LiveServer) -> list[str]:
    """The invitation survey, imported with the CLI, and its three links from ``invite``."""
    assert live_server.import_survey(DEFINITION) == SLUG
    links_file = live_server.workdir / f"{SLUG}-links.txt"
    live_server.cli(
        "invite",
        SLUG,
        "--count",
        "3",
        "-o",
        str(links_file),
        SURVEY_APP_BASE_URL=live_server.base_url,
    )
    written = links_file.read_text(encoding="utf-8").splitlines()
    assert len(written) == 3 and len(set(written)) == 3
    for link in written:
        assert link.startswith(live_server.url(f"/s/{SLUG}?invitation=")), link
    return written


def token_of(link: str) -> str:
    (token,) = parse_qs(urlsplit(link).query)["invitation"]
    return token


def counts(server: LiveServer) -> tuple[int, int]:
    """(responses, spent answer tickets) for the survey, from the database."""
    with opened(server.database) as db:
        (survey_id,) = db.execute("SELECT id FROM surveys WHERE slug = ?", [SLUG]).fetchone()
        where = ("survey_id = ?", [survey_id])
        return count(db, "responses", *where), count(db, "spent_tickets", *where)


def stored_answers(server: LiveServer, submission_id: str) -> dict[str, str]:
    with opened(server.database) as db:
        (answers,) = db.execute(
            "SELECT answers FROM responses WHERE submission_id = ?",
            [submission_id.split(".")[0]],  # the form token's random part
        ).fetchone()
    return {key: "yes" if value else "no" for key, value in json.loads(answers).items()}


def open_link(page: Any, link: str) -> str:
    """Open the link and start, as its invitee would; the answer ticket the form carries."""
    response = page.goto(link)
    assert response is not None and response.status == 200, link
    expect(page.locator("h1")).to_have_text(TITLE)
    expect(page.locator('form input[name="invitation"]')).to_have_value(token_of(link))
    page.get_by_role("button", name="Start the survey").click()
    expect(page.locator("#survey-form")).to_be_visible()
    ticket = str(page.locator('#survey-form input[name="invitation"]').input_value())
    assert TICKET_PATTERN.fullmatch(ticket) and token_of(link) not in ticket
    return ticket


def expect_refused(page: Any, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 403, url
    expect(page.locator("h1")).to_have_text("Invitation needed")
    expect(page.locator("form")).to_have_count(0)


@pytest.mark.both_backends  # links spent, answers stored, refusals: on both backends
def test_a_link_answers_once_with_javascript(
    new_context: Any, live_server: LiveServer, links: list[str]
) -> None:
    link = links[0]
    before = counts(live_server)
    page = new_context().new_page()
    page.add_init_script(coin_stub(0x01))  # every first coin randomizes, every second says no
    ticket = open_link(page, link)
    log = watch(page)
    answer(page, ALL_YES)
    assert submit(page).status == 200
    expect(page.locator("h1")).to_have_text("Thank you")
    expect(page.locator("main")).to_contain_text("randomized in your browser")

    url, fields = one_post(log)
    assert urlsplit(url).path == f"/s/{SLUG}"
    assert set(fields) == CONTROL_FIELDS | {"randomized", *KEYS}
    assert fields["invitation"] == ticket
    assert fields["randomized"] == "client"
    sent = {key: WORDS[fields[key]] for key in KEYS}  # "y"/"n" on the wire
    assert sent == dict.fromkeys(KEYS, "no"), "the coins said no, the page sent the truth"
    assert stored_answers(live_server, fields["submission_id"]) == sent
    assert log.console_errors == [] and log.page_errors == []

    # One more response and one more spent ticket (from a fresh survey: exactly one of each).
    assert counts(live_server) == (before[0] + 1, before[1] + 1)
    # Only hashes of the links are kept: the token itself is nowhere in the database.
    held = database_bytes(live_server.database)
    assert all(token_of(each).encode() not in held for each in links)
    assert ticket.encode() not in held

    # The used link, opened again in a browser that never saw it: refused, nothing stored.
    expect_refused(new_context().new_page(), link)
    assert counts(live_server) == (before[0] + 1, before[1] + 1)


@pytest.mark.both_backends
def test_a_link_answers_without_javascript_and_the_server_randomizes(
    new_context: Any, live_server: LiveServer, links: list[str]
) -> None:
    link = links[1]
    before = counts(live_server)
    page = new_context(java_script_enabled=False).new_page()
    ticket = open_link(page, link)
    log = watch(page)
    answer(page, ALL_YES)
    assert submit(page).status == 200
    expect(page.locator("h1")).to_have_text("Thank you")
    expect(page.locator("main")).to_contain_text("randomized on the server")

    _, fields = one_post(log)
    assert set(fields) == CONTROL_FIELDS | set(KEYS)
    assert fields["invitation"] == ticket
    assert shown_answers(page) == stored_answers(live_server, fields["submission_id"])
    assert counts(live_server) == (before[0] + 1, before[1] + 1)

    expect_refused(new_context(java_script_enabled=False).new_page(), link)
    assert counts(live_server) == (before[0] + 1, before[1] + 1)


@pytest.mark.parametrize("language", ["en", "ko", "zh"])
def test_the_start_page_is_accessible_at_375_px(
    page: Any, live_server: LiveServer, links: list[str], language: str
) -> None:
    """The page a link opens (its Start button spends the link; opening it spends nothing)."""
    response = page.goto(f"{links[2]}&lang={language}")
    assert response is not None and response.status == 200
    expect(page.get_by_role("button")).to_have_count(1)
    assert layout_problems(page, {"width": 375, "height": 740}) == []


@pytest.mark.both_backends
def test_without_a_valid_invitation_the_survey_is_refused(
    page: Any, live_server: LiveServer, links: list[str]
) -> None:
    before = counts(live_server)
    expect_refused(page, live_server.url(f"/s/{SLUG}"))
    unknown = "A" * len(token_of(links[0]))  # well-formed, never issued
    expect_refused(page, live_server.url(f"/s/{SLUG}?invitation={unknown}"))
    # Nor is it listed for anyone to find, unlike the open survey.
    page.goto(live_server.url("/"))
    expect(page.locator("main")).to_contain_text("Campus health survey")
    expect(page.locator("main")).not_to_contain_text(TITLE)
    assert counts(live_server) == before
