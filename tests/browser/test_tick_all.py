"""A tick-all-that-apply question in Chromium against gunicorn: with JavaScript the POST
carries only the sampled report ("j:b"), never the per-option answers; without it every
option's yes/no pair, at one length whatever is ticked; the survey page, the thank-you
page and the researcher's dashboard pass axe (WCAG 2.1 A/AA) in English, Korean and
Chinese (the page's words; the survey's own are English), and fit a 375 px phone."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.browser import (
    LiveServer,
    answer,
    layout_problems,
    one_post,
    submit,
    watch,
)

SLUG = "tick-all-check"
OWNER, PASSWORD = "ticker", "a tick for every horse"
OPTIONS = ["Cannabis", "Cocaine", "Ecstasy", "LSD", "Something else entirely, not listed"]
DEFINITION = f"""\
slug: {SLUG}
title: Tick all that apply
questions:
  - key: used
    text: Which have you used in the last year?
    type: multiple
    epsilon: 2
    options: {OPTIONS!r}
  - {{key: cheated, text: "Cheated?", type: yes_no}}
  - {{key: year, text: "Year?", type: choice, sensitive: false,
     options: [First, Second]}}
"""
LANGUAGES = ("en", "ko", "zh")
PHONE = {"width": 375, "height": 700}
#: Three respondents ticking nothing, one option, and every option.
TICKED: list[set[int]] = [set(), {3}, set(range(len(OPTIONS)))]


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    live_server.cli("create-researcher", OWNER, "--password-stdin", stdin=PASSWORD + "\n")
    return live_server.import_survey(DEFINITION, "--owner", OWNER)


def ticks(ticked: set[int]) -> dict[str, str]:
    return {f"used.{j}": "yes" if j in ticked else "no" for j in range(len(OPTIONS))}


def respond(page: Any, server: LiveServer, ticked: set[int], language: str = "en") -> Any:
    """Answer the survey; the POST's response."""
    assert page.goto(server.url(f"/s/{SLUG}?lang={language}")).status == 200
    answer(page, {**ticks(ticked), "cheated": "no", "year": "0"})
    response = submit(page)
    assert response.status == 200, response.text()[:500]
    return response


def test_with_javascript_only_the_report_leaves_the_page(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    lengths = set()
    for ticked in TICKED:
        page = new_context().new_page()
        log = watch(page)
        response = respond(page, live_server, ticked)
        _url, fields = one_post(log)
        assert fields["randomized"] == "client"
        assert not [name for name in fields if name.startswith("used.")], fields
        assert re.fullmatch(r"[0-4]:[01]", fields["used"]), fields["used"]
        lengths.add((len(log.posts()[0][1]), len(response.body())))
        assert not log.page_errors and not log.console_errors
    assert len(lengths) == 1, lengths


def test_without_javascript_every_pair_is_posted_at_one_length(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str
) -> None:
    lengths = set()
    for ticked in TICKED:
        page = new_context(java_script_enabled=False).new_page()
        log = watch(page)
        response = respond(page, live_server, ticked)
        _url, fields = one_post(log)
        assert "randomized" not in fields and "used" not in fields
        assert {name: fields[name] for name in fields if name.startswith("used.")} == {
            f"used.{j}": "y" if j in ticked else "n" for j in range(len(OPTIONS))
        }
        lengths.add((len(log.posts()[0][1]), len(response.body())))
    assert len(lengths) == 1, lengths


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pages_pass_axe_and_fit_a_phone(
    new_context: Callable[..., Any], live_server: LiveServer, survey: str, language: str
) -> None:
    found = {}
    page = new_context().new_page()
    page.goto(live_server.url(f"/s/{SLUG}?lang={language}"))
    found["survey"] = layout_problems(page, PHONE)
    answer(page, {**ticks({1}), "cheated": "yes", "year": "1"})
    submit(page)
    page.locator("details.stored summary").click()
    found["thank-you"] = layout_problems(page, PHONE)
    researcher = new_context().new_page()
    researcher.goto(live_server.url("/login"))
    researcher.fill("#username", OWNER)
    researcher.fill("#password", PASSWORD)
    with researcher.expect_navigation():
        researcher.click("button[type=submit]")
    base = f"/research/surveys/{SLUG}"
    for name, path in {
        "dashboard": base,
        "groups": f"{base}/groups?question=used&by=year",
        "regression": f"{base}/regression?outcome=used.1&covariates=year",
    }.items():
        joined = "&" if "?" in path else "?"
        response = researcher.goto(live_server.url(f"{path}{joined}lang={language}"))
        assert response is not None and response.status in (200, 400), name
        found[name] = layout_problems(researcher, PHONE)
    assert not any(found.values()), found
