"""Issue 19's "done when", in Chromium against the real server: a survey with every
question type is built in the builder, answered with JavaScript and without, and read back
on the dashboard, the page by group, the exports and a public page.

The survey built is examples/every-type.yaml (its definition, downloaded from the
builder, parses to the same questions), so `auto` lands on subset selection for the
eight-option choice at ε = 1 and on the piecewise mechanism for the number at ε = 4. Then
600 simulated respondents with known answers are stored, and the estimates the pages show
are the ones the functions give whose coverage tests/app/test_every_type.py simulates.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import expect

from survey_app.domain.definitions import parse_definition
from survey_app.domain.question_estimates import question_estimate
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey
from tests.support.browser import LiveServer, answer, axe_violations, submit, watch
from tests.support.every_type import (
    EVERY_TYPE,
    reports,
    stored_answers,
    tally_cells,
    true_answers,
)
from tests.support.stored import opened
from tests.support.stored import stored_answers as stored_answers_of

OWNER = "every-type-owner"
PASSWORD = "a long password for every type"
SLUG = "built-every-type"  # the example's own slug is another test's on this server
SIMULATED = 600
EXAMPLE = parse_definition(EVERY_TYPE.read_text(encoding="utf-8"))
#: The builder's "add" button for each question after the first (a yes/no question).
ADD = {
    "choice": "Add a choice question",
    "number": "Add a number question",
    "multiple": "Add a tick-all-that-apply question",
    "scale": "Add a rating scale",
}


def press(page: Any, name: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=name, exact=True).first.click()


def log_in(page: Any, server: LiveServer, path: str) -> None:
    page.goto(server.url(path))
    page.get_by_label("Username").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    press(page, "Log in")


def unfold(page: Any, index: int) -> None:
    """Open question ``index`` (folded to one line) by its summary, as a researcher does."""
    details = page.locator(f"#b-q{index} > details")
    if details.get_attribute("open") is None:
        details.locator("summary").click()


def build(page: Any) -> None:
    """Every question of the example, typed into the builder as a researcher would."""
    # The builder starts with one yes/no question; the example's first is a plain choice.
    kinds = [q.type for q in EXAMPLE.questions]
    for kind in kinds[1:]:
        press(page, ADD[kind] if kind != "yes_no" else "Add a yes/no question")
    unfold(page, 0)
    page.select_option("#b-q0-type", kinds[0])
    page.fill("#b-slug", SLUG)
    page.fill("#b-title-en", EXAMPLE.title)
    page.fill("#b-description-en", EXAMPLE.description)
    for index, question in enumerate(EXAMPLE.questions):
        unfold(page, index)
        page.fill(f"#b-q{index}-key", question.key)
        page.fill(f"#b-q{index}-text-en", question.text)
        if question.options:
            page.fill(f"#b-q{index}-options-en", "\n".join(question.options))
        if question.type == "scale" and question.scores != tuple(range(len(question.options))):
            page.fill(f"#b-q{index}-scores", "\n".join(str(s) for s in question.scores))
        if question.min is not None:
            page.fill(f"#b-q{index}-min", str(question.min))
            page.fill(f"#b-q{index}-max", str(question.max))
        if question.epsilon is not None:
            page.fill(f"#b-q{index}-epsilon", str(question.epsilon))
        if not question.sensitive:
            page.locator(f"#b-q{index}-sensitive").uncheck()
    press(page, "Save draft")


def open_survey(page: Any, server: LiveServer) -> None:
    page.goto(server.url(f"/research/surveys/{SLUG}/study"))
    with page.expect_navigation():
        page.get_by_role("link", name="Open the survey…").click()
    press(page, "Yes, open the survey")
    expect(page.locator("#status")).to_contain_text("open")


def respond(page: Any, server: LiveServer, javascript: bool) -> dict[str, str]:
    """One respondent answers every question; the fields their browser posted."""
    log = watch(page)
    assert page.goto(server.url(f"/s/{SLUG}")).status == 200
    page.get_by_role("group", name="Which year of study").get_by_label("Third year").check()
    answer(page, {"cheated": "yes"})
    page.get_by_role("group", name="most often").get_by_label("Cannabis").check()
    if javascript:
        page.get_by_role("spinbutton", name="A whole number from 0 to 50").fill("12")
    else:
        page.get_by_role("combobox", name="A whole number from 0 to 50:").select_option("12")
    answer(page, {f"done.{j}": "yes" if j in (1, 3) else "no" for j in range(5)})
    page.get_by_role("group", name="six or more drinks").get_by_label("Monthly").check()
    page.get_by_role("group", name="How satisfied").get_by_label("Satisfied", exact=True).check()
    assert submit(page).status == 200
    expect(page.locator("h1")).to_have_text("Thank you")
    assert not log.page_errors and not log.console_errors
    [(_url, body)] = log.posts()
    return dict(item.split("=", 1) for item in body.split("&"))


def simulate_respondents(server: LiveServer) -> Survey:
    """SIMULATED respondents with known answers, randomized by each question's own
    mechanism (seeded: simulated people, never real answers), stored as the app stores."""
    with opened(server.database) as db:
        survey = get_survey(db, SLUG)
        assert survey is not None
        rng = np.random.default_rng(20261126)
        for i, reported in enumerate(
            reports(survey, stored_answers(survey, true_answers(SIMULATED, rng), rng))
        ):
            record_response(db, survey, reported, f"simulated-{i}")
    return survey


def stored_values(server: LiveServer) -> list[dict[str, Any]]:
    return stored_answers_of(server.database, SLUG)


@pytest.fixture(scope="module")
def owner(live_server: LiveServer) -> str:
    live_server.cli("create-researcher", OWNER, "--password-stdin", stdin=PASSWORD + "\n")
    return OWNER


def test_every_type_built_answered_both_ways_and_read_back(
    live_server: LiveServer, owner: str, new_context: Callable[..., Any]
) -> None:
    researcher = new_context().new_page()
    log_in(researcher, live_server, "/research/builder/")
    build(researcher)
    definition = researcher.request.get(
        live_server.url(f"/research/builder/drafts/{SLUG}/survey.yaml")
    )
    assert definition.ok and definition.headers["content-type"].startswith("application/"), (
        researcher.locator("main").inner_text()[:500]
    )
    built = parse_definition(definition.text())
    assert built.questions == EXAMPLE.questions
    ledger = json.loads(live_server.cli("ledger", SLUG, "--json"))
    mechanisms = {q["key"]: q["mechanism"] for q in ledger["questions"]}
    assert mechanisms["substance"] == "subset_selection" and mechanisms["drinks"] == "piecewise"
    open_survey(researcher, live_server)

    with_script = respond(new_context().new_page(), live_server, javascript=True)
    assert with_script["randomized"] == "client" and with_script["year"] == "2"
    assert with_script["drinks"] != "12" and len(with_script["drinks"]) == 17  # a report
    without = respond(new_context(java_script_enabled=False).new_page(), live_server, False)
    assert "randomized" not in without and without["drinks"] == "12"  # the server randomizes
    assert len(stored_values(live_server)) == 2

    survey = simulate_respondents(live_server)
    rows = stored_values(live_server)
    # The dashboard's estimates (and export.csv's) are question_estimate's on the stored reports.
    shown = researcher.request.get(
        live_server.url(f"/research/surveys/{SLUG}/estimates.json")
    ).json()
    for question in survey.questions:
        cells = tally_cells(question, (row[question.key] for row in rows))
        expected = question_estimate(question, cells, 0.95, "clopper-pearson")
        listed = [r for r in shown["rows"] if r["question"] == question.key]
        bounds = [
            b for c in expected.categories if c.estimate for b in (c.estimate.low, c.estimate.high)
        ]
        if expected.mean is not None:
            bounds += [expected.mean.low, expected.mean.high]
        got = [b for r in listed if r["ci_low"] is not None for b in (r["ci_low"], r["ci_high"])]
        assert sorted(got) == pytest.approx(sorted(bounds), abs=1e-6), question.key

    researcher.goto(live_server.url(f"/research/surveys/{SLUG}"))
    for question in survey.questions:
        expect(researcher.locator("main")).to_contain_text(question.text)
    assert axe_violations(researcher) == []
    researcher.goto(live_server.url(f"/research/surveys/{SLUG}/groups?question=substance&by=year"))
    expect(researcher.locator("table").first).to_contain_text("Fourth year or later")
    groups = researcher.request.get(
        live_server.url(f"/research/surveys/{SLUG}/groups.csv?question=done&by=year")
    )
    assert groups.status == 200 and "Shoplifted" in groups.text()

    exported = researcher.request.get(live_server.url(f"/research/surveys/{SLUG}/responses.csv"))
    table = list(csv.DictReader(io.StringIO(exported.text())))
    assert len(table) == SIMULATED + 2
    assert {f"substance.{j}" for j in range(8)} <= set(table[0])  # one 0/1 column per option
    for kind in ("sav", "dta"):
        download = researcher.request.get(
            live_server.url(f"/research/surveys/{SLUG}/responses.{kind}")
        )
        assert download.status == 200 and len(download.body()) > 1000

    live_server.cli("budget", SLUG, "2")
    live_server.cli("publish", SLUG, "--figure", "estimates", "--epsilon", "1")
    visitor = new_context().new_page()
    assert visitor.goto(live_server.url(f"/results/{SLUG}")).status == 200
    for question in survey.sensitive_questions:
        expect(visitor.locator("main")).to_contain_text(question.text)
    assert axe_violations(visitor) == []
