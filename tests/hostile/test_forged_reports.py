"""Forged reports (data poisoning): the server takes only what an honest device sends.

A browser-randomized POST once carried any number within ±3·10^9, so one made-up
discrete-Laplace report moved a 0-10 mean to 96,774,201. Now each mechanism's
``report_range`` bounds what is accepted: checked here exactly (B against a brute-force
sum of the noise's probabilities in exact rationals), through the real app on a real
SQLite file, and against the influence table in DESIGN.md and SECURITY.md.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import cast

import pytest
from flask import Flask

from survey_app.domain.answers import NUMBER_WIDTH, padded_number
from survey_app.domain.definitions import parse_definition
from survey_app.domain.designs import question_mechanism
from survey_app.domain.survey_limits import (
    EPSILON_MIN,
    LARGEST_REPORT,
    MAX_NUMBER_MAGNITUDE,
    MAX_NUMBER_RANGE,
)
from survey_app.domain.survey_model import SurveyDefinitionError
from survey_app.privacy import (
    AnswerSpace,
    DiscreteLaplace,
    DiscretePiecewise,
    DuchiBinary,
    Estimate,
    MeanEstimate,
    QuestionType,
    choice_mechanism,
    estimate_mean,
    estimate_proportion,
    mechanism_for,
    number_mechanism,
    yes_no_mechanism,
)
from survey_app.privacy.mechanisms import ProportionMechanism, noise_reach
from survey_app.storage import backends
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.paths import ROOT
from tests.support.respondents import hidden_fields
from tests.support.stored import opened
from tests.support.stored import rows as stored_rows

HONEST_TAIL = Fraction(1, 2**60)

# --- exact rational bounds on e^-x, independent of the Decimal code under test ----------

_BITS = 256  # dyadic rounding before powers keeps the rationals small


def _exp_bounds(x: Fraction) -> tuple[Fraction, Fraction]:
    """Rationals lo ≤ e^x ≤ hi for 0 ≤ x: Taylor's series for e^(x/m) (x/m ≤ 1), whose
    remainder after the x^40 term is at most e·(x/m)^41/41! < 3/41!, raised to the m-th."""
    m = max(1, math.ceil(x))
    y = x / m
    series, term = Fraction(0), Fraction(1)
    for k in range(1, 42):
        series += term
        term = term * y / k
    scale = 2**_BITS
    low = Fraction(math.floor(series * scale), scale)
    high = Fraction(math.ceil((series + 3 * term) * scale), scale)
    return low**m, high**m


def _exp_minus_bounds(x: Fraction) -> tuple[Fraction, Fraction]:
    """Rationals lo ≤ e^-x ≤ hi."""
    low, high = _exp_bounds(x)
    return 1 / high, 1 / low


def _brute_tail(alpha: Fraction, beyond: int) -> Fraction:
    """P(|Z| > beyond) at a rational α, as 1 minus the pmf summed over |z| ≤ beyond,
    exactly: (1 - α)/(1 + α)·(1 + 2 Σ_{z=1..beyond} α^z), in integers over b^beyond."""
    a, b = alpha.numerator, alpha.denominator
    powers_of_b = [1]
    for _ in range(beyond):
        powers_of_b.append(powers_of_b[-1] * b)
    total, power_of_a = powers_of_b[beyond], 1
    for z in range(1, beyond + 1):
        power_of_a *= a
        total += 2 * power_of_a * powers_of_b[beyond - z]
    inside = Fraction(b - a, b + a) * Fraction(total, powers_of_b[beyond])
    return 1 - inside


# (γ, Δ) as the import makes them: γ = ε/Δ.
SMALL_REACHES = [
    (Fraction(10), 1),  # ε = 10 on a yes-or-no-sized range: B = 4
    (Fraction(1), 1),
    (Fraction(2, 5), 5),
    (Fraction(1, 3), 3),
    (Fraction(1, 10), 10),  # the worked example: 0-10 at ε = 1
]


@pytest.mark.parametrize("gamma, span", SMALL_REACHES)
def test_the_noise_reach_is_exact_against_a_brute_force_sum(gamma: Fraction, span: int) -> None:
    """The tail grows with α (a larger α spreads the noise), so the tail at rational
    bounds on α brackets the true one: B's tail is below 2^-60, B - 1's is not."""
    laplace = DiscreteLaplace.from_epsilon(0, span, gamma * span)
    assert laplace.gamma == gamma
    reach = noise_reach(gamma)
    assert laplace.report_range() == (-reach, span + reach)
    alpha_low, alpha_high = _exp_minus_bounds(gamma)
    assert _brute_tail(alpha_high, reach) < HONEST_TAIL
    assert _brute_tail(alpha_low, reach - 1) >= HONEST_TAIL


def _closed_tail_bounds(gamma: Fraction, beyond: int) -> tuple[Fraction, Fraction]:
    """Bounds on P(|Z| > beyond) = 2e^(-γ(beyond + 1))/(1 + e^-γ), for reaches too long to
    sum term by term."""
    power_low, power_high = _exp_minus_bounds(gamma * (beyond + 1))
    alpha_low, alpha_high = _exp_minus_bounds(gamma)
    return 2 * power_low / (1 + alpha_high), 2 * power_high / (1 + alpha_low)


@pytest.mark.parametrize(
    "gamma",
    [
        *(gamma for gamma, _ in SMALL_REACHES),
        EPSILON_MIN / MAX_NUMBER_RANGE,  # the smallest γ a survey file allows: 10^-8
        Fraction("0.01") / 1000,
        Fraction("3.333") / 77,
        Fraction(7, 1000),
    ],
)
def test_the_noise_reach_is_exact_by_the_closed_tail(gamma: Fraction) -> None:
    reach = noise_reach(gamma)
    assert _closed_tail_bounds(gamma, reach)[1] < HONEST_TAIL
    assert _closed_tail_bounds(gamma, reach - 1)[0] >= HONEST_TAIL


def test_laplace_too_wide_to_store_is_refused_at_import_and_the_rest_fits() -> None:
    """Bounds at ±10^9, the widest range at the smallest ε, Laplace forced: its honest
    reports would reach ±4.2·10^9, past what a tally cell can square, so the import refuses
    it and names the field. Every report the import lets through fits ±LARGEST_REPORT,
    which fits the 17-character wire format."""
    for low, high in [
        (-MAX_NUMBER_MAGNITUDE, -MAX_NUMBER_MAGNITUDE + MAX_NUMBER_RANGE),
        (MAX_NUMBER_MAGNITUDE - MAX_NUMBER_RANGE, MAX_NUMBER_MAGNITUDE),
    ]:
        with pytest.raises(SurveyDefinitionError, match="more than can be stored") as refused:
            parse_definition(
                "slug: wide\ntitle: Wide\nquestions:\n  - {key: x, text: X, type: number, "
                f"min: {low}, max: {high}, mechanism: laplace, epsilon: 0.01}}\n"
            )
        assert "questions[0].mechanism" in str(refused.value)
    accepted = parse_definition(
        "slug: wide\ntitle: Wide\nquestions:\n  - {key: x, text: X, type: number, "
        f"min: 0, max: {MAX_NUMBER_RANGE}, mechanism: laplace, epsilon: 0.05}}\n"
    )
    low, high = question_mechanism(accepted.questions[0]).report_range()
    assert -LARGEST_REPORT <= low and high <= LARGEST_REPORT
    for report in (-LARGEST_REPORT, LARGEST_REPORT):
        assert len(padded_number(report)) == NUMBER_WIDTH


# --- the real app: refused with 400 and nothing stored, or stored ------------------------

POLL = """\
slug: poll
title: Poll
questions:
  - {key: rating, text: Rating, type: number, min: 0, max: 10, mechanism: laplace, epsilon: 1,
     required: false}
  - {key: score, text: Score, type: number, min: 0, max: 10, mechanism: duchi, epsilon: 1,
     required: false}
  - {key: smoked, text: Smoked, type: yes_no, epsilon: 1, required: false}
  - {key: pick, text: Pick, type: choice, options: [a, b, c, d, e], mechanism: grr, epsilon: 1,
     required: false}
  - {key: bits, text: Bits, type: choice, options: [a, b, c, d, e], mechanism: oue, epsilon: 1,
     required: false}
  - {key: sets, text: Sets, type: choice, options: [a, b, c, d, e, f, g, h], mechanism: subset,
     epsilon: 1, required: false}
  - {key: ticks, text: Ticks, type: multiple, options: [a, b, c, d, e], epsilon: 1,
     required: false}
  - {key: age, text: Age, type: number, min: 18, max: 99, sensitive: false, required: false}
