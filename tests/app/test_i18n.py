"""The respondent's pages in English, Korean and Chinese: how the language is chosen, that
the choice stays in the URL (never a cookie), and what each page weighs in every language.

The language comes from ``?lang=`` else ``Accept-Language``; every link and the form's
action carry the URL's choice on. A cookie naming the language would be one more trace of
taking part on a shared computer, so no response ever sets one for it.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import pytest
from flask import Flask
from flask.testing import FlaskClient

from benchmarks.page_weight import ASSET, BUDGET_BYTES, TEN_QUESTIONS
from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.storage.surveys import store_survey
from survey_app.web.database_session import get_db
from tests.support.examples import SLUG
from tests.support.paths import ROOT
from tests.support.respondents import answers, fresh_form

HTML_LANG = {"en": "en", "ko": "ko", "zh": "zh-Hans"}
LANGUAGES = tuple(HTML_LANG)


def html_lang(page: str) -> str:
    found = re.search(r'<html lang="([^"]+)">', page)
    assert found, "the page has no <html lang>"
    return found.group(1)


@pytest.mark.parametrize(
    "header, expected",
    [("ko-KR,ko;q=0.9,en;q=0.5", "ko"), ("zh-CN,zh;q=0.9", "zh-Hans"), ("fr, en;q=0.1", "en")],
)
def test_accept_language_picks_the_language(
    client: FlaskClient, header: str, expected: str
) -> None:
    page = client.get(f"/s/{SLUG}", headers={"Accept-Language": header}).get_data(as_text=True)
    assert html_lang(page) == expected


def test_the_url_overrides_accept_language(client: FlaskClient) -> None:
    page = client.get(f"/s/{SLUG}?lang=zh", headers={"Accept-Language": "ko"})
    assert html_lang(page.get_data(as_text=True)) == "zh-Hans"
    unknown = client.get(f"/s/{SLUG}?lang=xx", headers={"Accept-Language": "ko"})
    assert html_lang(unknown.get_data(as_text=True)) == "ko"


def test_links_and_the_form_action_carry_the_language(client: FlaskClient) -> None:
    page = client.get(f"/s/{SLUG}?lang=ko").get_data(as_text=True)
    assert f'action="/s/{SLUG}?lang=ko"' in page
    assert 'href="/?lang=ko" class="brand"' in page
    index = client.get("/?lang=zh").get_data(as_text=True)
    assert f'href="/s/{SLUG}?lang=zh"' in index


def test_the_switcher_names_each_language_in_itself_and_marks_the_current_one(
    client: FlaskClient,
) -> None:
    page = client.get("/?lang=ko").get_data(as_text=True)
    nav = re.search(r'<nav class="languages" aria-label="[^"]+">(.*?)</nav>', page, re.S)
    assert nav, "no language switcher"
    links = re.findall(
        r'<a href="([^"]+)" lang="([^"]+)"[^>]*?( aria-current="page")?>([^<]+)', nav[1]
    )
    assert [(href, lang, bool(current), name) for href, lang, current, name in links] == [
        ("/?lang=en", "en", False, "English"),
        ("/?lang=ko", "ko", True, "한국어"),
        ("/?lang=zh", "zh-Hans", False, "简体中文"),
    ]


def test_the_switcher_keeps_the_page_s_own_query(client: FlaskClient) -> None:
    """A consent step or an invitation stays in the address when the language changes."""
    page = client.get("/?agree=yes&lang=en").get_data(as_text=True)
    assert 'href="/?agree=yes&amp;lang=zh"' in page


def test_a_survey_page_offers_the_survey_s_own_languages(client: FlaskClient) -> None:
    """The example survey is in English only: no switcher to languages it does not have."""
    page = client.get(f"/s/{SLUG}?lang=ko").get_data(as_text=True)
    assert 'class="languages"' not in page
    assert html_lang(page) == "ko"  # the page's own words still follow the URL


def test_no_response_sets_a_cookie_for_the_language(client: FlaskClient) -> None:
    responses = [
        client.get("/?lang=ko"),
        client.get(f"/s/{SLUG}?lang=zh", headers={"Accept-Language": "ko"}),
        client.get("/nowhere?lang=ko"),
        client.post(f"/s/{SLUG}?lang=ko", data={**fresh_form(client), **answers()}),
        client.post(f"/s/{SLUG}?lang=zh", data={"csrf_token": "forged"}),
    ]
    for response in responses:
        for line in response.headers.getlist("Set-Cookie"):
            name, value = line.split(";", 1)[0].split("=", 1)
            assert "lang" not in name.lower() and value not in LANGUAGES, line
    with client.session_transaction() as session:
        assert not any(str(value) in LANGUAGES for value in session.values()), dict(session)


def test_numbers_follow_the_locale(client: FlaskClient, app: Flask) -> None:
    """ε and odds through the locale's number format: a large total keeps its grouping."""
    page = client.get(f"/s/{SLUG}?lang=en").get_data(as_text=True)
    assert "ε = 1.10" in page
    with app.test_request_context("/?lang=en"):
        from survey_app.domain.question_privacy import epsilon_text, odds_text

        assert odds_text(Fraction(math.log(123_456.4))) == "123,457"  # rounded up
        assert epsilon_text("0.5") == "0.50"


def test_the_error_page_speaks_the_page_s_language(client: FlaskClient) -> None:
    page = client.get("/no-such-page?lang=ko").get_data(as_text=True)
    assert html_lang(page) == "ko"
    assert "Not Found" not in page  # Werkzeug's own English title is replaced
    assert "<h1>Page not found</h1>" in client.get("/no-such-page").get_data(as_text=True)


@pytest.fixture
def weighed(app: Flask) -> dict[str, str]:
    """The surveys whose pages are weighed: every question type, and the examples."""
    with app.app_context():
        db = get_db()
        ten = parse_definition(json.dumps(TEN_QUESTIONS), source="ten.json", fmt="json")
        mixed = load_definition(ROOT / "examples" / "mixed-survey.yaml")
        surveys = [store_survey(db, ten), store_survey(db, mixed)]
    paths = {survey.slug: f"/s/{survey.slug}?agree=yes" for survey in surveys}
    return {**paths, SLUG: f"/s/{SLUG}"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_survey_page_weighs_at_most_30_kib_in_every_language(
    app: Flask, weighed: dict[str, str], language: str
) -> None:
    """HTML, CSS and scripts as served, uncompressed. Korean and Chinese characters take
    3 bytes each in UTF-8, so each language is weighed with its own catalog."""
    client = app.test_client()
    for slug, path in weighed.items():
        page = client.get(f"{path}&lang={language}" if "?" in path else f"{path}?lang={language}")
        assert page.status_code == 200
        html = page.get_data()
        assets = [client.get(url).get_data() for url in dict.fromkeys(ASSET.findall(html.decode()))]
        total = len(html) + sum(len(asset) for asset in assets)
        assert total <= BUDGET_BYTES, f"{slug} in {language}: {total:,} bytes"
