"""A sectioned survey through Flask's test client: the page of every section, the walk
without JavaScript (a POST per section, reports carried signed, stored once at the end),
the one POST with JavaScript, and every tampered carried field refused with nothing stored.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Mapping
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous import URLSafeTimedSerializer

from survey_app import create_app
from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.storage.backends import Database
from survey_app.storage.invitations import create_invitations
from survey_app.storage.surveys import Question, Survey, store_survey
from survey_app.web import form_tokens
from survey_app.web.database_session import get_db
from survey_app.web.respond import carried_reports, section_steps
from tests.support.invitations import start
from tests.support.paths import ROOT
from tests.support.stored import count, opened
from tests.support.stored import rows as stored_rows

SLUG = "student-health-sections"
URL = f"/s/{SLUG}"
CARRIED = "sections-carried"
#: True answers, section by section, as the page without JavaScript sends them.
ANSWERS = [
    {"year": "2"},
    {"cheated": "y", "all_nighters": "03"},
    {"stimulants": "n", "sleep": "1", "stress": "y"},
]
NEXT = {"sections-go": "next"}
BACK = {"sections-go": "back"}


@pytest.fixture
def survey(app: Flask) -> Survey:
    with app.app_context():
        return store_survey(get_db(), load_definition(ROOT / "examples" / "sections.yaml"))


def hidden(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([\w-]+)" value="([^"]*)">', page))


def carried_payload(page: str) -> dict[str, Any]:
    """What a page carries, read as anyone holding the page can (signed, not encrypted)."""
    text = hidden(page)[CARRIED].split(".")[0]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    return decoded


def shown_section(page: str) -> int:
    """The 1-based number of the section a no-JS page shows (the GET page: the first)."""
    match = re.search(r"Section (\d) of 3", page)
    assert match, page
    return int(match.group(1))


def rows(database: Database) -> list[dict[str, Any]]:
    return [json.loads(row["answers"]) for row in stored_rows(database, "responses")]


def empty(page: str) -> bool:
    """No answer comes back into a page: nothing checked, nothing selected."""
    return " checked" not in page and " selected" not in page


class Walk:
    """One respondent without JavaScript: the page in hand and its hidden fields."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        response = client.get(URL)
        assert response.status_code == 200
        self.page = response.get_data(as_text=True)
        self.status = 200

    def send(self, fields: Mapping[str, str], **changed: str) -> str:
        data = {**hidden(self.page), **fields, **changed}
        response = self.client.post(URL, data=data)
        self.status = response.status_code
        self.page = response.get_data(as_text=True)
        return self.page


def test_the_page_holds_the_first_section_and_where_the_others_are(
    app: Flask, survey: Survey
) -> None:
    """The first page carries one section, as every page without JavaScript does; the
    script fetches the others from the form's data-sections address, hidden, their fields
    disabled, each with its heading and place."""
    client = app.test_client()
    page = client.get(URL).get_data(as_text=True)
    sections = re.findall(r'<section class="survey-section" id="section-(\d)"([^>]*)>', page)
    assert sections == [("0", ' aria-labelledby="section-title-0"')]
    assert "Section 1 of 3" in page and "Section 2 of 3" not in page
    assert "/js/sections.js?v=" in page and 'data-randomize="survey"' in page
    assert carried_payload(page)["section"] == 0 and carried_payload(page)["reports"] == {}
    (address,) = re.findall(r'data-sections="([^"]+)"', page)
    assert address == f"{URL}/sections?lang=en"
    others = client.get(address)
    assert others.status_code == 200
    rest = others.get_data(as_text=True)
    sections = re.findall(r'<section class="survey-section" id="section-(\d)"([^>]*)>', rest)
    assert [(index, "hidden" in tag) for index, tag in sections] == [("1", True), ("2", True)]
    fieldsets = re.findall(r'<fieldset class="section-fields"[^>]*>', rest)
    assert ["disabled" in tag for tag in fieldsets] == [True, True]
    assert re.search(r'<progress max="3" value="2" aria-labelledby="progress-1">', rest)
    assert re.search(r'<h2 id="section-title-1" tabindex="-1">Studying</h2>', rest)
    assert "<html" not in rest and "<form" not in rest and "submission_id" not in rest
    for question in survey.questions[1:]:
        assert f'name="{question.key}"' in rest


