"""The end of a survey: a panel's completion code or return address, and the researcher's
thank-you text in every language. Refused where the file is wrong (file, line, field),
kept through storage and export, shown after a stored response and never before."""

from __future__ import annotations

import html
import json

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.definitions import parse_definition
from survey_app.domain.survey_model import Completion, SurveyDefinitionError
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.storage.surveys import get_survey, store_survey, survey_definition
from survey_app.web.database_session import get_db
from tests.support.respondents import hidden_fields

CODE = "C1AB2CD3"
REDIRECT = "https://app.prolific.com/submissions/complete?cc=C1AB2CD3&x=1"
THANKS = {
    "en": "Thanks for helping the study.\n\nResults appear in June.",
    "ko": "연구에 참여해 주셔서 감사합니다.\n\n결과는 6월에 공개됩니다.",
    "zh": "感谢您参与本研究。\n\n结果将于六月公布。",
}


def panel_survey(completion: str, slug: str = "panel", thanks: dict[str, str] = THANKS) -> str:
    """A three-language survey with consent, a thank-you text and ``completion``."""
    return (
        f"slug: {slug}\n"
        "languages: [en, ko, zh]\n"
        "title: {en: Panel study, ko: 패널 연구, zh: 小组研究}\n"
        'consent: {en: "Agree?", ko: "동의합니까?", zh: "同意吗？"}\n'
        f"thank_you: {json.dumps(thanks, ensure_ascii=False)}\n"
        f"completion:\n  {completion}\n"
        "questions:\n"
        "  - key: cheated\n"
        '    text: {en: "Cheated?", ko: "부정행위?", zh: "作弊？"}\n'
    )


def one_language(extra: str) -> str:
    return f"slug: s\ntitle: T\n{extra}questions:\n  - key: a\n    text: A?\n"


def test_a_completion_and_thank_you_texts_are_read_in_every_language() -> None:
    definition = parse_definition(panel_survey(f"code: {CODE}"))
    assert definition.completion == Completion("code", CODE)
    assert {code: definition.texts(code).thank_you for code in THANKS} == THANKS


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (f"code: {CODE}", Completion("code", CODE)),
        ("code: 4021", Completion("code", "4021")),  # a bare number, as written
        (f"redirect: {REDIRECT}", Completion("redirect", REDIRECT)),
        ("redirect: HTTPS://example.org", Completion("redirect", "HTTPS://example.org")),
    ],
)
def test_good_completions_are_kept_as_written(written: str, expected: Completion) -> None:
    definition = parse_definition(one_language(f"completion:\n  {written}\n"))
    assert definition.completion == expected


BAD_COMPLETIONS = [
    # id, the completion as written, field, message
    ("not-a-mapping", "completion: C1AB2CD3", "completion", "exactly one key"),
    ("both", f"completion: {{code: {CODE}, redirect: '{REDIRECT}'}}", "completion", "one key"),
    ("empty-mapping", "completion: {}", "completion", "exactly one key"),
    ("unknown-key", "completion: {url: https://a.org}", "completion.url", "unknown key 'url'"),
    ("code-empty", "completion: {code: ''}", "completion.code", "must not be empty"),
    ("code-space", "completion: {code: 'C1 AB'}", "completion.code", "without spaces"),
    ("code-unicode", "completion: {code: 'Ｃ1AB'}", "completion.code", "ASCII"),
    ("code-too-long", f"completion: {{code: {'A' * 101}}}", "completion.code", "at most 100"),
    ("code-list", "completion: {code: [a]}", "completion.code", "must be a string"),
    ("redirect-http", "completion: {redirect: 'http://a.org/'}", "completion.redirect", "https"),
    (
        "redirect-javascript",
        "completion: {redirect: 'javascript:alert(1)'}",
        "completion.redirect",
        "https",
    ),
    ("redirect-relative", "completion: {redirect: /done}", "completion.redirect", "https"),
    ("redirect-no-host", "completion: {redirect: 'https://'}", "completion.redirect", "https"),
    ("redirect-port", "completion: {redirect: 'https://a.org:x/'}", "completion.redirect", "port"),
    (
        "redirect-credentials",
        "completion: {redirect: 'https://me:secret@a.org/'}",
        "completion.redirect",
        "password",
    ),
    (
        "redirect-space",
        "completion: {redirect: 'https://a.org/a b'}",
        "completion.redirect",
        "without spaces",
    ),
    (
        "redirect-too-long",
        f"completion: {{redirect: 'https://a.org/{'a' * 2000}'}}",
        "completion.redirect",
        "at most 2000",
    ),
    ("thank-you-number", "thank_you: 5", "thank_you", "must be a string"),
    ("thank-you-too-long", f"thank_you: {'t' * 5001}", "thank_you", "at most 5000"),
]


