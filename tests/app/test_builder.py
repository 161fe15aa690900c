"""The survey builder: form fields <-> definition dict <-> YAML, the import's errors next to
the fields they name, and the no-JavaScript flow through the real routes (owner-only, CSRF,
create, add and remove questions, preview, save, edit, download, upload)."""

from __future__ import annotations

import dataclasses
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.datastructures import MultiDict

from survey_app.domain.builder_fields import (
    QuestionFields,
    SurveyFields,
    definition_yaml,
    error_field_name,
    fields_from_form,
    fields_from_source,
)
from survey_app.domain.definitions import load_definition, parse_definition
from survey_app.domain.survey_model import SurveyDefinitionError
from survey_app.storage.accounts import create_researcher
from survey_app.storage.surveys import get_survey, list_visible_surveys, share_survey
from survey_app.web.database_session import get_db
from tests.support.examples import MIXED, SLUG
from tests.support.researchers import PASSWORD, log_in

BUILDER = "/research/builder/"

# A survey in English and Korean with every question type and option the builder offers.
BILINGUAL = SurveyFields(
    languages=("en", "ko"),
    slug="campus-life",
    texts={
        "title": {"en": "Campus life", "ko": "캠퍼스 생활"},
        "description": {"en": "A short survey.", "ko": "짧은 설문입니다."},
        "consent": {"en": "I agree to take part.", "ko": "참여에 동의합니다."},
        "contact": {"en": "study@example.edu", "ko": "study@example.edu"},
        "thank_you": {"en": "Thank you for taking part.", "ko": "참여해 주셔서 감사합니다."},
    },
    access="invitation",
    max_epsilon="6",
    questions=[
        QuestionFields(
            key="cheated",
            type="yes_no",
            text={
                "en": "Have you cheated on an exam?",
                "ko": "시험에서 부정행위를 한 적이 있습니까?",
            },
            epsilon="0.5",
        ),
        QuestionFields(
            key="substance",
            type="choice",
            text={"en": "Which have you used?", "ko": "무엇을 사용했습니까?"},
            options={"en": "None\nCannabis\nStimulants", "ko": "없음\n대마\n각성제"},
            epsilon="1.25",
            mechanism="oue",
        ),
        QuestionFields(
            key="drinks",
            type="number",
            text={"en": "Drinks last week?", "ko": "지난주 음주 횟수?"},
            min="0",
            max="50",
            mechanism="laplace",
            required=False,
        ),
        QuestionFields(
            key="year",
            type="choice",
            text={"en": "Year of study?", "ko": "학년?"},
            options={"en": "1\n2\n3\n4+", "ko": "1\n2\n3\n4+"},
            sensitive=False,
        ),
    ],
)


# Unit: fields <-> YAML <-> parse_definition.


def test_fields_become_a_definition_the_import_accepts_and_come_back_unchanged() -> None:
    text = definition_yaml(BILINGUAL)
    definition = parse_definition(text, "builder")
    assert definition.languages == ("en", "ko")
    assert definition.access == "invitation"
    assert str(definition.max_epsilon) == "6"
    cheated, substance, drinks, year = definition.questions
    assert str(cheated.epsilon) == "1/2"
    assert (substance.mechanism, str(substance.epsilon)) == ("oue", "5/4")
    assert substance.options == ("None", "Cannabis", "Stimulants")
    assert substance.texts("ko").options == ("없음", "대마", "각성제")
    assert (drinks.min, drinks.max, drinks.mechanism, drinks.required) == (0, 50, "laplace", False)
    assert year.options == ("1", "2", "3", "4+") and not year.sensitive
    assert definition.texts("ko").consent == "참여에 동의합니다."
    assert fields_from_source(definition.source) == BILINGUAL


def test_one_language_writes_plain_strings_and_leaves_defaults_out() -> None:
    fields = SurveyFields(
        slug="pulse",
        texts={"title": {"en": "Pulse"}, "description": {"en": "  "}},
        questions=[QuestionFields(key="tired", text={"en": "Tired?"})],
    )
    assert definition_yaml(fields) == (
        "slug: pulse\ntitle: Pulse\nquestions:\n- key: tired\n  text: Tired?\n  type: yes_no\n"
    )