def test_the_other_sections_are_shown_only_where_the_page_would_be(app: Flask) -> None:
    """What the first page's GET would withhold, the other sections' address withholds
    (404): a closed survey's, one by invitation without an open one, one whose consent
    was not given; and a survey of one page has none."""
    with app.app_context():
        db = get_db()
        source = (ROOT / "examples" / "sections.yaml").read_text("utf-8")
        consented = source.replace("slug: student-health-sections", "slug: consented-sections")
        consented = consented.replace("max_epsilon: 8", "max_epsilon: 8\nconsent: Agree?")
        store_survey(db, parse_definition(consented, "consented.yaml"))
        invited = source.replace("slug: student-health-sections", "slug: invited-sections")
        invited = invited.replace("max_epsilon: 8", "max_epsilon: 8\naccess: invitation")
        (token,) = create_invitations(
            db, store_survey(db, parse_definition(invited, "invited.yaml")), 1
        )
    client = app.test_client()
    assert client.get("/s/consented-sections/sections").status_code == 404
    assert client.get("/s/consented-sections/sections?agree=yes").status_code == 200
    page = client.get("/s/consented-sections?agree=yes").get_data(as_text=True)
    assert 'data-sections="/s/consented-sections/sections?lang=en&amp;agree=yes"' in page
    assert client.get("/s/invited-sections/sections").status_code == 404
    assert client.get("/s/invited-sections/sections?invitation=" + "A" * 43).status_code == 404
    start(client, f"/s/invited-sections?invitation={token}")
    page = client.get("/s/invited-sections").get_data(as_text=True)
    (address,) = re.findall(r'data-sections="([^"]+)"', page)
    assert "invitation" not in address  # the answer ticket goes in its cookie only
    assert client.get(address.replace("&amp;", "&")).status_code == 200
    assert app.test_client().get(address.replace("&amp;", "&")).status_code == 404
    assert client.get("/s/campus-health/sections").status_code == 404  # one page