@pytest.mark.parametrize(
    ("written", "field", "message"),
    [case[1:] for case in BAD_COMPLETIONS],
    ids=[case[0] for case in BAD_COMPLETIONS],
)
def test_a_bad_completion_or_thank_you_names_file_line_and_field(
    written: str, field: str, message: str
) -> None:
    with pytest.raises(SurveyDefinitionError) as raised:
        parse_definition(one_language(written + "\n"), "panel.yaml")
    error = raised.value
    assert (error.source, error.line, error.field) == ("panel.yaml", 3, field)
    assert message in error.message


def test_a_thank_you_text_missing_in_one_language_is_refused() -> None:
    text = panel_survey(f"code: {CODE}", thanks={"en": "Thanks.", "ko": "감사합니다."})
    with pytest.raises(SurveyDefinitionError) as raised:
        parse_definition(text, "panel.yaml")
    assert raised.value.field == "thank_you.zh"
    assert "missing" in raised.value.message


@pytest.mark.parametrize("completion", [f"code: {CODE}", f"redirect: {REDIRECT}"])
def test_completion_and_thank_you_round_trip_through_storage_and_export(
    app: Flask, completion: str
) -> None:
    written = parse_definition(panel_survey(completion))
    with app.app_context():
        store_survey(get_db(), written)
        stored = get_survey(get_db(), "panel")
    assert stored is not None
    assert stored.completion == written.completion
    exported = definition_yaml(survey_definition(stored))
    assert parse_definition(exported) == written
    assert parse_definition(exported).texts("ko").thank_you == THANKS["ko"]


@pytest.fixture
def panel_app(app: Flask) -> Flask:
    with app.app_context():
        store_survey(get_db(), parse_definition(panel_survey(f"code: {CODE}")))
        redirecting = panel_survey(f"redirect: {REDIRECT}", slug="panel-return")
        store_survey(get_db(), parse_definition(redirecting))
    return app


def answered(client: FlaskClient, slug: str, language: str, **extra: str) -> tuple[int, str]:
    """Agree, answer and send, with the page in ``language``: the status and the page."""
    page = client.get(f"/s/{slug}?agree=yes&lang={language}").get_data(as_text=True)
    form = {**hidden_fields(page), "cheated": "y", **extra}
    response = client.post(f"/s/{slug}?lang={language}", data=form)
    return response.status_code, response.get_data(as_text=True)


@pytest.mark.parametrize("language", sorted(THANKS))
def test_the_thank_you_page_shows_the_code_and_the_text_in_each_language(
    panel_app: Flask, language: str
) -> None:
    status, page = answered(panel_app.test_client(), "panel", language)
    assert status == 200
    assert f'<code id="completion-code" class="completion-code">{CODE}</code>' in page
    for paragraph in THANKS[language].split("\n\n"):
        assert f"<p>{html.escape(paragraph)}</p>" in page
    others = [THANKS[other].split("\n\n")[0] for other in THANKS if other != language]
    assert not any(html.escape(text) in page for text in others)
    # The thank-you text comes above the app's own privacy sentences, which stay.
    assert page.index(html.escape(THANKS[language].split("\n\n")[0])) < page.index("stored")


def test_the_thank_you_page_links_to_the_panel_address(panel_app: Flask) -> None:
    status, page = answered(panel_app.test_client(), "panel-return", "en")
    assert status == 200
    link = f'<a id="completion-link" class="button" href="{html.escape(REDIRECT)}"'
    assert link in page
    assert 'rel="noreferrer"' in page
    assert "completion.js" in page


@pytest.mark.parametrize("slug", ["panel", "panel-return"])
def test_a_refused_post_shows_no_completion_and_no_thank_you_text(
    panel_app: Flask, slug: str
) -> None:
    client = panel_app.test_client()
    for extra in ({"cheated": "maybe"}, {"csrf_token": "forged"}):
        status, page = answered(client, slug, "en", **extra)
        assert status == 400
        assert CODE not in page and "prolific" not in page
        assert "completion" not in page
        assert html.escape(THANKS["en"].split("\n\n")[0]) not in page