def test_fields_that_do_not_apply_to_the_type_are_left_out_not_refused() -> None:
    """A question switched from choice to number keeps its options in the form, but the
    file has none; a plain question's ε and mechanism are not written either."""
    question = QuestionFields(
        key="q",
        type="number",
        text={"en": "How many?"},
        options={"en": "a\nb"},
        min="1",
        max="9",
        epsilon="2",
        mechanism="duchi",
        sensitive=False,
    )
    written = yaml.safe_load(definition_yaml(SurveyFields(slug="s", questions=[question])))
    assert written["questions"][0] == {
        "key": "q",
        "text": "How many?",
        "type": "number",
        "sensitive": False,
        "min": 1,
        "max": 9,
    }


@pytest.mark.parametrize(
    ("typed", "written"),
    [
        ("0.1", "epsilon: 0.1\n"),  # the decimal as typed, not a float's repr
        ("2", "epsilon: 2\n"),
        ("1e-2", "epsilon: 1e-2\n"),  # text to YAML 1.1, as in a file: the import says so
        ("abc", "epsilon: abc\n"),
    ],
)
def test_number_fields_are_written_exactly_as_typed(typed: str, written: str) -> None:
    question = QuestionFields(key="q", text={"en": "Q?"}, epsilon=typed)
    assert written in definition_yaml(SurveyFields(slug="s", questions=[question]))


def test_a_number_field_that_is_no_number_gets_the_imports_message() -> None:
    question = QuestionFields(key="q", text={"en": "Q?"}, epsilon="abc")
    fields = SurveyFields(slug="s", texts={"title": {"en": "T"}}, questions=[question])
    with pytest.raises(SurveyDefinitionError) as err:
        parse_definition(definition_yaml(fields))
    assert err.value.field == "questions[0].epsilon"
    assert err.value.message == (
        "must be a number from 0.01 to 10 with at most 3 decimals (got the text 'abc')"
    )


def test_options_pair_up_by_line_and_a_missing_translation_is_named_by_position() -> None:
    question = QuestionFields(
        key="q",
        type="choice",
        text={"en": "Pick", "ko": "고르세요"},
        options={"en": "\nRed\nGreen\nBlue\n\n", "ko": "빨강\n초록"},
    )
    fields = SurveyFields(languages=("en", "ko"), slug="s", questions=[question])
    fields.texts = {"title": {"en": "T", "ko": "제목"}}
    with pytest.raises(SurveyDefinitionError) as err:
        parse_definition(definition_yaml(fields))
    assert err.value.field == "questions[0].options[2].ko"
    assert error_field_name(err.value.field, fields.languages) == "q0.options.ko"


def test_the_form_as_posted_becomes_fields() -> None:
    form = MultiDict(
        [
            ("language", "ko"),
            ("languages", "en"),
            ("languages", "ko"),
            ("languages", "xx"),
            ("slug", " s "),
            ("title.ko", "제목"),
            ("title.en", "Title"),
            ("q1.type", "choice"),
            ("q1.key", "b"),
            ("q0.type", "yes_no"),
            ("q0.key", "a"),
            ("q0.sensitive", "1"),
        ]
    )
    fields = fields_from_form(form)
    assert fields.languages == ("ko", "en")  # the main language first, unknown codes dropped
    assert fields.slug == "s"
    assert fields.texts["title"] == {"ko": "제목", "en": "Title"}
    assert [(q.key, q.type, q.sensitive, q.required) for q in fields.questions] == [
        ("a", "yes_no", True, False),
        ("b", "choice", False, False),
    ]


@pytest.mark.parametrize(
    ("path", "languages", "name"),
    [
        ("slug", ("en",), "slug"),
        ("title", ("en", "ko"), "title.en"),
        ("consent.ko", ("en", "ko"), "consent.ko"),
        ("max_epsilon", ("en",), "max_epsilon"),
        ("languages[1]", ("en",), "language"),
        ("questions[3]", ("en",), "q3.key"),
        ("questions[3].text", ("ko", "en"), "q3.text.ko"),
        ("questions[3].text.en", ("ko", "en"), "q3.text.en"),
        ("questions[0].options", ("en",), "q0.options.en"),
        ("questions[0].options[4]", ("zh",), "q0.options.zh"),
        ("questions[0].options[4].ko", ("en", "ko"), "q0.options.ko"),
        ("questions[2].max", ("en",), "q2.max"),
        ("questions[2].epsilon", ("en",), "q2.epsilon"),
        ("questions", ("en",), None),
        ("", ("en",), None),
        ("questions[0].colour", ("en",), None),
    ],
)
def test_an_import_error_path_names_its_form_field(
    path: str, languages: tuple[str, ...], name: str | None
) -> None:
    assert error_field_name(path, languages) == name


