"""A survey shown in random order, through Flask's test client on a real SQLite file: each
page draws its own order, every render is the same number of bytes, an answer chosen by
its words is stored as the option's index as written whatever place the page gave it, and
nothing stored differs between two orders."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.definitions import parse_definition
from survey_app.storage.accounts import find_researcher
from survey_app.storage.backends import Database
from survey_app.storage.surveys import store_survey
from survey_app.web.database_session import get_db
from tests.support.respondents import hidden_fields

SLUG = "shuffled"
WHERE = ["Halls", "A flat", "With family", "Somewhere else", "None of these"]
DEFINITION = f"""\
slug: {SLUG}
title: Shuffled
question_order: random
questions:
  - {{key: where, text: "Where do you live?", type: choice, sensitive: false,
     options: {WHERE!r}, option_order: random, fixed_options: [5]}}
  - {{key: year, text: "Which year?", type: choice, sensitive: false,
     options: [First, Second, Third, Fourth], option_order: random}}
  - {{key: mood, text: "How are you?", type: scale, sensitive: false,
     options: [Bad, So-so, Good], option_order: reverse}}
  - {{key: cheated, text: "Cheated?", type: yes_no}}
  - {{key: used, text: "Which have you used?", type: multiple,
     options: [Cannabis, Cocaine, Ecstasy], option_order: random}}
"""
LEGEND = re.compile(r"<legend>\d+\. ([^<]+?)(?: <span|</legend>)")
#: A plain option's radio button and its words.
RADIO = re.compile(r'<input type="radio" name="(\w+)" value="(\d+)"[^>]*> ([^<]+)</label>')


@pytest.fixture
def shuffled(app: Flask) -> Flask:
    with app.app_context():
        store_survey(get_db(), parse_definition(DEFINITION, "shuffled.yaml"))
    return app


def render(app: Flask) -> tuple[str, FlaskClient]:
    client = app.test_client()
    response = client.get(f"/s/{SLUG}")
    assert response.status_code == 200
    return response.get_data(as_text=True), client


def shown_order(page: str) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]:
    """The questions' order and every plain option's place, as the page shows them."""
    return tuple(LEGEND.findall(page)), tuple(RADIO.findall(page))


def renders_until(app: Flask, differs: Callable[[str], bool]) -> tuple[str, FlaskClient]:
    """A render for which ``differs``: with 5!·4!·3!·2·3! orders, 60 tries all failing
    would mean the order is not drawn at all."""
    for _ in range(60):
        page, client = render(app)
        if differs(page):
            return page, client
    raise AssertionError("every render showed the same order")


def test_each_page_draws_its_order_and_all_are_the_same_size(shuffled: Flask) -> None:
    first, _ = render(shuffled)
    other, _ = renders_until(shuffled, lambda page: shown_order(page) != shown_order(first))
    assert len(first.encode()) == len(other.encode())
    questions = sorted(shown_order(first)[0])
    assert questions == sorted(shown_order(other)[0]) and len(questions) == 5
    # "None of these" keeps its place: last of its question's options on every page.
    for page in (first, other):
        where = [words for name, _value, words in RADIO.findall(page) if name == "where"]
        assert sorted(where) == sorted(WHERE) and where[-1] == "None of these"


def test_orders_change_the_page_never_the_form_or_its_values(shuffled: Flask) -> None:
    """Whatever the order, each option is posted as its index as written, and the
    browser's script is handed the questions in their written order."""
    first, _ = render(shuffled)
    other, _ = renders_until(shuffled, lambda page: shown_order(page) != shown_order(first))
    for page in (first, other):
        assert sorted(RADIO.findall(page)) == sorted(RADIO.findall(first))
        assert 'data-questions=\'["where", "year", "mood", "cheated", "used"]\'' in page
        assert {value for name, value, words in RADIO.findall(page) if words == "A flat"} == {"1"}


def test_an_answer_is_stored_as_written_whatever_place_it_was_shown_in(
    shuffled: Flask, database: Database
) -> None:
    """Two respondents choose the same words on pages that show them in different
    places: both are stored as the options' indexes as written, and the two stored rows
    are the same text, so nothing in storage tells the orders apart."""
    chosen = {"where": "A flat", "year": "Third", "mood": "Good"}

    def moved(page: str) -> bool:
        places = [words for name, _value, words in RADIO.findall(page) if name == "where"]
        return places.index("A flat") != WHERE.index("A flat")

    for page, client in (render(shuffled), renders_until(shuffled, moved)):
        form = hidden_fields(page)
        for name, value, words in RADIO.findall(page):
            if chosen.get(name) == words:
                form[name] = value
        ticks = {f"used.{j}": "n" for j in range(3)}
        response = client.post(f"/s/{SLUG}", data={**form, **ticks, "cheated": "n"})
        assert response.status_code == 200, response.get_data(as_text=True)[:300]
    rows = list(database.query("SELECT answers FROM responses ORDER BY id"))
    assert len(rows) == 2
    stored = [row["answers"] for row in rows]
    for text in stored:
        assert '"where": 1' in text and '"year": 2' in text and '"mood": 2' in text, text
    assert re.sub(r'"(cheated|used)": [^,}]+', "", stored[0]) == re.sub(
        r'"(cheated|used)": [^,}]+', "", stored[1]
    )


def test_the_builder_preview_shows_one_drawn_order(
    app: Flask, logged_in: FlaskClient, researcher: str
) -> None:
    """The owner's preview of a draft is the respondent's page with a draw of its own:
    every question and option, each option still valued by its index as written."""
    with app.app_context():
        owner = find_researcher(get_db(), researcher)
        assert owner is not None
        definition = parse_definition(DEFINITION, "shuffled.yaml")
        store_survey(get_db(), definition, owner_id=owner.id, status="draft")
    seen = set()
    for _ in range(30):
        preview = logged_in.get(f"/research/builder/drafts/{SLUG}/preview")
        assert preview.status_code == 200
        page = preview.get_data(as_text=True).split('class="preview-frame"', 1)[1]
        assert sorted(LEGEND.findall(page)) == sorted(q.text for q in definition.questions)
        assert {value for _name, value, words in RADIO.findall(page) if words == "A flat"} == {"1"}
        seen.add(shown_order(page))
    assert len(seen) > 1
