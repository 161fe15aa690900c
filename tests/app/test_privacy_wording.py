"""Privacy figures in words: every ε and every "at most N times as likely" a person reads is
rounded up, never to nearest, in every language; and every survey the import accepts, up
to its largest total (100 questions at ε = 10), renders with words that still mean
something.

The rounding is checked exactly, OpenDP-style, on both sides: the ε shown is never below
the true ε of the coins flipped (e^shown against the mechanism's exact worst likelihood
ratio, in 60-digit decimals rounded the unfavourable way), and never above the decimal the
survey file asked for.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.domain.exports import aggregate_csv, codebook
from survey_app.domain.question_estimates import survey_estimates
from survey_app.domain.question_privacy import (
    epsilon_bound,
    epsilon_text,
    odds_text,
    shown_epsilon,
    survey_ledger,
)
from survey_app.privacy import DiscreteLaplace, TwoCoinDesign
from survey_app.privacy.rationals import decimal_ceiling
from survey_app.storage.surveys import Question, get_survey
from survey_app.web.database_session import get_db
from survey_app.web.research.publishing import epsilon_shown
from tests.support.examples import SLUG
from tests.support.researchers import log_in
from tests.support.respondents import answers, fresh_form

LANGUAGES = ("en", "ko", "zh")
# The boundaries of three-decimal rounding, and the import's whole range (0.01 to 10).
EDGE_EPSILONS = ("0.01", "0.015", "0.125", "0.999", "1", "1.1", "2.5", "9.999", "10")
# One question of each mechanism, as a survey file writes it; {eps} is its ε line.
KINDS = {
    "yes_no": "type: yes_no{eps}",
    "grr": "type: choice, options: [a, b, c, d, e], mechanism: grr{eps}",
    "oue": "type: choice, options: [a, b, c], mechanism: oue{eps}",
    "laplace": "type: number, min: 0, max: 10, mechanism: laplace{eps}",
    "duchi": "type: number, min: 0, max: 4, mechanism: duchi{eps}",
}
EDGES = "edges"


def survey_file(tmp_path: Path, slug: str, questions: Iterable[str], header: str = "") -> Path:
    """A survey file of one-line questions, written as a researcher would."""
    lines = [f"slug: {slug}", f"title: {slug}", *filter(None, [header]), "questions:"]
    lines += [f"  - {{key: q{i}, text: Question {i}, {q}}}" for i, q in enumerate(questions)]
    path = tmp_path / f"{slug}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def imported(runner: FlaskCliRunner, path: Path, *options: str) -> str:
    """The survey file through ``survey-app import-survey``, as an operator would."""
    result = runner.invoke(args=["import-survey", str(path), *options])
    assert result.exit_code == 0, result.output
    return result.output.strip()


def question(kind: str, epsilon: str | None) -> str:
    """One question of ``kind`` asking for ``epsilon`` (None: the type's default)."""
    return KINDS[kind].format(eps="" if epsilon is None else f", epsilon: {epsilon}")


@pytest.fixture
def edges(runner: FlaskCliRunner, tmp_path: Path) -> str:
    """Every mechanism at the rounding boundaries 0.015 and 0.125, and at its default."""
    kinds = [(kind, eps) for kind in KINDS for eps in ("0.015", "0.125", None)]
    return imported(runner, survey_file(tmp_path, EDGES, itertools.starmap(question, kinds)))


# --- the rounding itself -----------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_epsilon_and_odds_round_up_at_the_boundaries(app: Flask, language: str) -> None:
    with app.test_request_context(f"/?lang={language}"):
        # Exact decimals are shown as they are, to the survey file's three decimals.
        assert epsilon_text("0.015") == "0.015"  # half-even to two decimals said "0.01"
        assert epsilon_text("0.125") == "0.125"  # and this "0.12"
        assert epsilon_text("1.1") == "1.10"
        assert epsilon_text(Fraction(1, 3)) == "0.334"
        assert epsilon_text(Fraction(1000)) == "1,000.00"
        # A hair above a boundary goes to the next one.
        assert epsilon_text(Fraction(1099, 1000) + Fraction(1, 10**30)) == "1.10"
        # e^ε rounded up: e^0.015 = 1.01511, e^1.1 = 3.00417, e^10 = 22026.47.
        assert odds_text("0.015") == "1.02"
        assert odds_text("1.1") == "3.01"
        assert odds_text("0") == "1.0"  # exactly 1: no rounding at all
        assert odds_text("10") == "22,027"
        assert odds_text(Fraction(math.log(123_456.4))) == "123,457"
        # Beyond a billion there are no digits to show (e^20.72 ≈ 10^9).
        assert odds_text("20.7") == "977,002,726"  # 977,002,725.83
        assert odds_text("20.8") is None
        assert odds_text("1000") is None  # e^1000 overflows a float; not a Decimal
        # A float may sit just below the true ε: refused, not rounded from.
        with pytest.raises(TypeError):
            epsilon_text(0.5)  # type: ignore[arg-type]


def test_decimal_ceiling_is_exact_for_floats_and_fractions() -> None:
    assert decimal_ceiling(0.015, 3) == Decimal("0.015")  # the float is 0.01499999…
    assert decimal_ceiling(0.125, 3) == Decimal("0.125")
    assert decimal_ceiling(Fraction(125001, 10**6), 3) == Decimal("0.126")
    assert decimal_ceiling(Fraction(-1, 3), 3) == Decimal("-0.333")
    assert str(decimal_ceiling(Fraction(10**40 + 1), 2)) == f"{10**40 + 1}.00"  # no context


def exp_below(exponent: Fraction) -> Decimal:
    """A 60-digit decimal at or below e^exponent."""
    with localcontext() as context:
        context.prec, context.rounding = 60, ROUND_FLOOR
        return (Decimal(exponent.numerator) / Decimal(exponent.denominator)).exp().next_minus()


def decimal_above(value: Fraction) -> Decimal:
    """A 60-digit decimal at or above value."""
    with localcontext() as context:
        context.prec, context.rounding = 60, ROUND_CEILING
        return Decimal(value.numerator) / Decimal(value.denominator)


def worst_ratio(q: Question) -> Fraction:
    """max over reports of max_x P(r | x) / min_y P(r | y), from the exact probabilities."""
    mechanism = q.mechanism
    if q.type == "yes_no":
        values: list[object] = [True, False]
        reports: list[object] = [True, False]
    elif q.type == "number":
        assert q.min is not None and q.max is not None
        values, reports = list(range(q.min, q.max + 1)), [0, 1]
    else:
        values = list(range(len(q.options)))
        reports = (
            list(itertools.product((0, 1), repeat=len(q.options)))
            if mechanism.name == "optimized_unary_encoding"
            else values
        )
    ratios = []
    for report in reports:
        chances = [Fraction(mechanism.probability(report, value)) for value in values]
        ratios.append(max(chances) / min(chances))
    return max(ratios)


def test_the_epsilon_shown_is_never_below_the_true_one_nor_above_the_request(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    """Every mechanism at the boundaries and over the import's range, and at its default:
    e^shown ≥ the exact worst ratio (so shown ≥ the true ε), shown ≤ the requested decimal;
    and the survey's total: e^total ≥ the product of the ratios (basic composition)."""
    kinds = [(kind, eps) for kind in KINDS for eps in (*EDGE_EPSILONS, None)]
    slug = imported(runner, survey_file(tmp_path, "grid", itertools.starmap(question, kinds)))
    with app.test_request_context("/"):
        survey = get_survey(get_db(), slug)
        assert survey is not None
        ledger = survey_ledger(survey)
        product, exact_part = Fraction(1), Fraction(0)
        for q, entry, (kind, requested) in zip(survey.questions, ledger, kinds, strict=True):
            shown = Fraction(shown_epsilon(entry.epsilon_bound))
            if isinstance(q.mechanism, DiscreteLaplace):  # its pmf is a float: ε = Δγ exactly
                assert shown >= q.mechanism.epsilon_exact, (kind, requested)
                exact_part += q.mechanism.epsilon_exact
            else:
                ratio = worst_ratio(q)
                assert exp_below(shown) >= decimal_above(ratio), (kind, requested, shown)
                product *= ratio
            assert shown <= Fraction(requested or ("1.099" if kind == "yes_no" else "1"))
        total = Fraction(shown_epsilon(ledger.epsilon_bound))
        assert exp_below(total - exact_part) >= decimal_above(product)
        # Exactly at the request, not a thousandth above (a float bound alone gave 0.126).
        texts = [epsilon_text(entry.epsilon_bound) for entry in ledger]
        shown_texts = dict(zip(kinds, texts, strict=True))
        assert {shown_texts[kind, "0.125"] for kind in KINDS} == {"0.125"}
        assert {shown_texts[kind, "0.015"] for kind in KINDS} == {"0.015"}
        assert shown_texts["yes_no", None] == "1.099"  # ln 3 = 1.0986…


def test_a_float_just_below_a_boundary_cannot_hide_a_true_epsilon_above_it(app: Flask) -> None:
    """Coins whose exact ratio is a hair above e^0.015 while the float ε computed from them
    is 0.01499999999999995: without a margin for float error the page would say 0.015. A
    yes/no question stored before questions kept their requested ε has no decimal to lean
    on, so only the margin stands between it and an understated ε."""
    with localcontext() as context:
        context.prec = 60
        ratio = Fraction(Decimal("0.015").exp().next_plus())  # one unit above e^0.015
    coins = TwoCoinDesign(truth_probability=(ratio - 1) / (ratio + 1))  # f = 1/2
    assert coins.epsilon <= 0.015
    with app.test_request_context("/"):
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        legacy = dataclasses.replace(survey.questions[0], mechanism=coins)
        assert legacy.requested_epsilon is None and worst_ratio(legacy) == ratio
        shown = shown_epsilon(epsilon_bound(legacy))
    assert shown == Decimal("0.016")
    assert exp_below(Fraction(shown)) >= decimal_above(ratio)


# --- the pages ---------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_respondent_pages_show_epsilon_rounded_up(
    client: FlaskClient, edges: str, language: str
) -> None:
    page = client.get(f"/s/{edges}?lang={language}").get_data(as_text=True)
    assert page.count("ε = 0.015") == len(KINDS)
    assert page.count("ε = 0.125") == len(KINDS)
    assert "ε = 0.01." not in page and "ε = 0.12." not in page
    assert "ε = 1.099" in page  # yes/no on fair coins
    # The worked example, e^1.1 = 3.004; and the total, 5·(0.015 + 0.125) + 4 + ln 3 =
    # 5.79861…, e^5.79861… = 329.85…
    explained = page[page.index('<p class="epsilon">') :]
    explained = explained[: explained.index("</p>")]
    for figure in ("1.10", "3.01", "5.799", "330"):
        assert figure in explained, figure
    assert "ε = 5.799" in page


def test_the_thank_you_page_and_the_dashboard_round_up_too(
    client: FlaskClient, researcher: str, edges: str
) -> None:
    thanks = client.post(f"/s/{SLUG}", data={**fresh_form(client), **answers()})
    assert thanks.status_code == 200
    assert thanks.get_data(as_text=True).count("(ε = 1.099)") == 3  # was 1.10: 1.0986…
    assert log_in(client, researcher).status_code == 302
    page = client.get(f"/research/surveys/{edges}").get_data(as_text=True)
    assert "ε = 5.799 per respondent" in page
    assert page.count("0.015<") + page.count("ε = 0.015;") == 2 * len(KINDS)  # and planner
    assert "0.01<" not in page and "0.12<" not in page and "ε = 0.01;" not in page


def test_the_ledger_command_rounds_up(mixed_app: Flask, runner: FlaskCliRunner) -> None:
    """The mixed example: 0.5 + 2 + 1 + 1 + ln 3 = 5.59861… per respondent; e^5.59861 =
    270.05, which six decimals and a whole number rounded down to 5.598612 and 270."""
    out = runner.invoke(args=["ledger", "student-life"]).output
    assert "stress: two_coin_randomized_response, ε = 1.099" in out
    assert "substance: generalized_randomized_response, ε = 1.00" in out  # 0.99999…98
    assert "Total per respondent: ε = 5.599 (limit 6)" in out
    assert "any stored response is at most 271 times as likely" in out


def test_exports_show_epsilon_rounded_up_as_people_read_it(
    mixed_app: Flask, runner: FlaskCliRunner
) -> None:
    with mixed_app.test_request_context("/"):
        survey = get_survey(get_db(), "student-life")
        assert survey is not None
        book = codebook(survey, "aggregate", 0.95, "wilson", "test")
        rows = "".join(aggregate_csv(survey, survey_estimates(get_db(), survey)))
    by_key = {q["key"]: q for q in book["questions"]}
    assert by_key["substance"]["epsilon"] == 1.0  # not 0.9999999999999998
    assert by_key["stress"]["epsilon"] == 1.099  # ln 3 = 1.0986…, not 1.098612
    assert book["epsilon_per_respondent"] == 5.599
    assert ",two_coin_randomized_response,1.099," in rows
    assert ",generalized_randomized_response,1.0," in rows


def test_a_central_share_that_is_not_a_decimal_is_rounded_up(app: Flask) -> None:
    """A release's ε split three ways: 1/3 each, shown "≈ 0.334", never "≈ 0.333"."""
    for language in LANGUAGES:
        with app.test_request_context(f"/?lang={language}"):
            assert epsilon_shown("1/3") == "≈ 0.334"
            assert epsilon_shown(Fraction(2, 3)) == "≈ 0.667"
            assert epsilon_shown("0.25") == "0.25"  # an exact decimal stays as it is


# --- every survey the import accepts renders ---------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_hundred_yes_no_questions_at_the_default_render(
    client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path, language: str
) -> None:
    """100 · ln 3 = 109.86: e^109.86 ≈ 5·10^47 broke Babel's decimal formatting (a 500)."""
    slug = imported(runner, survey_file(tmp_path, "hundred", ["type: yes_no"] * 100))
    response = client.get(f"/s/{slug}?lang={language}")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "ε = 109.862" in page  # 109.8612…, rounded up
    if language == "en":
        assert "may be more than a billion times as likely" in page


