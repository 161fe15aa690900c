"""The preview walks a sectioned survey's sections: on the saved draft's preview page by
links (``?section=N``, anything else the first page), each section alone as a respondent
sees it and nothing sendable; in the builder every section is shown, with the buttons
builder.js walks them with and, without it, a link to the preview page. A survey without
sections is previewed as before."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.definitions import load_definition
from survey_app.storage.accounts import find_researcher
from survey_app.storage.surveys import store_survey
from survey_app.web.database_session import get_db
from tests.app.test_builder import BUILDER, page_form, text
from tests.support.examples import MIXED
from tests.support.paths import ROOT

SECTIONS = ROOT / "examples" / "sections.yaml"
SLUG = "student-health-sections"
PREVIEW = f"{BUILDER}drafts/{SLUG}/preview"
#: A question of each of the example's three sections.
QUESTIONS = (
    "Which year of study are you in?",
    "Have you ever submitted work that was not your own?",
    "Have you taken stimulants without a prescription to study?",
)


@pytest.fixture
def builder(logged_in: FlaskClient, app: Flask) -> FlaskClient:
    """ada, logged in, with the three-section example and the mixed example as drafts."""
    with app.app_context():
        ada = find_researcher(get_db(), "ada")
        assert ada is not None
        for path in (SECTIONS, MIXED):
            store_survey(get_db(), load_definition(path), ada.id, "draft")
    return logged_in


def walk_links(page: str) -> dict[str, str]:
    """The walk's links on the draft's preview page, by rel (prev, next)."""
    nav = re.search(r'<nav class="section-walk"[^>]*>(.*?)</nav>', page, re.S)
    assert nav is not None, "no walk through the sections"
    found = re.findall(r'<a href="([^"]+)" rel="(\w+)">', nav.group(1))
    return {rel: href.replace("&amp;", "&") for href, rel in found}


def frame(page: str) -> str:
    """What the preview's disabled fieldset holds: the respondent's page."""
    parts = page.split('<fieldset disabled class="preview-frame">', 1)
    assert len(parts) == 2, "the respondent's page sits in a disabled fieldset"
    return parts[1]


def visible_sections(page: str) -> list[str]:
    """The ids of the sections in the page that are not hidden."""
    tags = re.findall(r'<section class="survey-section" id="(section-\d)"([^>]*)>', page)
    return [id_ for id_, rest in tags if " hidden" not in rest]


def test_the_preview_page_opens_on_the_first_section_as_a_respondent_sees_it(
    builder: FlaskClient,
) -> None:
    page = text(builder.get(PREVIEW))
    assert visible_sections(page) == ["section-0"]
    assert "Section 1 of 3" in page and QUESTIONS[0] in page
    assert walk_links(page) == {"next": f"{PREVIEW}?section=2"}
    assert " autofocus" not in frame(page)  # the page opens at its top, not at a section


def test_the_preview_page_walks_to_each_section_by_its_links(builder: FlaskClient) -> None:
    page = text(builder.get(f"{PREVIEW}?section=2"))
    shown = frame(page)
    assert visible_sections(page) == ["section-1"] and "Section 2 of 3" in shown
    # The section alone: the ledger and the planner above still list every question.
    assert QUESTIONS[1] in shown and QUESTIONS[0] not in shown and QUESTIONS[2] not in shown
    assert "This part is not randomized" not in shown  # the first section's description
    # As after a respondent's Next: the heading takes the focus.
    assert re.search(r'<h2 id="section-title-1" tabindex="-1" autofocus>Studying</h2>', shown)
    assert walk_links(page) == {"prev": f"{PREVIEW}?section=1", "next": f"{PREVIEW}?section=3"}
    # The walk is outside the disabled fieldset; nothing inside can be sent.
    assert '<nav class="section-walk"' not in shown
    assert 'name="submission_id" value=""' in shown and 'name="sections-carried"' not in shown
    last = text(builder.get(f"{PREVIEW}?section=3"))
    assert visible_sections(last) == ["section-2"] and QUESTIONS[2] in frame(last)
    assert "The last part. Your answers are randomized" in frame(last)  # its description
    assert walk_links(last) == {"prev": f"{PREVIEW}?section=2"}


def test_the_walk_keeps_the_page_language(builder: FlaskClient) -> None:
    page = text(builder.get(f"{PREVIEW}?section=2&lang=ko"))
    links = walk_links(page)
    assert set(links) == {"prev", "next"}
    assert all("lang=ko" in href for href in links.values()), links


@pytest.mark.parametrize("asked", ["0", "4", "99999", "-1", "two", "1.5", "", "²"])
def test_a_section_the_survey_does_not_have_shows_the_first_page(
    builder: FlaskClient, asked: str
) -> None:
    response = builder.get(PREVIEW, query_string={"section": asked})
    assert response.status_code == 200
    page = text(response)
    assert visible_sections(page) == ["section-0"]
    assert walk_links(page) == {"next": f"{PREVIEW}?section=2"}


def test_the_builder_shows_every_section_with_the_walk_for_its_script(
    builder: FlaskClient,
) -> None:
    page = text(builder.get(f"{BUILDER}drafts/{SLUG}"))
    shown = frame(page)
    assert visible_sections(page) == ["section-0", "section-1", "section-2"]
    assert " autofocus" not in shown
    walk = re.search(r'<div class="section-walk" data-section-walk hidden>(.*?)</div>', page, re.S)
    assert walk is not None
    assert walk.group(1).count('<button type="button" data-step=') == 2
    assert 'role="status" aria-live="polite"' in walk.group(1)
    assert f'<a href="{PREVIEW}">Walk through the sections on the preview page</a>' in page
    # The live preview's panel, for builder.js: the same walk; the draft is not named there.
    fragment = text(builder.post(f"{BUILDER}preview", data=page_form(page)))
    assert visible_sections(fragment) == ["section-0", "section-1", "section-2"]
    assert "data-section-walk hidden" in fragment
    assert "once the draft is saved, its preview page walks through them" in fragment


def test_a_survey_without_sections_is_previewed_as_before(builder: FlaskClient) -> None:
    slug = load_definition(MIXED).slug
    for path in (f"drafts/{slug}/preview", f"drafts/{slug}/preview?section=2", f"drafts/{slug}"):
        page = text(builder.get(BUILDER + path))
        assert "section-walk" not in page and "survey-section" not in page
        assert 'id="survey-form"' in frame(page)