# Route helpers: the builder page's own form, read back as a browser would post it.


class _FormReader(HTMLParser):
    """The fields a browser would post from the builder form (id builder-form, and the
    controls outside it with form="builder-form"), without any submit button."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[tuple[str, str]] = []
        self._in_form = False
        self._textarea: str | None = None
        self._select: str | None = None
        self._first_option: str | None = None
        self._selected = False
        self._text = ""
        self._first_line = False

    def _ours(self, attrs: dict[str, str | None]) -> bool:
        return self._in_form or attrs.get("form") == "builder-form"

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attr_list)
        name = attrs.get("name")
        if tag == "form":
            self._in_form = attrs.get("id") == "builder-form"
        elif tag == "input" and name and self._ours(attrs):
            kind = attrs.get("type", "text")
            if kind in ("checkbox", "radio") and "checked" not in attrs:
                return
            self.fields.append((name, attrs.get("value") or ""))
        elif tag == "textarea" and name and self._ours(attrs):
            self._textarea, self._text = name, ""
            self._first_line = True
        elif tag == "select" and name and self._ours(attrs):
            self._select, self._first_option, self._selected = name, None, False
        elif tag == "option" and self._select:
            value = attrs.get("value") or ""
            if self._first_option is None:
                self._first_option = value
            if "selected" in attrs:
                self.fields.append((self._select, value))
                self._selected = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "textarea" and self._textarea:
            self.fields.append((self._textarea, self._text))
            self._textarea = None
        elif tag == "select" and self._select:
            if not self._selected:
                self.fields.append((self._select, self._first_option or ""))
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            if self._first_line and data.startswith("\n"):
                data = data[1:]  # as in HTML: a newline right after <textarea> is no content
            self._first_line = False
            self._text += data


def page_form(page: str) -> MultiDict[str, str]:
    reader = _FormReader()
    reader.feed(page)
    return MultiDict(reader.fields)


def press(
    client: FlaskClient, page: str, button: str, value: str = "1", url: str | None = None, **edits
):
    """Post the page's builder form as a browser would after ``edits``, with ``button``."""
    form = page_form(page)
    for name, value_or_values in edits.items():
        field = name.replace("__", ".")
        if isinstance(value_or_values, list):
            form.setlist(field, value_or_values)
        else:
            form[field] = value_or_values
    form[button] = value
    action = re.search(r'<form method="post" action="([^"]+)" id="builder-form"', page)
    assert action, "the builder form is on the page"
    return client.post(url or action.group(1).replace("&amp;", "&"), data=form)


def text(response) -> str:
    return response.get_data(as_text=True)


def field_error(page: str, field: str) -> str | None:
    """The error shown next to a field (its id), or None."""
    found = re.search(rf'<p class="field-error" id="{re.escape(field)}-error">([^<]*)</p>', page)
    return found.group(1) if found else None


def input_tag(page: str, field: str) -> str:
    found = re.search(rf'<(?:input|textarea|select)[^>]*id="{re.escape(field)}"[^>]*>', page)
    assert found, field
    return found.group(0)


@pytest.fixture
def builder(logged_in: FlaskClient) -> FlaskClient:
    return logged_in


def bilingual_page(client: FlaskClient) -> str:
    """A new survey built from scratch with the buttons, in English and Korean: yes/no,
    choice, number and a plain covariate."""
    page = text(client.get(BUILDER))
    page = text(press(client, page, "preview", language="en", languages=["en", "ko"]))
    page = text(press(client, page, "add", "choice"))
    page = text(press(client, page, "add", "number"))
    page = text(press(client, page, "add", "choice"))
    edits = {
        "slug": "campus-life",
        "title__en": "Campus life",
        "title__ko": "캠퍼스 생활",
        "q0__key": "cheated",
        "q0__text__en": "Have you cheated on an exam?",
        "q0__text__ko": "시험에서 부정행위를 한 적이 있습니까?",
        "q0__epsilon": "0.5",
        "q1__key": "substance",
        "q1__text__en": "Which have you used?",
        "q1__text__ko": "무엇을 사용했습니까?",
        "q1__options__en": "None\r\nCannabis\r\nStimulants",
        "q1__options__ko": "없음\r\n대마\r\n각성제",
        "q2__key": "drinks",
        "q2__text__en": "Drinks last week?",
        "q2__text__ko": "지난주 음주 횟수?",
        "q2__min": "0",
        "q2__max": "50",
        "q3__key": "year",
        "q3__text__en": "Year of study?",
        "q3__text__ko": "학년?",
        "q3__options__en": "1\r\n2\r\n3\r\n4+",
        "q3__options__ko": "1학년\r\n2학년\r\n3학년\r\n4학년 이상",
    }
    page = text(press(client, page, "preview", **edits))
    form = page_form(page)
    del form["q3.sensitive"]  # untick: a plain covariate
    return text(client.post(BUILDER, data={**form.to_dict(flat=False), "preview": "1"}))