@pytest.mark.slow
def test_the_largest_total_the_import_accepts_renders_everywhere(
    client: FlaskClient, runner: FlaskCliRunner, researcher: str, tmp_path: Path
) -> None:
    """100 questions (the most a file may have) at ε = 10 (the most a question may ask),
    under max_epsilon: 1000 (the most a file may allow): e^1000 overflows a float."""
    questions = [question(kind, "10") for kind in KINDS] * 20
    path = survey_file(tmp_path, "largest", questions, header="max_epsilon: 1000")
    slug = imported(runner, path, "--owner", researcher, "--draft")
    assert log_in(client, researcher).status_code == 302
    preview = client.get(f"/research/builder/drafts/{slug}/preview")
    assert preview.status_code == 200
    assert "reveals at most ε = 1,000.00 in total" in preview.get_data(as_text=True)
    assert runner.invoke(args=["open", slug]).exit_code == 0
    page = client.get(f"/s/{slug}").get_data(as_text=True)
    assert "ε = 1,000.00 in total" in page
    assert "may be more than a billion times as likely" in page
    assert "Randomized, ε = 10.00." in page
    ledger = runner.invoke(args=["ledger", slug])
    assert ledger.exit_code == 0, ledger.output
    assert "ε = 1,000.00 (limit 1000)" in ledger.output
    assert "may be more than a billion times as likely" in ledger.output


def test_the_builder_preview_rounds_up(
    client: FlaskClient, runner: FlaskCliRunner, researcher: str, tmp_path: Path
) -> None:
    """100 · ln 3 = 109.86122…: to nearest at three decimals the preview said 109.861."""
    path = survey_file(tmp_path, "hundred", ["type: yes_no"] * 100)
    slug = imported(runner, path, "--owner", researcher, "--draft")
    assert log_in(client, researcher).status_code == 302
    page = client.get(f"/research/builder/drafts/{slug}/preview").get_data(as_text=True)
    assert "reveals at most ε = 109.862 in total" in page
    assert page.count(">1.099<") == 100  # the ledger's row for each question: 1.0986…