"""


@pytest.fixture
def poll(app: Flask) -> Survey:
    with app.app_context():
        return store_survey(get_db(), parse_definition(POLL))


def _post_report(app: Flask, key: str, report: str) -> tuple[int, str]:
    """One browser-randomized POST (``design`` from the page) carrying one report."""
    client = app.test_client()
    fields = hidden_fields(client.get("/s/poll").get_data(as_text=True))
    assert fields["design"]
    response = client.post("/s/poll", data={**fields, key: report, "randomized": "client"})
    return response.status_code, response.get_data(as_text=True)


def _stored(app: Flask) -> tuple[list[str], list[tuple[str, str, int]]]:
    """Every stored response's answers and every tally cell, read from the database."""
    with opened(app.config["DATABASE"]) as database:
        answers = [row["answers"] for row in stored_rows(database, "responses")]
        cells = database.execute(
            "SELECT q.key, t.cell, t.value FROM tallies t JOIN questions q ON q.id = t.question_id"
            " ORDER BY q.key, t.cell"
        ).fetchall()
    return answers, [tuple(cell) for cell in cells]


OUTSIDE = {
    "rating": "randomization produces (a whole number from -416 to 426)",
    "score": "randomization produces (a whole number from 0 to 1)",
    "age": "Please give a whole number from 18 to 99.",
}