# Routes (anonymous visitors: tests/app/test_access.py, from the app's url_map).


def test_the_builder_works_without_javascript(builder: FlaskClient, app: Flask) -> None:
    page = bilingual_page(builder)
    assert 'class="errors"' not in page, page
    # Korean boxes, marked as Korean for screen readers.
    assert 'lang="ko"' in input_tag(page, "b-q1-options-ko")
    # The preview: the respondent's page, with the ledger's total and the planner.
    assert "Have you cheated on an exam?" in page
    assert "2 randomized questions" in page or "3 randomized questions" in page
    assert re.search(r"reveals at most ε = \d\.\d{2,3} in total", page)
    assert "Respondents needed" in page
    ko_page = text(press(builder, page, "preview", preview_language="ko"))
    assert "시험에서 부정행위를 한 적이 있습니까?" in ko_page
    assert '<div lang="ko">' in ko_page

    saved = press(builder, page, "save")
    assert saved.status_code == 302
    assert saved.headers["Location"] == f"{BUILDER}drafts/campus-life?saved=1"
    with app.app_context():
        survey = get_survey(get_db(), "campus-life")
        assert survey is not None
        assert survey.status == "draft"
        assert survey.languages == ("en", "ko")
        assert [q.type for q in survey.questions] == ["yes_no", "choice", "number", "choice"]
        assert [q.sensitive for q in survey.questions] == [True, True, True, False]
        assert survey.localized("ko").questions[3].options[3] == "4학년 이상"
        owner = survey.owner_id
        assert owner is not None
        listed = [row["slug"] for row in list_visible_surveys(get_db(), owner)]
        assert "campus-life" in listed
    assert "Campus life" in text(builder.get("/research/"))

    edit = text(builder.get(saved.headers["Location"]))
    assert "Draft saved." in edit
    assert page_form(edit)["q1.options.ko"] == "없음\n대마\n각성제"

    # Edit: remove the number question, save in place (the same survey).
    edit = text(press(builder, edit, "remove", "2"))
    assert "b-q3-key" not in edit and "Drinks last week?" not in edit
    assert press(builder, edit, "save", title__en="Campus life 2").status_code == 302
    with app.app_context():
        edited = get_survey(get_db(), "campus-life")
        assert edited is not None and edited.id == survey.id
        assert edited.title == "Campus life 2"
        assert [q.key for q in edited.questions] == ["cheated", "substance", "year"]

    # Download: the saved draft, and the unsaved form, both re-import to the same survey.
    stored = builder.get(f"{BUILDER}drafts/campus-life/survey.yaml")
    assert stored.status_code == 200
    assert stored.headers["Content-Disposition"] == 'attachment; filename="campus-life.yaml"'
    downloaded = press(builder, edit, "download", title__en="Unsaved title")
    assert downloaded.headers["Content-Disposition"] == 'attachment; filename="campus-life.yaml"'
    again = parse_definition(text(downloaded))
    assert again == dataclasses.replace(parse_definition(text(stored)), title="Unsaved title")


def test_each_question_type_is_added_by_its_button(builder: FlaskClient) -> None:
    page = text(builder.get(BUILDER))
    for kind in ("choice", "number", "yes_no"):
        page = text(press(builder, page, "add", kind))
    form = page_form(page)
    assert [form[f"q{i}.type"] for i in range(4)] == ["yes_no", "choice", "number", "yes_no"]
    assert [form[f"q{i}.key"] for i in range(4)] == ["q1", "q2", "q3", "q4"]
    assert "autofocus" in input_tag(page, "b-q3-key")  # the new question's first field
    assert 'data-types="choice scale multiple"' in page  # the options: choice, scale, tick all