def test_without_javascript_each_section_is_a_page_and_the_response_is_stored_once(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = Walk(app.test_client())
    token = hidden(walk.page)["submission_id"]
    for number, answers in enumerate(ANSWERS[:2], start=2):
        page = walk.send({**answers, **NEXT})
        assert walk.status == 200, page
        assert shown_section(page) == number and empty(page)
        assert f"Section {number - 1} of 3" not in page  # that section only
        assert "/js/" not in page and "data-randomize" not in page
        assert hidden(page)["submission_id"] == token
        assert rows(database) == []  # nothing stored on the way
    assert set(carried_payload(walk.page)["reports"]) == {"year", "cheated", "all_nighters"}
    final = {**hidden(walk.page), **ANSWERS[2], **NEXT}
    page = walk.send(final)
    assert walk.status == 200 and "Thank you" in page
    (stored,) = rows(database)
    assert set(stored) == {q.key for q in survey.questions}
    assert stored["year"] == 2  # a plain covariate, carried and stored as given
    # Sent again (a retry): the same page, nothing stored twice.
    assert walk.client.post(URL, data=final).status_code == 200
    assert len(rows(database)) == 1


def test_only_the_post_that_stores_counts_towards_the_submission_limit(database_url: str) -> None:
    """Two respondents walk three sections each (six POSTs) under a limit of two
    submissions a minute and both are stored; the third is refused at its first Next."""
    limited = create_app(
        {
            "DATABASE": database_url,
            "SECRET_KEY": "k",
            "RATE_LIMITS": True,
            "SUBMIT_RATE_LIMIT": "2 per minute",
        }
    )
    with limited.app_context():
        store_survey(get_db(), load_definition(ROOT / "examples" / "sections.yaml"))
    for _respondent in range(2):
        walk = Walk(limited.test_client())
        for answers in ANSWERS:
            page = walk.send({**answers, **NEXT})
            assert walk.status == 200, page
        assert "Thank you" in page
    walk = Walk(limited.test_client())
    walk.send({**ANSWERS[0], **NEXT})
    assert walk.status == 429
    with opened(database_url) as database:
        assert count(database, "responses") == 2


def test_back_shows_the_section_before_empty_and_its_answers_are_replaced(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = Walk(app.test_client())
    walk.send({**ANSWERS[0], **NEXT})
    walk.send({**ANSWERS[1], **NEXT})
    assert set(carried_payload(walk.page)["reports"]) == {"year", "cheated", "all_nighters"}
    # Back from the last section, with answers typed there: they are dropped unread.
    page = walk.send({**ANSWERS[2], **BACK})
    assert walk.status == 200 and shown_section(page) == 2 and empty(page)
    assert carried_payload(page) | {"pad": ""} == {
        **carried_payload(page),
        "section": 1,
        "reports": {"year": 2},
        "pad": "",
    }
    page = walk.send({**BACK})
    assert shown_section(page) == 1 and carried_payload(page)["reports"] == {}
    walk.send({"year": "0", **NEXT})
    walk.send({**ANSWERS[1], **NEXT})
    walk.send({**ANSWERS[2], **NEXT})
    assert walk.status == 200
    (stored,) = rows(database)
    assert stored["year"] == 0  # answered again: replaced


def lying_report(question: Question, value: Any) -> Any:
    """Coins that never tell the truth: every report differs from the true answer."""
    if value is None or not question.sensitive:
        return value
    if question.type.is_yes_no:
        return not value
    if question.type.has_options:
        return (value + 1) % len(question.options)
    return value + 1000


@pytest.fixture
def lying_coins(monkeypatch: pytest.MonkeyPatch) -> None:
    def randomize(survey: Survey, values: Mapping[str, Any]) -> dict[str, Any]:
        return {q.key: lying_report(q, values.get(q.key)) for q in survey.questions}

    monkeypatch.setattr(section_steps, "randomize_response", randomize)


@pytest.mark.usefixtures("lying_coins")
def test_the_carried_field_and_the_store_hold_reports_never_a_true_answer(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = Walk(app.test_client())
    walk.send({**ANSWERS[0], **NEXT})
    page = walk.send({**ANSWERS[1], **NEXT})
    # True: cheated yes, 3 nights; the lying coins reported no and 1003.
    assert carried_payload(page)["reports"] == {"year": 2, "cheated": 0, "all_nighters": 1003}
    walk.send({**ANSWERS[2], **NEXT})
    assert rows(database) == [
        {
            "year": 2,
            "cheated": 0,
            "all_nighters": 1003,
            "stimulants": 1,
            "sleep": 2,
            "stress": 0,
        }
    ]


def test_with_javascript_the_survey_is_sent_once_as_reports(
    app: Flask, survey: Survey, database: Database
) -> None:
    """What randomize.js posts (no carried field): every section's reports at once."""
    client = app.test_client()
    fields = hidden(client.get(URL).get_data(as_text=True))
    del fields[CARRIED]  # sections.js removes it
    reports = {
        "year": "2",
        "cheated": "y",
        "all_nighters": "00000000000000003",
        "stimulants": "n",
        "sleep": "1",
        "stress": "y",
    }
    response = client.post(URL, data={**fields, **reports, "randomized": "client"})
    assert response.status_code == 200
    assert len(rows(database)) == 1
    # The carried field beside the browser's reports is refused: it is no field of that path.
    again = hidden(client.get(URL).get_data(as_text=True))
    response = client.post(URL, data={**again, **reports, "randomized": "client"})
    assert response.status_code == 400
    assert len(rows(database)) == 1


# Every tampered walk: 400, the survey shown again empty, nothing stored.


def refused(walk: Walk, database: Database, section: int) -> None:
    assert walk.status == 400, walk.page
    assert "Nothing was stored" in walk.page and empty(walk.page)
    assert shown_section(walk.page) == section
    assert rows(database) == []


def on_second_page(app: Flask) -> Walk:
    walk = Walk(app.test_client())
    walk.send({**ANSWERS[0], **NEXT})
    assert walk.status == 200
    return walk


def test_a_carried_field_altered_is_refused_and_the_survey_starts_again(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = on_second_page(app)
    carried = hidden(walk.page)[CARRIED]
    payload = carried_payload(walk.page)
    payload["reports"]["year"] = 3
    body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode())
    forged = body.decode().rstrip("=") + carried[carried.index(".") :]
    page = walk.send({**ANSWERS[1], **NEXT}, **{CARRIED: forged})
    refused(walk, database, 1)
    assert "could not be used" in page


def test_an_expired_carried_field_is_refused(
    app: Flask, survey: Survey, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [time.time()]
    monkeypatch.setattr(form_tokens, "now", lambda: now[0])
    walk = on_second_page(app)
    old = hidden(walk.page)
    now[0] += app.config["SECTION_MAX_AGE_HOURS"] * 3600 + 1
    csrf = hidden(walk.client.get(URL).get_data(as_text=True))["csrf_token"]
    walk.page = walk.page.replace(old["csrf_token"], csrf)
    page = walk.send({**ANSWERS[1], **NEXT})
    refused(walk, database, 1)
    assert "expired" in page
    assert hidden(page)["submission_id"] != old["submission_id"]


def test_a_carried_field_of_another_survey_is_refused(
    app: Flask, survey: Survey, database: Database
) -> None:
    text = (ROOT / "examples" / "sections.yaml").read_text("utf-8")
    with app.app_context():
        store_survey(get_db(), parse_definition(text.replace(SLUG, "twin", 1)))
    client = app.test_client()
    twin = hidden(client.get("/s/twin").get_data(as_text=True))
    twin_page = client.post("/s/twin", data={**twin, **ANSWERS[0], **NEXT}).get_data(as_text=True)
    walk = on_second_page(app)
    walk.send({**ANSWERS[1], **NEXT}, **{CARRIED: hidden(twin_page)[CARRIED]})
    refused(walk, database, 1)
    # The survey is checked on its own too, not only through the form it names.
    walk = on_second_page(app)
    twin_id = carried_payload(twin_page)["survey"]
    assert twin_id != survey.id
    payload = {**carried_payload(walk.page), "survey": twin_id}
    walk.send({**ANSWERS[1], **NEXT}, **{CARRIED: signed(payload)})
    refused(walk, database, 1)


def test_a_carried_field_replayed_into_another_respondents_form_is_refused(
    app: Flask, survey: Survey, database: Database
) -> None:
    first, second = on_second_page(app), on_second_page(app)
    second.send({**ANSWERS[1], **NEXT}, **{CARRIED: hidden(first.page)[CARRIED]})
    refused(second, database, 1)


def signed(payload: dict[str, Any]) -> str:
    """A carried field signed with the app's key, as only the app can (the test knows it)."""
    serializer = URLSafeTimedSerializer(
        b"test-secret", salt=carried_reports.SALT, signer_kwargs={"digest_method": hashlib.sha256}
    )
    return str(serializer.dumps(payload))


@pytest.mark.parametrize("section", [3, -1, 7])
def test_a_section_out_of_range_is_refused(
    app: Flask, survey: Survey, database: Database, section: int
) -> None:
    walk = on_second_page(app)
    payload = {**carried_payload(walk.page), "section": section}
    walk.send({**ANSWERS[1], **NEXT}, **{CARRIED: signed(payload)})
    refused(walk, database, 1)


def test_the_key_signs_what_the_tests_forge(app: Flask, survey: Survey) -> None:
    """The forgeries above are refused for what they say, not for a wrong key: the same
    payload signed by the test is accepted."""
    walk = on_second_page(app)
    walk.send({**ANSWERS[1], **NEXT}, **{CARRIED: signed(carried_payload(walk.page))})
    assert walk.status == 200 and shown_section(walk.page) == 3


def test_skipping_ahead_is_refused_and_the_section_shown_again(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = on_second_page(app)
    carried = hidden(walk.page)[CARRIED]
    page = walk.send({**ANSWERS[2], **NEXT})  # the last section's answers on the second page
    refused(walk, database, 2)
    assert "unexpected field" in page and hidden(page)[CARRIED] == carried
    # Claiming the reports of the second section without answering it:
    payload = {**carried_payload(walk.page), "section": 2}
    walk.send({**ANSWERS[2], **NEXT}, **{CARRIED: signed(payload)})
    refused(walk, database, 1)


def test_fields_of_another_section_are_refused(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = on_second_page(app)
    page = walk.send({**ANSWERS[1], **ANSWERS[0], **NEXT})
    refused(walk, database, 2)
    assert "unexpected field, &#39;year&#39;" in page


def test_a_section_missing_an_answer_is_shown_again_empty(
    app: Flask, survey: Survey, database: Database
) -> None:
    walk = on_second_page(app)
    page = walk.send({"cheated": "y", **NEXT})
    refused(walk, database, 2)
    assert "Please answer this question." in page
    walk.send({**ANSWERS[1], **NEXT})
    walk.send({**ANSWERS[2], **NEXT})
    assert walk.status == 200 and len(rows(database)) == 1


def test_the_carried_field_is_not_compressed_and_has_one_length_per_section(
    app: Flask, survey: Survey
) -> None:
    """Very different answers: one length of the carried field on each page."""
    lengths = set()
    for year, nights, cheated in (("0", "00", "y"), ("3", "30", "n"), ("1", "17", "y")):
        walk = Walk(app.test_client())
        first = len(hidden(walk.page)[CARRIED])
        second = len(hidden(walk.send({"year": year, **NEXT}))[CARRIED])
        page = walk.send({"cheated": cheated, "all_nighters": nights, **NEXT})
        assert not hidden(page)[CARRIED].startswith(".")  # itsdangerous' mark of zlib
        lengths.add((first, second, len(hidden(page)[CARRIED])))
    assert len(lengths) == 1, lengths
