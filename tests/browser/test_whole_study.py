"""A whole study in Chromium, from an empty server to its data destroyed (issue 18's test).

The first account is the administrator. From the browser only: the administrator adds a
researcher with a single-use link; the researcher sets a password, builds a survey with a
yes/no question and a plain covariate, opens it, copies its address from the study page;
a respondent answers through that address; the researcher sets a retention date, downloads
the SPSS and Stata files (read back with pyreadstat: labels intact), deletes the survey by
typing its address, and the database file and its write-ahead log no longer hold the
covariate's value (a plain number is stored as given, so its bytes can be looked for).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyreadstat
import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer
from tests.support.stored import database_bytes

# A flow that stores: served on PostgreSQL too.
pytestmark = pytest.mark.both_backends

ADMIN, RESEARCHER = "lead", "postdoc"
PASSWORD = "the lead's long password"
NEW_PASSWORD = "the postdoc's own password"
SLUG = "night-shifts"
PLAIN_ANSWER = "736251"
QUESTION = "Have you ever slept through a night shift?"


def press(page: Any, name: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=name, exact=True).first.click()


def log_in(page: Any, server: LiveServer, username: str, password: str) -> None:
    page.goto(server.url("/login"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    press(page, "Log in")
    assert page.url.endswith("/research/"), page.url


def add_researcher(server: LiveServer, new_context: Callable[..., Any]) -> str:
    """The administrator adds the researcher; the set-password link shown once."""
    server.cli("create-researcher", ADMIN, "--password-stdin", stdin=PASSWORD + "\n")
    admin = new_context().new_page()
    log_in(admin, server, ADMIN, PASSWORD)
    with admin.expect_navigation():
        admin.get_by_role("link", name="People").click()
    admin.get_by_label("Username of the new researcher").fill(RESEARCHER)
    press(admin, "Add and make the link")
    return str(admin.locator("textarea#link").input_value().strip())


def build_and_open(page: Any, server: LiveServer) -> None:
    page.goto(server.url("/research/builder/"))
    press(page, "Add a number question")
    for index in (0, 1):
        details = page.locator(f"#b-q{index} > details")
        if details.get_attribute("open") is None:
            details.locator("summary").click()
    page.fill("#b-slug", SLUG)
    page.fill("#b-title-en", "Night shifts")
    page.fill("#b-q0-key", "slept")
    page.fill("#b-q0-text-en", QUESTION)
    page.fill("#b-q1-key", "badge")
    page.fill("#b-q1-text-en", "Your badge number")
    page.fill("#b-q1-min", "0")
    page.fill("#b-q1-max", "999999")
    page.locator("#b-q1-sensitive").uncheck()
    press(page, "Save draft")
    page.goto(server.url(f"/research/surveys/{SLUG}/study"))
    with page.expect_navigation():
        page.get_by_role("link", name="Open the survey…").click()
    press(page, "Yes, open the survey")
    expect(page.locator("#status")).to_contain_text("open")


def copied_address(page: Any) -> str:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy the address").first.click()
    expect(page.locator(".copied-status").first).to_have_text("Copied")
    return str(page.evaluate("navigator.clipboard.readText()"))


def answer(address: str, new_context: Callable[..., Any]) -> None:
    respondent = new_context(java_script_enabled=False).new_page()
    respondent.goto(address)
    respondent.check('input[name="slept"][value="y"]')
    respondent.fill('input[name="badge"]', PLAIN_ANSWER)
    with respondent.expect_navigation():
        respondent.click('button[type="submit"]')
    expect(respondent.locator("h1")).to_have_text("Thank you")


def set_retention(page: Any, server: LiveServer) -> str:
    day = (datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(days=30)).isoformat()
    page.goto(server.url(f"/research/surveys/{SLUG}/study"))
    page.fill("#retain_until", day)
    with page.expect_navigation():
        page.locator("form[action*='/retention'] button").click()
    return day


def download(page: Any, link_name: str, folder: Path) -> Path:
    with page.expect_download() as started:
        page.get_by_role("link", name=link_name).click()
    path = folder / started.value.suggested_filename
    started.value.save_as(path)
    return path


def check_labels(meta: Any) -> None:
    labels = meta.column_names_to_labels
    assert labels["slept"] == QUESTION and labels["badge"] == "Your badge number"
    assert meta.variable_value_labels["slept"] == {0: "no", 1: "yes"}
    assert "badge" not in meta.variable_value_labels


def delete(page: Any, server: LiveServer) -> None:
    page.goto(server.url(f"/research/surveys/{SLUG}/study"))
    with page.expect_navigation():
        page.get_by_role("link", name="Delete the survey and its data…").click()
    page.get_by_label("To confirm, type the survey's address name:").fill(SLUG)
    press(page, "Delete the survey and its data")
    expect(page.locator(".messages")).to_contain_text("is deleted, with its 1 response")


def stored_bytes(server: LiveServer) -> bytes:
    return database_bytes(server.database)


def test_a_whole_study_from_an_empty_server_to_its_data_destroyed(
    empty_server: LiveServer, new_context: Callable[..., Any], tmp_path: Path
) -> None:
    server = empty_server
    link = add_researcher(server, new_context)
    researcher = new_context().new_page()
    researcher.goto(link)
    researcher.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    researcher.get_by_label("New password, again").fill(NEW_PASSWORD)
    press(researcher, "Set the password")
    log_in(researcher, server, RESEARCHER, NEW_PASSWORD)

    build_and_open(researcher, server)
    address = copied_address(researcher)
    assert address == server.url(f"/s/{SLUG}")
    answer(address, new_context)
    assert PLAIN_ANSWER.encode() in stored_bytes(server)

    day = set_retention(researcher, server)
    expect(researcher.locator("#retain_until")).to_have_value(day)
    expect(researcher.locator(".messages")).to_contain_text("The answers will be destroyed after")
    researcher.goto(server.url(f"/research/surveys/{SLUG}"))
    sav = download(researcher, "Randomized responses for SPSS (.sav)", tmp_path)
    dta = download(researcher, "Randomized responses for Stata (.dta)", tmp_path)
    for read, path in ((pyreadstat.read_sav, sav), (pyreadstat.read_dta, dta)):
        columns, meta = read(path, output_format="dict")
        check_labels(meta)
        assert list(columns["badge"]) == [int(PLAIN_ANSWER)]

    delete(researcher, server)
    assert PLAIN_ANSWER.encode() not in stored_bytes(server)
    gone = researcher.goto(server.url(f"/research/surveys/{SLUG}"))
    assert gone is not None and gone.status == 404