def test_the_imports_error_is_shown_next_to_the_field_it_names(builder: FlaskClient) -> None:
    page = bilingual_page(builder)
    response = press(builder, page, "save", q1__options__ko="없음\r\n대마")
    assert response.status_code == 400
    page = text(response)
    message = "must not be empty when the text is given in en"
    try:
        expected = parse_definition(definition_yaml(fields_from_form(page_form(page))), "builder")
    except SurveyDefinitionError as err:
        assert err.field == "questions[1].options[2].ko"
        message = err.message
    else:
        pytest.fail(f"the import accepted {expected}")
    assert field_error(page, "b-q1-options-ko") == message
    tag = input_tag(page, "b-q1-options-ko")
    assert 'aria-invalid="true"' in tag and "b-q1-options-ko-error" in tag
    assert (
        f'<a href="#b-q1-options-ko">questions[1].options[2].ko</a>: '
        f"<span data-message>{message}</span>"
    ) in page
    # What was typed is kept, and nothing was stored.
    assert page_form(page)["q1.options.ko"] == "없음\n대마"
    assert "campus-life" not in text(builder.get("/research/"))


def error_summary(page: str) -> list[tuple[str, str, str]]:
    """The error summary at the top: (the field's id, the import's path, the message)."""
    found = re.search(r'<div class="errors error-summary"[^>]*>(.*?)</div>', page, re.S)
    assert found, "an error summary"
    assert "autofocus" in found.group(0).split(">", 1)[0]  # where keyboard focus starts
    items = re.findall(
        r'<li><a href="#([^"]+)">([^<]+)</a>: <span data-message>([^<]*)</span></li>',
        found.group(1),
    )
    return [(field, path, html.unescape(message)) for field, path, message in items]


def unfolded(page: str) -> list[int]:
    """The questions shown open (the others are folded to one line)."""
    return [
        int(index)
        for index, attributes in re.findall(
            r'<div class="question" id="b-q(\d+)" data-question>\s*<details([^>]*)>', page
        )
        if " open" in attributes
    ]


def question_part(page: str, index: int) -> str:
    """Question ``index``'s part of the page, buttons included."""
    start = page.index(f'<div class="question" id="b-q{index}"')
    end = page.find('<div class="question" id="b-q', start + 1)
    return page[start : end if end > 0 else page.index('<div class="actions add-question">')]


def buttons(part: str) -> list[tuple[str, str]]:
    """The submit buttons in ``part``: (name, text)."""
    return re.findall(r'<button type="submit" name="(\w+)"[^>]*>([^<]*)</button>', part)


def test_every_problem_is_reported_at_once_each_at_its_field(
    builder: FlaskClient, app: Flask
) -> None:
    page = bilingual_page(builder)
    response = press(
        builder,
        page,
        "save",
        slug="Campus Life",
        q0__epsilon="abc",
        q1__options__ko="없음\r\n대마",
        q2__max="0",
    )
    assert response.status_code == 400
    page = text(response)
    expected = [
        (
            "b-slug",
            "slug",
            "must be lowercase letters and digits in words joined by single hyphens, like "
            "campus-health (got 'Campus Life')",
        ),
        (
            "b-q0-epsilon",
            "questions[0].epsilon",
            "must be a number from 0.01 to 10 with at most 3 decimals (got the text 'abc')",
        ),
        ("b-q1-options-ko", "questions[1].options[2].ko", "must not be empty"),
        ("b-q2-max", "questions[2].max", "must be greater than min (got min 0, max 0)"),
    ]
    assert error_summary(page) == expected
    assert "4 problems to fix:" in page
    for field, _path, message in expected:
        assert html.unescape(field_error(page, field) or "") == message
        assert 'aria-invalid="true"' in input_tag(page, field)
    assert unfolded(page) == [0, 1, 2]  # the year question has nothing to fix
    with app.app_context():
        assert get_survey(get_db(), "campus-life") is None
    # Fixed one at a time, the rest stay listed.
    page = text(press(builder, page, "preview", slug="campus-life", q2__max="50"))
    assert [field for field, _path, _message in error_summary(page)] == [
        "b-q0-epsilon",
        "b-q1-options-ko",
    ]
    assert field_error(page, "b-slug") is None