# (question key, wire value, accepted?) at each edge of what an honest device sends.
EDGES = [
    ("rating", padded_number(-416), True),  # 0-10 at ε = 1: B = 416
    ("rating", padded_number(426), True),
    ("rating", padded_number(-417), False),
    ("rating", padded_number(427), False),
    ("rating", "00000002999999999", False),  # the attack that moved the mean to 96,774,201
    ("rating", "-0000002999999999", False),
    ("score", "0", True),
    ("score", "1", True),
    ("score", "2", False),
    ("score", "-1", False),
    ("age", padded_number(99), True),  # plain: the answer itself
    ("age", padded_number(100), False),
]


@pytest.mark.slow
@pytest.mark.parametrize("key, report, accepted", EDGES)
def test_a_number_report_is_stored_only_within_its_honest_range(
    app: Flask, poll: Survey, key: str, report: str, accepted: bool
) -> None:
    before = _stored(app)
    status, page = _post_report(app, key, report)
    rows, cells = _stored(app)
    if accepted:
        assert status == 200
        assert len(rows) == 1 and f'"{key}": {int(report)}' in rows[0]
    else:
        assert status == 400
        assert (rows, cells) == before == ([], [])
        assert len(report) < NUMBER_WIDTH or report not in page  # never echoed
        assert OUTSIDE[key] in page


@pytest.mark.slow
@pytest.mark.parametrize(
    "key, report, accepted",
    [
        ("smoked", "y", True),
        ("smoked", "n", True),
        ("smoked", "1", False),
        ("smoked", "yes", False),
        ("pick", "0", True),
        ("pick", "4", True),  # k = 5: indexes 0-4
        ("pick", "5", False),
        ("pick", "-1", False),
        ("pick", "04", False),
        ("bits", "00000", True),
        ("bits", "11111", True),  # an honest device can set every bit, though rarely
        ("bits", "1111", False),
        ("bits", "111111", False),
        ("bits", "11211", False),
        ("sets", "0,7", True),  # sets of 2 of 8 options, in order
        ("sets", "0,1", True),
        ("sets", "7,0", False),
        ("sets", "3,3", False),
        ("sets", "3", False),
        ("sets", "1,2,3", False),
        ("sets", "1,8", False),
        ("ticks", "0:0", True),  # one of 5 options and its bit
        ("ticks", "4:1", True),
        ("ticks", "5:1", False),
        ("ticks", "4:2", False),
        ("ticks", "04:1", False),
        ("ticks", "4", False),
        ("ticks", "01001", False),  # the answer's bits: never sent by the browser
    ],
)
def test_yes_no_and_choice_reports_are_only_what_a_device_can_produce(
    app: Flask, poll: Survey, key: str, report: str, accepted: bool
) -> None:
    status, _page = _post_report(app, key, report)
    rows, cells = _stored(app)
    assert status == (200 if accepted else 400)
    assert len(rows) == int(accepted)


def test_every_report_range_is_what_the_mechanism_can_produce(poll: Survey) -> None:
    """Yes/no, GRR, OUE and Duchi: the range is exactly the support of ``probability``."""
    ranges = {q.key: q.mechanism.report_range() for q in poll.questions}
    assert ranges == {
        "rating": (-416, 426),
        "score": (0, 1),
        "smoked": (0, 1),
        "pick": (0, 4),
        "bits": (0, 1),
        "sets": (0, 7),
        "ticks": (0, 4),  # the option; its bit is 0 or 1 (check_report)
        "age": (18, 99),
    }
    smoked, pick = poll.questions[2].mechanism, poll.questions[3].mechanism
    assert {smoked.probability(bool(r), True) > 0 for r in (0, 1)} == {True}
    assert all(pick.probability(r, 0) > 0 for r in range(5))
    with pytest.raises(ValueError):
        pick.probability(5, 0)


