"""Tables that fit and charts that read, in Chromium against the real server.

At 1280 px no interval ("12.3% – 45.6%") breaks onto a second line, on the dashboard, the
analyses or the public page; at 375 px nothing pushes the page sideways, every table stays
inside the screen and the public page's charts keep their text whole and legible. The pages
this work changed (the dashboard in survey order, the regression with odds ratios and
p-values, the public page with its charts) pass axe in English, Korean and Chinese.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey
from tests.support.browser import LiveServer, axe_violations, sideways_overflow
from tests.support.paths import ROOT
from tests.support.stored import opened

OWNER = "tables-tess"
PASSWORD = "correct horse battery"
SLUG = "tables-life"
RESPONSES = 240
LANGUAGES = ("en", "ko", "zh")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}
PAGES = {
    "dashboard": f"/research/surveys/{SLUG}",
    "groups": f"/research/surveys/{SLUG}/groups?question=substance&by=year",
    "regression": f"/research/surveys/{SLUG}/regression?outcome=skipped_meals&covariates=year",
    "boundary fit": f"/research/surveys/{SLUG}/regression?outcome=cheated&covariates=year",
    "choice regression": f"/research/surveys/{SLUG}/regression?outcome=substance.1&covariates=year",
    "public": f"/results/{SLUG}",
}
FIGURES = ("estimates", "histogram:year", "groups:cheated:year", "mode:year")
# An option's label longer than a phone is wide: its chart label must wrap, not run off.
LONG_OPTION = "Something else, such as a drug not named here or one you would rather not name"


@pytest.fixture(scope="module")
def survey(live_server: LiveServer) -> str:
    """The mixed example survey owned by OWNER (one option's label made long), answered
    RESPONSES times (every question type), and published with every kind of figure."""
    live_server.cli("create-researcher", OWNER, "--password-stdin", stdin=PASSWORD + "\n")
    text = (ROOT / "examples" / "mixed-survey.yaml").read_text(encoding="utf-8")
    text = text.replace("slug: student-life\n", f"slug: {SLUG}\n")
    live_server.import_survey(
        text.replace("- Something else", f"- {LONG_OPTION}"), "--owner", OWNER
    )
    with opened(live_server.database) as db:
        stored = get_survey(db, SLUG)
        assert stored is not None
        for i in range(RESPONSES):
            year = i % 4
            reported = {
                "year": year,
                "cheated": i % 10 < 2 + 2 * year,
                "skipped_meals": i % 10 < 3 + year,
                "substance": (i // 4) % 5,
                "drinks": i % 2,
                "stress": None if i % 7 == 0 else i % 2 == 0,
            }
            record_response(db, stored, reported, f"tables-{i}")
    live_server.cli("budget", SLUG, "4")
    figures = [arg for figure in FIGURES for arg in ("--figure", figure)]
    live_server.cli("publish", SLUG, "--epsilon", "4", *figures)
    return SLUG


def logged_in(new_context: Callable[..., Any], server: LiveServer) -> Any:
    page = new_context(viewport=DESKTOP).new_page()
    page.goto(server.url("/login"))
    page.get_by_label("Username").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    return page


def visit(page: Any, server: LiveServer, path: str, language: str) -> None:
    response = page.goto(server.url(path + ("&" if "?" in path else "?") + f"lang={language}"))
    assert response is not None and response.status == 200, (path, response and response.status)


# Each interval cell: the lines its text takes (from the text's own boxes), and its text.
INTERVAL_LINES = """() => [...document.querySelectorAll('td.interval')].map((cell) => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = new Set([...range.getClientRects()].map((box) => Math.round(box.top)));
  return [tops.size, cell.textContent.trim()];
})"""

# Every table's and chart's right edge, and the chart texts' sizes and right edges.
EDGES = """() => {
  const right = (e) => e.getBoundingClientRect().right;
  const charts = 'svg.interval-chart';
  return {
    tables: [...document.querySelectorAll('table')].map(right),
    charts: [...document.querySelectorAll(charts)].map(right),
    texts: [...document.querySelectorAll(charts + ' text')].map((t) =>
      [parseFloat(getComputedStyle(t).fontSize), t.getBoundingClientRect().left, right(t)]),
  };
}"""


def wrapped_intervals(page: Any) -> tuple[int, list[str]]:
    """At 1280 px: how many interval cells the page has, and the texts of those that wrap."""
    cells = page.evaluate(INTERVAL_LINES)
    return len(cells), [text for lines, text in cells if lines != 1]


def assert_on_a_phone_screen(page: Any, name: str) -> dict[str, list[Any]]:
    """At 375 px: no sideways scrolling, every table and chart inside the screen, every
    chart text whole and at least 12 px; the edges measured."""
    assert sideways_overflow(page) == 0, name
    edges: dict[str, list[Any]] = page.evaluate(EDGES)
    assert edges["tables"] and max(edges["tables"]) <= PHONE["width"], (name, edges["tables"])
    assert all(right <= PHONE["width"] for right in edges["charts"]), name
    for size, left, right in edges["texts"]:
        assert size >= 12 and 0 <= left and right <= PHONE["width"], (name, size, left, right)
    return edges


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_changed_pages_fit_both_widths_and_pass_axe(
    live_server: LiveServer, survey: str, new_context: Callable[..., Any], language: str
) -> None:
    """Each page loaded once: at 1280 px no interval wraps and nothing scrolls sideways,
    at 375 px tables and charts stay on the screen; axe at both widths."""
    page = logged_in(new_context, live_server)
    wrapped: dict[str, list[str]] = {}
    problems = {}
    counted = 0
    for name, path in PAGES.items():
        page.set_viewport_size(DESKTOP)
        visit(page, live_server, path, language)
        cells, wrapped[name] = wrapped_intervals(page)
        counted += cells
        assert sideways_overflow(page) == 0, name
        if violations := axe_violations(page):
            problems[name, DESKTOP["width"]] = violations
        page.set_viewport_size(PHONE)
        edges = assert_on_a_phone_screen(page, name)
        if violations := axe_violations(page):
            problems[name, PHONE["width"]] = violations
    assert counted >= 40  # every page has interval cells to check
    assert not any(wrapped.values()), wrapped
    assert len(edges["charts"]) >= 5  # the public page, visited last, has its charts
    assert not problems, problems