def test_questions_move_up_and_down_keeping_everything_typed(
    builder: FlaskClient, app: Flask
) -> None:
    page = bilingual_page(builder)
    moved = text(press(builder, page, "move_up", "1", q1__text__en="Edited, not saved?"))
    form = page_form(moved)
    assert [form[f"q{i}.key"] for i in range(4)] == ["substance", "cheated", "drinks", "year"]
    assert form["q0.text.en"] == "Edited, not saved?"
    assert form["q0.options.ko"] == "없음\n대마\n각성제"
    assert (form["q1.epsilon"], form["q2.max"]) == ("0.5", "50")
    assert "q3.sensitive" not in form and form["slug"] == "campus-life"
    assert 'class="errors' not in moved  # a move judges nothing
    # First and last have only the button that means something. Each comes back at the
    # question's new place: the fragment is its button there, the other way's at an end.
    assert [name for name, _text in buttons(question_part(moved, 0))] == ["move_down", "remove"]
    assert [name for name, _text in buttons(question_part(moved, 3))] == ["move_up", "remove"]
    assert buttons(question_part(moved, 1)) == [
        ("move_up", "Move question 2 up"),
        ("move_down", "Move question 2 down"),
        ("remove", "Remove question 2"),
    ]
    returns = dict(re.findall(r'id="(b-q\d-move_\w+)"[^>]* formaction="([^"]+)"', moved))
    assert returns == {
        "b-q0-move_down": "/research/builder/#b-q1-move_down",
        "b-q1-move_up": "/research/builder/#b-q0-move_down",
        "b-q1-move_down": "/research/builder/#b-q2-move_down",
        "b-q2-move_up": "/research/builder/#b-q1-move_up",
        "b-q2-move_down": "/research/builder/#b-q3-move_up",
        "b-q3-move_up": "/research/builder/#b-q2-move_up",
    }

    back = text(press(builder, moved, "move_down", "0"))
    assert [page_form(back)[f"q{i}.key"] for i in range(4)] == [
        "cheated",
        "substance",
        "drinks",
        "year",
    ]
    # No neighbour that way, or no such question: nothing moves.
    for button, index in (("move_up", "0"), ("move_down", "3"), ("move_down", "99")):
        same = text(press(builder, back, button, index))
        assert page_form(same)["q0.key"] == "cheated" and page_form(same)["q3.key"] == "year"

    removed = text(press(builder, back, "remove", "1"))
    assert [page_form(removed)[f"q{i}.key"] for i in range(3)] == ["cheated", "drinks", "year"]
    assert "b-q3-key" not in removed
    assert press(builder, removed, "save").status_code == 302
    with app.app_context():
        survey = get_survey(get_db(), "campus-life")
        assert survey is not None
        assert [q.key for q in survey.questions] == ["cheated", "drinks", "year"]
        assert survey.questions[0].text == "Have you cheated on an exam?"


def test_questions_are_folded_to_one_line_until_opened(builder: FlaskClient) -> None:
    assert unfolded(text(builder.get(BUILDER))) == [0]  # a new survey's first question
    page = bilingual_page(builder)
    assert unfolded(page) == []
    summary = re.search(r"<summary>(.*?)</summary>", question_part(page, 1), re.S)
    assert summary
    words = re.sub(r"<[^>]+>", "", summary.group(1)).split()
    assert " ".join(words) == "Question 2 One of several options Which have you used?"
    added = text(press(builder, page, "add", "number"))
    assert unfolded(added) == [4]  # the new one, open with its key focused
    assert "autofocus" in input_tag(added, "b-q4-key")


def test_only_the_fields_of_a_questions_type_are_shown(builder: FlaskClient) -> None:
    page = bilingual_page(builder)
    choice = "One of several options"
    number = "A whole number in a range"
    scale = "A rating scale (ordered labels with scores)"
    groups = {
        f"Only for questions of type: {choice}, {scale}, or Tick all that apply": [
            False,
            True,
            False,
            True,
        ],
        f"Only for questions of type: {number}": [False, False, True, False],
        f"Only for questions of type: {choice}, {number}, or {scale}": [False, True, True, True],
        f"Only for questions of type: {scale}": [False, False, False, False],
    }
    for legend, shown in groups.items():
        for index, expected in enumerate(shown):
            found = re.search(
                rf'<fieldset class="type-fields[^"]*" data-types="[^"]*"( hidden)?>\s*'
                rf"<legend>{re.escape(legend)}</legend>",
                question_part(page, index),
            )
            assert found, (legend, index)
            assert (found.group(1) is None) == expected, (legend, index)
    assert 'data-types="choice number scale"' in page


