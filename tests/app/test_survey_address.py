"""Sending a survey: the study page and the list show its full address, a copy button and
a QR code of exactly that address, built on the address the researcher is using, unless
``SURVEY_APP_BASE_URL`` says otherwise (then a warning says so). Invitation links made in
the browser follow the same rule; the landing page leads to the builder.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from survey_app.web.survey_address import address_qr
from tests.app.test_studies import OPEN_OWNED, OWNED, confirm, studies  # noqa: F401 (fixture)
from tests.support.researchers import log_in

HOST = "survey.example:5100"
WARNING = "These links use the address set in"


class ClientAt(FlaskClient):
    """A test client whose every request goes to ``base_url`` (not ``http://localhost/``)."""

    base_url = "http://localhost/"

    def open(self, *args: Any, **kwargs: Any) -> TestResponse:
        kwargs.setdefault("base_url", self.base_url)
        return super().open(*args, **kwargs)


def researcher_at(app: Flask, base_url: str) -> FlaskClient:
    """ada, logged in through a server reached at ``base_url``."""
    client = ClientAt(app, app.response_class, use_cookies=True)
    client.base_url = base_url
    assert log_in(client, "ada").status_code == 302
    return client


def test_the_study_page_shows_the_address_the_researcher_uses_and_its_qr_code(
    studies: Flask,  # noqa: F811 (the fixture)
) -> None:
    page = researcher_at(studies, f"http://{HOST}/").get(f"/research/surveys/{OPEN_OWNED}/study")
    text = page.get_data(as_text=True)
    address = f"http://{HOST}/s/{OPEN_OWNED}"
    assert f'href="{address}">{address}</a>' in text
    assert 'data-copy="address-ada-campus"' in text and "copy.js" in text
    with studies.test_request_context():
        qr = str(address_qr(address, "QR code of the address of Campus health survey"))
    assert '<svg viewBox="0 0' in qr and qr in text  # the QR encodes exactly that address
    assert WARNING not in text and "127.0.0.1:5000" not in text


def test_the_dashboard_shows_an_open_survey_s_address_without_its_qr_code(
    studies: Flask,  # noqa: F811 (the fixture)
) -> None:
    page = researcher_at(studies, f"http://{HOST}/").get(f"/research/surveys/{OPEN_OWNED}")
    text = page.get_data(as_text=True)
    address = f"http://{HOST}/s/{OPEN_OWNED}"
    assert page.status_code == 200
    assert f'href="{address}">{address}</a>' in text and "copy.js" in text
    assert "QR code of the address" not in text  # the study page has it; the dashboard, plots


def test_the_list_shows_the_address_of_open_surveys_anyone_may_answer(
    studies: Flask,  # noqa: F811 (the fixture)
) -> None:
    page = researcher_at(studies, f"http://{HOST}/").get("/research/").get_data(as_text=True)
    rows = dict(re.findall(r'<tr data-slug="([\w-]+)">(.*?)</tr>', page, flags=re.S))
    assert f"http://{HOST}/s/{OPEN_OWNED}" in rows[OPEN_OWNED] and "<svg" in rows[OPEN_OWNED]
    assert "/s/" not in rows[OWNED]  # a draft, and by invitation


def test_a_configured_base_address_is_used_and_its_difference_shown(
    studies: Flask,  # noqa: F811 (the fixture)
) -> None:
    studies.config["BASE_URL"] = "http://surveys.example.org/"
    client = researcher_at(studies, f"http://{HOST}/")
    text = client.get(f"/research/surveys/{OPEN_OWNED}/study").get_data(as_text=True)
    assert f">http://surveys.example.org/s/{OPEN_OWNED}</a>" in text
    assert WARNING in text and HOST not in text
    assert confirm(client, f"/research/surveys/{OWNED}/open").status_code == 302
    made = confirm(client, f"/research/surveys/{OWNED}/invite", count="2").get_data(as_text=True)
    assert len(re.findall(rf"http://surveys\.example\.org/s/{OWNED}\?invitation=", made)) == 2
    assert WARNING in made
    # Reached at its configured address, the page has nothing to warn about.
    same = researcher_at(studies, "http://surveys.example.org/")
    assert WARNING not in same.get(f"/research/surveys/{OPEN_OWNED}/study").get_data(as_text=True)


def test_invitation_links_made_in_the_browser_follow_the_request_host(
    studies: Flask,  # noqa: F811 (the fixture)
) -> None:
    client = researcher_at(studies, f"http://{HOST}/")
    assert confirm(client, f"/research/surveys/{OWNED}/open").status_code == 302
    made = confirm(client, f"/research/surveys/{OWNED}/invite", count="2").get_data(as_text=True)
    assert len(re.findall(rf"http://{HOST}/s/{OWNED}\?invitation=[\w-]+", made)) == 2
    assert "127.0.0.1:5000" not in made and WARNING not in made


def test_a_host_the_app_refuses_never_becomes_an_address(studies: Flask) -> None:  # noqa: F811
    studies.config["TRUSTED_HOSTS"] = ["survey.example"]
    page = studies.test_client().get(
        f"/research/surveys/{OPEN_OWNED}/study", base_url="http://evil.example/"
    )
    assert page.status_code == 400 and "evil.example" not in page.get_data(as_text=True)


def test_the_landing_page_leads_to_the_builder(logged_in: FlaskClient) -> None:
    page = logged_in.get("/research/").get_data(as_text=True)
    assert '<a class="button" href="/research/builder/">New survey…</a>' in page
