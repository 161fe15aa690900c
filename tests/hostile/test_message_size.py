"""Message sizes must not give answers away: TLS hides the bytes, not how many there are.

A network observer sees the length of each request and response. With JavaScript off the
POST carries true answers, and the thank-you page shows the stored reports; with it on,
the browser sends reports. For every question type, each answer a respondent can give
goes on the wire at one length, and the thank-you page has one length whatever was
stored. Without JavaScript a number is chosen from a list of fixed-width values (ranges
of up to 101 numbers) or typed at a fixed width the input's pattern asks for.

The requests are the bodies a browser sends from the rendered form: its hidden inputs and
the radio values the page itself offers, URL-encoded in the page's order. The server's
coins are fixed (the report is the truth, one-hot bits for unary encoding, Duchi's bit is
"above the middle"), so different true answers give different stored reports and the
pages would differ if their size depended on them.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain.answers import NUMBER_WIDTH, fixed_width_number, padded_number, to_stored
from survey_app.domain.definitions import parse_definition
from survey_app.privacy.wire import ReportFormat
from survey_app.storage.surveys import Question, Survey, store_survey
from survey_app.web.database_session import get_db
from survey_app.web.respond import routes, section_steps
from survey_app.web.respond.carried_reports import Carried, carry
from tests.support.respondents import hidden_fields

SLUG = "sizes"
DEFINITION = f"""\
slug: {SLUG}
title: Every question type
questions:
  - {{key: yn, text: Yes or no, type: yes_no}}
  - {{key: few, text: One of three, type: choice, options: [a, bb, cccccc], mechanism: grr}}
  - {{key: many, text: One of twelve, type: choice, mechanism: grr,
      options: [o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10, a much longer eleventh option]}}
  - {{key: unary, text: Unary, type: choice, options: [x, yy, zzz, w], mechanism: oue}}
  - {{key: sets, text: Sets of three, type: choice, mechanism: subset,
      options: [s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, the longest option of twelve]}}
  - {{key: ticks, text: Tick all that apply, type: multiple,
      options: [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, the longest option of twelve]}}
  - {{key: laplace, text: Laplace, type: number, min: -20, max: 500, mechanism: laplace}}
  - {{key: duchi, text: Duchi, type: number, min: 0, max: 50, mechanism: duchi}}
  - {{key: plain_choice, text: Plain choice, type: choice, sensitive: false,
      options: ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11 or more"]}}
  - {{key: plain_number, text: Plain number, type: number, min: 0, max: 1000, sensitive: false}}
  - {{key: optional, text: Optional, type: yes_no, required: false}}
"""
RADIO = re.compile(r'<input type="radio" name="([\w.]+)" value="([^"]*)"')
SELECT = re.compile(r'<select id="n-\w+" name="(\w+)"[^>]*>(.*?)</select>', re.S)
#: An option sends its value, or its text when it has none (written only where they differ).
OPTION = re.compile(r'<option(?: value="([^"]*)")?>([^<]*)')
#: The tick-all question's yes/no pair per option, as the page without JavaScript names them.
TICKS = {f"ticks.{index}" for index in range(12)}
PATTERN = re.compile(r'<input type="text" id="n-\w+" name="(\w+)" [^>]*pattern="([^"]+)"')


@pytest.fixture
def survey(app: Flask) -> Survey:
    with app.app_context():
        return store_survey(get_db(), parse_definition(DEFINITION))


def fixed_report(question: Question, value: Any) -> Any:
    """The coins fixed: a report that differs whenever the true answer does."""
    if value is None or not question.sensitive:
        return value
    mechanism = question.mechanism.name
    if mechanism == "optimized_unary_encoding":
        return tuple(int(i == value) for i in range(len(question.options)))
    if mechanism == "subset_selection":  # the truth and the next two
        return tuple(sorted((value + step) % len(question.options) for step in range(3)))
    if mechanism == "sampled_option":  # the first option ticked, and whether any is
        return next((j for j, bit in enumerate(value) if bit), 0), int(any(value))
    if mechanism == "duchi_binary":
        assert question.min is not None and question.max is not None
        return int(2 * value > question.min + question.max)
    return value


@pytest.fixture
def fixed_coins(monkeypatch: pytest.MonkeyPatch) -> None:
    def randomize(survey: Survey, values: Mapping[str, Any]) -> dict[str, Any]:
        return {q.key: fixed_report(q, values.get(q.key)) for q in survey.questions}

    monkeypatch.setattr(routes, "randomize_response", randomize)


def rendered_form(app: Flask) -> tuple[FlaskClient, str]:
    client = app.test_client()
    response = client.get(f"/s/{SLUG}")
    assert response.status_code == 200
    return client, response.get_data(as_text=True)


def radio_values(page: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for name, value in RADIO.findall(page):
        values.setdefault(name, []).append(value)
    return values


BASELINE = {"laplace": "0007", "duchi": "07", "plain_number": "0007"}  # fixed widths


def listed_values(page: str) -> dict[str, dict[str, str]]:
    """Each number <select>'s options: number shown -> value sent (without "Choose…")."""
    return {
        name: {
            label: value or label for value, label in OPTION.findall(options) if label != "Choose…"
        }
        for name, options in SELECT.findall(page)
    }


def post(app: Flask, answers: dict[str, str], client_randomized: bool = False) -> tuple[int, int]:
    """(request body length, response Content-Length) for one respondent's POST."""
    client, page = rendered_form(app)
    fields = {**hidden_fields(page), **answers}
    if client_randomized:
        fields["randomized"] = "client"
    body = urllib.parse.urlencode(fields)
    response = client.post(
        f"/s/{SLUG}", data=body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.content_length == len(response.get_data())
    return len(body), int(response.content_length)


def baseline(page: str) -> dict[str, str]:
    return {**{name: values[0] for name, values in radio_values(page).items()}, **BASELINE}


def test_every_option_of_a_question_has_one_length_on_the_wire(app: Flask, survey: Survey) -> None:
    _, page = rendered_form(app)
    offered = radio_values(page)
    named = {"yn", "few", "many", "unary", "sets", "plain_choice", "optional"}
    assert set(offered) == named | TICKS
    assert all(offered[name] == ["y", "n"] for name in TICKS)
    assert offered["yn"] == offered["optional"] == ["y", "n"]
    assert offered["many"] == offered["sets"] == [f"{i:02d}" for i in range(12)]
    assert offered["plain_choice"] == [f"{i:02d}" for i in range(11)]
    assert offered["few"] == offered["unary"][:3] == ["0", "1", "2"]
    for name, values in offered.items():
        assert len({len(urllib.parse.quote_plus(value)) for value in values}) == 1, name


@pytest.mark.slow
@pytest.mark.usefixtures("fixed_coins")
def test_without_javascript_sizes_do_not_depend_on_the_true_answers(
    app: Flask, survey: Survey
) -> None:
    """Each question answered every way it can be (the others fixed): the POST and the
    thank-you page keep their lengths, numbers as the page offers or asks for them."""
    _, page = rendered_form(app)
    fixed = baseline(page)
    for name, values in radio_values(page).items():
        sizes = {post(app, {**fixed, name: value}) for value in values}
        assert len(sizes) == 1, (name, sizes)
    listed = listed_values(page)
    assert set(listed) == {"duchi"}  # 0-50; the other two ranges are too wide for a list
    assert list(listed["duchi"]) == [str(n) for n in range(51)]
    sizes = {post(app, {**fixed, "duchi": listed["duchi"][n]}) for n in ("0", "7", "49", "50")}
    assert len(sizes) == 1, sizes
    patterns = dict(PATTERN.findall(page))
    assert patterns == {"laplace": "(0|-)[0-9]{3}", "plain_number": "[0-9]{4}"}
    for name, typed in {
        "laplace": ["-020", "-001", "0000", "0007", "0499", "0500"],
        "plain_number": ["0000", "0007", "1000"],
    }.items():
        assert all(re.fullmatch(patterns[name], value) for value in typed)
        sizes = {post(app, {**fixed, name: value}) for value in typed}
        assert len(sizes) == 1, (name, sizes)
    every_set = [dict.fromkeys(TICKS, tick) for tick in ("y", "n")]  # all ticked, none
    every_set.append({name: "y" if name.endswith(".5") else "n" for name in TICKS})
    assert len({post(app, {**fixed, **answer}) for answer in every_set}) == 1
    skipped = {key: value for key, value in fixed.items() if key != "optional"}
    # Skipping is stored as such (null) and so is no secret; the page's size keeps even that.
    assert post(app, skipped)[1] == post(app, fixed)[1]


def test_with_javascript_every_report_has_one_length(app: Flask, survey: Survey) -> None:
    """What randomize.js sends (tests/browser/ checks the script does): every report of a
    question, at its extremes, gives one request length and one page length."""
    reports = {
        "yn": ["y", "n"],
        "few": ["0", "2"],
        "many": ["00", "11"],
        "unary": ["0000", "1111", "1000"],
        "sets": ["00,01,02", "09,10,11", "00,05,11"],
        "ticks": ["00:0", "11:1", "05:1"],
        # The ends of the honest range of reports for -20..500 at ε = 1 (min - B, max + B).
        "laplace": [padded_number(n) for n in (-21646, -1, 0, 7, 22126)],
        "duchi": ["0", "1"],
        "plain_choice": ["00", "10"],
        "plain_number": [padded_number(n) for n in (0, 1000)],
        "optional": ["y", "n"],
    }
    assert {len(padded_number(n)) for n in (-(10**15), 0, 10**15)} == {NUMBER_WIDTH}
    fixed = {name: values[0] for name, values in reports.items()}
    sizes = {
        post(app, {**fixed, name: value}, client_randomized=True)
        for name, values in reports.items()
        for value in values
    }
    assert len(sizes) == 1, sizes


@pytest.mark.parametrize("name, unpadded", [("laplace", "7"), ("plain_number", "1000")])
def test_the_browser_must_send_numbers_padded(
    app: Flask, survey: Survey, name: str, unpadded: str
) -> None:
    client, page = rendered_form(app)
    reports = {
        "yn": "y",
        "few": "0",
        "many": "00",
        "unary": "0100",
        "sets": "00,05,11",
        "ticks": "05:1",
        "laplace": padded_number(7),
        "duchi": "1",
        "plain_choice": "00",
        "plain_number": padded_number(7),
        name: unpadded,
    }
    response = client.post(
        f"/s/{SLUG}", data={**hidden_fields(page), **reports, "randomized": "client"}
    )
    assert response.status_code == 400
    assert "malformed" in response.get_data(as_text=True)


def test_fixed_width_numbers(app: Flask, survey: Survey) -> None:
    laplace, duchi = survey.questions[6], survey.questions[7]
    assert [fixed_width_number(laplace, n) for n in (-20, -1, 0, 7, 500)] == [
        "-020",
        "-001",
        "0000",
        "0007",
        "0500",
    ]
    assert [fixed_width_number(duchi, n) for n in (0, 7, 50)] == ["00", "07", "50"]
    _, page = rendered_form(app)
    assert '<option value="">Choose…' in page and "Type all 3 digits after a 0" in page
    assert "for example -020 for -20 and 0500 for 500" in page
    assert "for example 0000 for 0)" in page
    # The number inputs are randomize.js's: disabled, so a form without JS never sends them.
    assert page.count('<div class="js-swap" hidden><label>A whole number') == 3
    assert len(re.findall(r'<input type="number" [^>]* disabled required>', page)) == 3


@pytest.mark.parametrize("sent, stored", [("07", 7), ("7", 7), ("-003", -3), ("0500", 500)])
def test_the_server_takes_fixed_width_and_plain_numbers(
    app: Flask, survey: Survey, fixed_coins: None, sent: str, stored: int
) -> None:
    """Without JS (or with JS but no crypto) the number is parsed as an integer, in range."""
    client, page = rendered_form(app)
    fields = {**hidden_fields(page), **baseline(page), "laplace": sent}
    response = client.post(f"/s/{SLUG}", data=fields)
    assert response.status_code == 200, response.get_data(as_text=True)
    with app.app_context():
        (answers,) = get_db().execute("SELECT answers FROM responses").fetchone()
    assert json.loads(answers)["laplace"] == stored  # the coins are fixed: report = truth


@pytest.mark.parametrize("sent", ["51", "-01", "0x7", "0501"])
def test_the_server_checks_numbers_without_javascript(
    app: Flask, survey: Survey, sent: str
) -> None:
    name = "duchi" if sent != "0501" else "laplace"
    client, page = rendered_form(app)
    fields = {**hidden_fields(page), **baseline(page), name: sent}
    assert client.post(f"/s/{SLUG}", data=fields).status_code == 400


# The same questions in three sections, walked without JavaScript: each section's POST and
# the page it brings back (the next section's, carrying the reports so far; then the
# thank-you page) keep their lengths whatever the true answers.

SECTIONED_SLUG = "sizes-in-sections"
SECTION_ITEMS = re.split(r"\n(?=  - \{)", DEFINITION.split("questions:\n", 1)[1].rstrip("\n"))
SECTIONED = (
    f"slug: {SECTIONED_SLUG}\ntitle: Every question type, in sections\nsections:\n"
    + "".join(
        f"  - title: Part {number}\n    questions:\n"
        + "".join(re.sub(r"(?m)^", "    ", item) + "\n" for item in items)
        for number, items in enumerate(
            (SECTION_ITEMS[:4], SECTION_ITEMS[4:8], SECTION_ITEMS[8:]), start=1
        )
    )
)
FIELDS = re.compile(r'<input type="hidden" name="([\w-]+)" value="([^"]*)">')


def walk_sections(app: Flask, survey: Survey, answers: dict[str, str]) -> tuple[int, ...]:
    """Every section posted in turn with its part of ``answers``: each POST's length and
    each page's, then the count of responses stored (one)."""
    client = app.test_client()
    page = client.get(f"/s/{SECTIONED_SLUG}").get_data(as_text=True)
    sizes: list[int] = []
    for index in range(len(survey.sections)):
        keys = {q.key for q in survey.section_questions(index)}
        mine = {name: value for name, value in answers.items() if name.split(".")[0] in keys}
        body = urllib.parse.urlencode({**dict(FIELDS.findall(page)), **mine, "sections-go": "next"})
        response = client.post(
            f"/s/{SECTIONED_SLUG}", data=body, content_type="application/x-www-form-urlencoded"
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        page = response.get_data(as_text=True)
        sizes += [len(body), len(response.get_data())]
    return tuple(sizes)


@pytest.mark.slow
def test_without_javascript_section_sizes_do_not_depend_on_the_true_answers(
    app: Flask, survey: Survey, monkeypatch: pytest.MonkeyPatch
) -> None:
    def randomize(survey: Survey, values: Mapping[str, Any]) -> dict[str, Any]:
        return {q.key: fixed_report(q, values.get(q.key)) for q in survey.questions}

    monkeypatch.setattr(section_steps, "randomize_response", randomize)
    with app.app_context():
        sectioned = store_survey(get_db(), parse_definition(SECTIONED))
    assert [len(sectioned.section_questions(index)) for index in range(3)] == [4, 4, 3]
    # The same questions on one page (a sectioned page holds one section): every option.
    _, page = rendered_form(app)
    fixed = baseline(page)
    answered = [
        {**fixed, name: value} for name, values in radio_values(page).items() for value in values
    ]
    answered += [{**fixed, "duchi": f"{n:02d}"} for n in (0, 7, 49, 50)]
    answered += [{**fixed, "laplace": value} for value in ("-020", "0000", "0500")]
    answered += [{**fixed, "plain_number": value} for value in ("0000", "1000")]
    answered += [{**fixed, **dict.fromkeys(TICKS, tick)} for tick in ("y", "n")]
    sizes = {walk_sections(app, sectioned, answers) for answers in answered}
    assert len(sizes) == 1, sizes
    with app.app_context():
        stored = get_db().execute("SELECT count(*) FROM responses").fetchone()[0]
    assert stored == len(answered)


def extreme_reports(question: Question) -> tuple[Any, Any]:
    """The shortest and the longest report a question's mechanism can send (numbers: the
    ends of its honest range, the widest any survey file allows here)."""
    mechanism, k = question.mechanism, len(question.options)
    shape = mechanism.report_format
    if shape is ReportFormat.YES_NO:
        return False, True
    if shape is ReportFormat.BITS:
        return (0,) * k, (1,) * k
    if shape is ReportFormat.SUBSET:
        size = mechanism.size  # type: ignore[attr-defined]
        return tuple(range(size)), tuple(range(k - size, k))
    if shape is ReportFormat.OPTION_BIT:
        return (0, 0), (k - 1, 1)
    if shape is ReportFormat.OPTION:
        return 0, k - 1
    return mechanism.report_range()


#: A section of one number whose honest reports pass ±10^9 (11 characters), and one after.
WIDE = """\
slug: wide
title: Wide
sections:
  - title: A number
    questions:
      - {key: far, text: Far, type: number, min: -1000000000, max: -999000000,
         mechanism: laplace, epsilon: 0.1}
  - title: Then
    questions:
      - {key: yn, text: Yes or no}
"""


@pytest.mark.parametrize("definition", [SECTIONED, WIDE], ids=["every-type", "wide"])
def test_the_carried_field_has_one_length_at_the_extreme_reports(
    app: Flask, definition: str
) -> None:
    """Not only the reports fixed coins give: every question at its shortest and longest
    report (a skip too) carries at one length, on the page of each section."""
    with app.app_context():
        survey = store_survey(get_db(), parse_definition(definition))
    ends = {q.key: [to_stored(q, r) for r in extreme_reports(q)] + [None] for q in survey.questions}
    if definition == WIDE:
        assert max(map(abs, survey.questions[0].mechanism.report_range())) > 10**9
    with app.test_request_context():
        for section in range(len(survey.sections)):
            keys = [q.key for i in range(section) for q in survey.section_questions(i)]
            lengths = {
                len(carry(survey, "x" * 22, Carried(section, {k: ends[k][pick] for k in keys})))
                for pick in range(3)
            }
            assert len(lengths) == 1, (section, lengths)