@pytest.mark.parametrize("client_name", ["stranger", "viewer"])
def test_only_the_owner_moves_a_drafts_questions(
    drafts: FlaskClient, app: Flask, client_name: str
) -> None:
    """bob, a stranger to ada's draft or a viewer of it, learns nothing from a move."""
    if client_name == "viewer":
        with app.app_context():
            db = get_db()
            survey = get_survey(db, "campus-life")
            bob = db.execute("SELECT id FROM researchers WHERE username = 'bob'").fetchone()[0]
            assert survey is not None
            share_survey(db, survey, bob)
    form = page_form(text(drafts.get(BUILDER)))  # bob's own valid CSRF token
    response = drafts.post(
        f"{BUILDER}drafts/campus-life", data={**form.to_dict(flat=False), "move_down": "0"}
    )
    assert response.status_code == 404
    assert "Have you cheated" not in text(response)


def test_a_move_without_the_csrf_token_is_refused(builder: FlaskClient) -> None:
    form = page_form(bilingual_page(builder))
    del form["csrf_token"]
    response = builder.post(BUILDER, data={**form.to_dict(flat=False), "move_down": "0"})
    assert response.status_code == 400
    assert "Have you cheated" not in text(response)


def test_a_slug_already_taken_is_refused_at_the_slug(builder: FlaskClient) -> None:
    page = bilingual_page(builder)
    response = press(builder, page, "save", slug=SLUG)
    assert response.status_code == 409
    assert field_error(text(response), "b-slug") == (
        "A survey with this slug already exists: choose another."
    )


def test_a_bad_upload_shows_the_imports_message(builder: FlaskClient, tmp_path: Path) -> None:
    bad = "slug: s\ntitle: T\nquestions:\n  - key: Cheated!\n    text: Q?\n"
    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    with pytest.raises(SurveyDefinitionError) as err:
        load_definition(path)
    expected = (
        f"bad.yaml:{err.value.line}: questions[0].key: must match [a-z0-9_]+ (got 'Cheated!')"
    )
    assert str(err.value).endswith(expected)
    page = text(builder.get(BUILDER))
    response = upload(builder, page, "bad.yaml", bad.encode())
    assert response.status_code == 400
    assert f"<code>{expected.replace(chr(39), '&#39;')}</code>" in text(response)
    not_text = upload(builder, page, "latin1.yaml", "title: caf\xe9\n".encode("latin-1"))
    assert "latin1.yaml:1: not UTF-8 text (undecodable byte at offset 10)" in text(not_text)


def upload(client: FlaskClient, page: str, name: str, content: bytes, url: str = ""):
    from io import BytesIO

    token = page_form(page)["csrf_token"]
    return client.post(
        url or f"{BUILDER}upload",
        data={"csrf_token": token, "upload": "1", "file": (BytesIO(content), name)},
        content_type="multipart/form-data",
    )


def test_an_uploaded_file_fills_the_form_and_saves_as_a_draft(
    builder: FlaskClient, app: Flask
) -> None:
    page = text(builder.get(BUILDER))
    response = upload(builder, page, "mixed-survey.yaml", MIXED.read_bytes())
    assert response.status_code == 200
    page = text(response)
    assert "Loaded mixed-survey.yaml." in page
    form = page_form(page)
    assert form["slug"] == "student-life"
    assert form["q0.options.en"] == "1\n2\n3\n4+"
    assert "q0.sensitive" not in form  # the plain covariate
    assert form["q1.epsilon"] == "0.5"
    assert "q5.required" not in form  # may be skipped
    with app.app_context():
        assert get_survey(get_db(), "student-life") is None  # nothing stored yet
    assert press(builder, page, "save").status_code == 302
    with app.app_context():
        stored = get_survey(get_db(), "student-life")
        assert stored is not None and stored.status == "draft"
        original = load_definition(MIXED)
        assert parse_definition(press_download(builder, "student-life")) == original


def press_download(client: FlaskClient, slug: str) -> str:
    return text(client.get(f"{BUILDER}drafts/{slug}/survey.yaml"))