def test_rows_stored_before_the_check_are_kept_and_the_documented_query_finds_them(
    app: Flask, poll: Survey
) -> None:
    """An old database may hold a forged report: it stays (nothing is dropped silently)
    and DESIGN.md's query finds it."""
    forged = dict.fromkeys((q.key for q in poll.questions), None)
    with app.app_context():
        record_response(get_db(), poll, {**forged, "rating": 2_999_999_999}, "old-forgery")
        record_response(get_db(), poll, {**forged, "rating": 426}, "honest-edge")
    status, _page = _post_report(app, "rating", padded_number(7))
    assert status == 200
    query = _documented_query(app.config["DATABASE"])
    with opened(app.config["DATABASE"]) as database:
        assert [tuple(row) for row in database.execute(query).fetchall()] == [(1, 2_999_999_999)]
    rows, cells = _stored(app)
    assert len(rows) == 3 and ("rating", "sum", 2_999_999_999 + 426 + 7) in cells


# --- the influence of one report: the function, the estimators and the docs -------------

N = 1000
WORKED = {
    "two_coin_randomized_response": yes_no_mechanism(Fraction(1)),
    "generalized_randomized_response": choice_mechanism(5, Fraction(1), "grr"),
    "optimized_unary_encoding": choice_mechanism(5, Fraction(1), "oue"),
    "subset_selection": choice_mechanism(8, Fraction(1), "subset"),
    "sampled_option": mechanism_for(AnswerSpace(QuestionType.MULTIPLE, 5), Fraction(1)),
    "discrete_laplace": number_mechanism(0, 10, Fraction(1), "laplace"),
    "duchi_binary": number_mechanism(0, 10, Fraction(1), "duchi"),
    "piecewise": number_mechanism(0, 10, Fraction(1), "piecewise"),
}


def _documented_query(setting: str) -> str:
    """DESIGN.md's query for the backend: the first ``sql`` block, or on PostgreSQL the
    first one after a line naming PostgreSQL."""
    design = _design()
    if backends.is_postgresql(setting):
        marker = re.search(r"^.*PostgreSQL.*$\n+```sql", design, flags=re.M)
        assert marker is not None, "DESIGN.md gives no PostgreSQL query for forged reports"
        design = design[marker.start() :]
    query = re.search(r"```sql\n(.*?)```", design, flags=re.S)
    assert query is not None
    return query[1]


def _design() -> str:
    return (ROOT / "DESIGN.md").read_text(encoding="utf-8")


def _rounded_up(value: Fraction, digits: int = 3) -> str:
    """A figure as the docs show it: up to ``digits`` significant digits, rounded up."""
    exponent = math.floor(math.log10(value))
    scale = Fraction(10) ** (digits - 1 - exponent)
    shown = Fraction(math.ceil(value * scale)) / scale
    places = max(0, digits - 1 - exponent)
    return f"{float(shown):.{places}f}".rstrip("0").rstrip(".")


@pytest.mark.parametrize("name", WORKED)
def test_the_influence_is_what_the_estimator_moves(name: str) -> None:
    """One report from one end of its range to the other, the other n - 1 fixed, moves the
    unbiased estimate by ``report_influence(n)``."""
    mechanism = WORKED[name]
    low, high = mechanism.report_range()
    moved: list[MeanEstimate | Estimate | None]
    if isinstance(mechanism, DiscreteLaplace | DuchiBinary | DiscretePiecewise):
        others = 7 * (N - 1)  # any sum of the other reports
        offset, scale = mechanism.value_offset, mechanism.value_scale
        moved = [
            estimate_mean(N, others + r, others**2 + r * r, offset, scale, 0, 10)
            for r in (low, high)
        ]
    else:
        shares = cast(ProportionMechanism, mechanism)
        p_true, p_false = shares.p_true, shares.p_false
        moved = [estimate_proportion(300 + c, N, p_true, p_false) for c in (0, 1)]
    assert moved[0] is not None and moved[1] is not None
    change = moved[1].unclipped - moved[0].unclipped
    assert change == pytest.approx(float(mechanism.report_influence(N)), rel=1e-12)


def test_the_design_tables_figures_are_the_functions_rounded_up() -> None:
    rows = {
        name: line
        for line in _design().splitlines()
        for name in WORKED
        if line.startswith("|") and f"`{name}`" in line
    }
    assert set(rows) == set(WORKED)
    for name, line in rows.items():
        shown = re.findall(r"[0-9.]+", line.rstrip(" |").rsplit("|", 1)[1])[-1]
        assert shown == _rounded_up(WORKED[name].report_influence(N)), name
    low, high = WORKED["discrete_laplace"].report_range()
    assert f"B = {high - 10}, reports in [−{-low}, {high}]" in rows["discrete_laplace"]


def test_securitys_figures_are_the_functions_rounded_up() -> None:
    security = " ".join((ROOT / "SECURITY.md").read_text(encoding="utf-8").split())
    share = _rounded_up(WORKED["two_coin_randomized_response"].report_influence(N))
    mean = _rounded_up(WORKED["discrete_laplace"].report_influence(N))
    assert f"a yes/no share by at most {share}" in security
    assert f"a 0–10 discrete-Laplace mean by at most {mean}" in security
