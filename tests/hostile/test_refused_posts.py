"""A refused POST to /s/<slug> shows no more than a GET of the same survey would.

A POST refused before its view runs (no CSRF token, a body over the size limit) or by the
form's validation answers by the GET's rules: the questions only for a survey that takes
answers, with an unused answer ticket if it is by invitation, after consent (the posted
``agreed``, as the GET's ``agree=yes``); a draft answers exactly as an address where no
survey exists. Each survey here has questions and options no other page shows.
"""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from survey_app.domain.definitions import parse_definition
from survey_app.storage.invitations import create_invitations
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.hostile import HUGE
from tests.support.invitations import start
from tests.support.researchers import log_in
from tests.support.respondents import fresh_form

DRAFT, CLOSED, INVITED, CONSENT = "draft-study", "closed-study", "invited-study", "consent-study"
UNKNOWN = "nosuchstudy"  # as long as DRAFT: the two pages may differ by nothing, not even size
# Texts only the survey's form shows: a refused POST must not show them either.
SECRETS = ("Hidden question about the club", "Hidden option Alpha", "Hidden option Beta")
DEFINITION = """\
slug: {slug}
title: Study {slug}
access: {access}
{consent}questions:
  - key: club
    text: Hidden question about the club
    type: choice
    options: [Hidden option Alpha, Hidden option Beta]
  - key: member
    text: Hidden question about the club, twice?
    type: yes_no
"""
ANSWERS = {"club": "0", "member": "y"}


def _store(app: Flask, slug: str, status: str, access: str = "open", consent: str = "") -> None:
    text = DEFINITION.format(
        slug=slug, access=access, consent=f"consent: {consent}\n" if consent else ""
    )
    with app.app_context():
        db = get_db()
        owner = db.execute("SELECT id FROM researchers WHERE username = 'ada'").fetchone()[0]
        store_survey(db, parse_definition(text), owner, status)


@pytest.fixture
def surveys(app: Flask, researcher: str) -> Flask:
    """ada's draft, a closed survey, one by invitation and one asking for consent."""
    _store(app, DRAFT, "draft")
    _store(app, CLOSED, "closed")
    _store(app, INVITED, "open", access="invitation")
    _store(app, CONSENT, "open", consent="Taking part is voluntary.")
    return app


def invitation(app: Flask) -> str:
    """An open invitation to the invitation-only survey."""
    with app.app_context():
        survey = get_survey(get_db(), INVITED)
        assert survey is not None
        return create_invitations(get_db(), survey, 1)[0]


def assert_reveals_nothing(response: TestResponse) -> None:
    """No question, no option, no form token: nothing the survey's form would show."""
    page = response.get_data(as_text=True)
    for secret in SECRETS:
        assert secret not in page, (response.status_code, secret)
    assert "submission_id" not in page and 'id="survey-form"' not in page


def without_token(client: FlaskClient, slug: str, **fields: str) -> TestResponse:
    return client.post(f"/s/{slug}", data={**ANSWERS, **fields})


def oversized(client: FlaskClient, slug: str, **fields: str) -> TestResponse:
    return client.post(f"/s/{slug}", data={**ANSWERS, **fields, "padding": "x" * HUGE})


REFUSALS = {"no CSRF token": without_token, "oversized": oversized}
# Each survey with what a respondent sends who may not see its questions.
WITHHELD = {
    "draft": (DRAFT, {}),
    "closed": (CLOSED, {}),
    "no invitation": (INVITED, {}),
    "used-up or made-up invitation": (INVITED, {"invitation": "A" * 22}),
    "no consent": (CONSENT, {}),
}


@pytest.mark.parametrize("refuse", REFUSALS.values(), ids=REFUSALS.keys())
@pytest.mark.parametrize(("slug", "fields"), WITHHELD.values(), ids=WITHHELD.keys())
def test_a_refused_post_shows_no_question_the_get_would_not(
    surveys: Flask, client: FlaskClient, refuse, slug: str, fields: dict[str, str]
) -> None:
    response = refuse(client, slug, **fields)
    assert response.status_code in (400, 403)
    assert_reveals_nothing(response)
    assert "Nothing was stored" in response.get_data(as_text=True) or slug == CONSENT


def test_a_valid_token_and_a_bad_form_show_no_more_than_the_get(
    surveys: Flask, client: FlaskClient
) -> None:
    """The refusal by validation (with a real CSRF token, from any page of the site)."""
    token = fresh_form(client)["csrf_token"]
    no_invitation = client.post(f"/s/{INVITED}", data={"csrf_token": token, "club": "7"})
    assert no_invitation.status_code == 403
    assert "Invitation needed" in no_invitation.get_data(as_text=True)
    assert_reveals_nothing(no_invitation)
    no_consent = client.post(f"/s/{CONSENT}", data={"csrf_token": token, "club": "7"})
    assert no_consent.status_code == 400
    assert "I agree" in no_consent.get_data(as_text=True)  # the consent step, not the form
    assert_reveals_nothing(no_consent)


def test_a_refused_post_shows_the_form_where_the_get_would(
    surveys: Flask, client: FlaskClient
) -> None:
    """An unused answer ticket, or a form posted after agreeing: the form again, empty,
    with a fresh form token (a respondent whose page expired answers again)."""
    ticket = start(client, f"/s/{INVITED}?invitation={invitation(surveys)}")["invitation"]
    for response, carried in [
        (without_token(client, INVITED, invitation=ticket), ticket),
        (without_token(client, CONSENT, agreed="yes"), None),
    ]:
        page = response.get_data(as_text=True)
        assert response.status_code == 400
        assert "The form had expired or did not come from this site." in page
        assert SECRETS[0] in page and re.search(r'name="submission_id" value="[^"]+"', page)
        assert "checked" not in page  # nothing sent comes back
        if carried:
            assert f'name="invitation" value="{carried}"' in page


def _same_page(draft: TestResponse, unknown: TestResponse) -> None:
    """Equal status and bytes, once the address typed (the only difference) is swapped."""
    assert draft.status_code == unknown.status_code
    assert draft.get_data().replace(DRAFT.encode(), UNKNOWN.encode()) == unknown.get_data()


@pytest.mark.parametrize("as_owner", [False, True], ids=["stranger", "its owner"])
def test_a_draft_answers_exactly_as_an_unknown_address(
    surveys: Flask, researcher: str, as_owner: bool
) -> None:
    """GET, POST, refused POSTs: a draft is its owner's alone (they preview it in the
    builder), so its address says nothing, not even that a survey is there."""
    client = surveys.test_client()
    if as_owner:
        assert log_in(client, researcher).status_code == 302
    token = fresh_form(client)["csrf_token"]
    for request in (
        lambda slug: client.get(f"/s/{slug}"),
        lambda slug: client.get(f"/s/{slug}?agree=yes&invitation=x"),
        lambda slug: client.post(f"/s/{slug}", data={"csrf_token": token, **ANSWERS}),
        lambda slug: without_token(client, slug),
        lambda slug: oversized(client, slug),
    ):
        draft, unknown = request(DRAFT), request(UNKNOWN)
        assert draft.status_code in (400, 404)
        _same_page(draft, unknown)
        assert_reveals_nothing(draft)