def test_the_preview_can_never_store_a_response(builder: FlaskClient, app: Flask) -> None:
    page = bilingual_page(builder)
    press(builder, page, "save")
    for preview in (page, text(builder.get(f"{BUILDER}drafts/campus-life/preview"))):
        frame = preview.split('<fieldset disabled class="preview-frame">', 1)
        assert len(frame) == 2, "the respondent's page sits in a disabled fieldset"
        assert 'id="survey-form"' in frame[1]
        assert 'name="submission_id" value=""' in frame[1]  # no form token a server accepts
        assert "randomize.js" not in preview
    # Even sent on purpose, the preview's fields store nothing: the draft is not open.
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
    respondent = app.test_client()
    sent = respondent.post("/s/campus-life", data={**fields, "cheated": "y"})
    assert sent.status_code in (400, 403)
    with app.app_context():
        assert get_db().execute("SELECT count(*) FROM responses").fetchone()[0] == 0


def test_the_live_preview_returns_the_panel_alone(builder: FlaskClient) -> None:
    page = bilingual_page(builder)
    form = page_form(page)
    form["q0.text.en"] = "Edited live?"
    response = builder.post(f"{BUILDER}preview", data=form)
    assert response.status_code == 200
    fragment = text(response)
    assert "<html" not in fragment and '<form method="post" action="/research' not in fragment
    assert "Edited live?" in fragment
    assert 'class="ledger-total"' in fragment
    form["q0.text.en"] = ""
    invalid = text(builder.post(f"{BUILDER}preview", data=form))
    assert 'data-error-field="b-q0-text-en"' in invalid
    assert "<span data-message>must not be empty</span>" in invalid


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    ["", "preview", "upload", f"drafts/{SLUG}", f"drafts/{SLUG}/upload"],
)
def test_posts_without_the_csrf_token_are_refused(
    builder: FlaskClient, app: Flask, path: str
) -> None:
    page = bilingual_page(builder)
    form = page_form(page)
    del form["csrf_token"]
    response = builder.post(BUILDER + path, data={**form.to_dict(flat=False), "save": "1"})
    assert response.status_code == 400
    with app.app_context():
        assert get_survey(get_db(), "campus-life") is None


@pytest.fixture
def drafts(app: Flask, builder: FlaskClient) -> FlaskClient:
    """ada's saved draft, and a second researcher, bob, logged in on a client of his own."""
    press(builder, bilingual_page(builder), "save")
    with app.app_context():
        create_researcher(get_db(), "bob", PASSWORD)
    other = app.test_client()
    assert log_in(other, "bob").status_code == 302
    return other


DRAFT_PAGES = [
    "drafts/campus-life",
    "drafts/campus-life/preview",
    "drafts/campus-life/survey.yaml",
]


@pytest.mark.parametrize("path", DRAFT_PAGES)
def test_only_the_owner_sees_a_draft(drafts: FlaskClient, builder: FlaskClient, path: str) -> None:
    assert builder.get(BUILDER + path).status_code == 200
    assert drafts.get(BUILDER + path).status_code == 404


@pytest.mark.parametrize("path", ["drafts/campus-life", "drafts/campus-life/upload"])
def test_only_the_owner_changes_a_draft(
    drafts: FlaskClient, app: Flask, builder: FlaskClient, path: str
) -> None:
    page = text(drafts.get(BUILDER))
    form = page_form(page)  # bob's own valid CSRF token
    response = drafts.post(BUILDER + path, data={**form.to_dict(flat=False), "save": "1"})
    assert response.status_code == 404
    with app.app_context():
        survey = get_survey(get_db(), "campus-life")
        assert survey is not None and survey.title == "Campus life"


def test_a_survey_past_the_draft_stage_is_not_in_the_builder(
    builder: FlaskClient, app: Flask
) -> None:
    press(builder, bilingual_page(builder), "save")
    with app.app_context():
        from survey_app.storage.surveys import set_status

        survey = get_survey(get_db(), "campus-life")
        assert survey is not None
        set_status(get_db(), survey, "open")
    for path in DRAFT_PAGES:
        assert builder.get(BUILDER + path).status_code == 404
    # The example survey nobody owns is no one's draft either.
    assert builder.get(f"{BUILDER}drafts/{SLUG}").status_code == 404
