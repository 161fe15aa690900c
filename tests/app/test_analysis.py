"""Analyses across questions: estimates by group and the randomized-response regression,
through storage (``record_response``), the service (``survey_app.domain.analyses``) and the pages
and CSVs (``/research/surveys/<slug>/groups`` and ``/regression``)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from scipy.special import expit

from survey_app.domain import analyses as analysis
from survey_app.domain.definitions import load_definition
from survey_app.privacy import QuestionType, TwoCoinDesign, simulate
from survey_app.privacy.groups import (
    GroupSums,
    count_by_group,
    estimate_by_group,
    group_difference,
    mean_difference,
)
from survey_app.privacy.means import MeanEstimate, estimate_mean
from survey_app.privacy.regression import Covariate, design_from_responses, fit_randomized_logistic
from survey_app.storage.accounts import create_researcher
from survey_app.storage.backends import Database
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey, share_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.researchers import PASSWORD, log_in

pytestmark = pytest.mark.slow

SLUG = "analysis-test"
SURVEY = f"""\
slug: {SLUG}
title: {{en: "Analysis test", ko: "분석 시험"}}
languages: [en, ko]
questions:
  - key: year
    text: {{en: "Which year of study are you in?", ko: "몇 학년입니까?"}}
    type: choice
    options:
      - {{en: "First", ko: "1학년"}}
      - {{en: "Second", ko: "2학년"}}
      - {{en: "Third", ko: "3학년"}}
      - {{en: "Fourth or later", ko: "4학년 이상"}}
    sensitive: false
  - key: age
    text: {{en: "How old are you?", ko: "나이가 몇입니까?"}}
    type: number
    min: 17
    max: 40
    sensitive: false
    required: false
  - key: cheated
    text: {{en: "Have you cheated on an exam?", ko: "시험에서 부정행위를 한 적이 있습니까?"}}
    type: yes_no
    epsilon: 3
  - key: substance
    text: {{en: "Which have you used most?", ko: "무엇을 가장 많이 사용했습니까?"}}
    type: choice
    options:
      - {{en: "None", ko: "없음"}}
      - {{en: "Cannabis", ko: "대마"}}
      - {{en: "Stimulants", ko: "각성제"}}
    mechanism: grr
    epsilon: 3
  - key: device
    text: {{en: "Which device do you use most?", ko: "어떤 기기를 가장 많이 씁니까?"}}
    type: choice
    options:
      - {{en: "Phone", ko: "휴대폰"}}
      - {{en: "Laptop", ko: "노트북"}}
      - {{en: "Tablet", ko: "태블릿"}}
    mechanism: oue
    epsilon: 3
    required: false
  - key: tools
    text: {{en: "Which tool do you use most?", ko: "어떤 도구를 가장 많이 씁니까?"}}
    type: choice
    options:
      - {{en: "pen", ko: "펜"}}
      - {{en: "pencil", ko: "연필"}}
      - {{en: "laptop", ko: "노트북"}}
      - {{en: "tablet", ko: "태블릿"}}
      - {{en: "phone", ko: "휴대폰"}}
      - {{en: "chalk", ko: "분필"}}
      - {{en: "brush", ko: "붓"}}
      - {{en: "other", ko: "기타"}}
    epsilon: 1           # auto: subset selection, sets of 2
  - key: drinks
    text: {{en: "How many drinks last week?", ko: "지난주 몇 잔 마셨습니까?"}}
    type: number
    min: 0
    max: 20
    mechanism: laplace   # reports on the answer's scale: the sums of squares matter
    epsilon: 3
"""
# The truth the simulation draws from: log odds of a true "yes" to cheated.
INTERCEPT, AGE_SLOPE = -0.6, 0.12  # age enters centred: (age - 21)
YEAR_EFFECTS = (0.0, 0.9, -0.7, 0.4)  # First (the reference), Second, Third, Fourth or later
RESPONSES = 4_000
AGE_SKIPPED = 0.05
DEVICE_SKIPPED = 0.03


@pytest.fixture
def studied(app: Flask, researcher: str, tmp_path: Path) -> Flask:
    """The analysis survey, owned by ada and shared with bob; carol is a stranger."""
    path = tmp_path / "analysis.yaml"
    path.write_text(SURVEY, encoding="utf-8")
    with app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        store_survey(db, load_definition(path), ada[0], "open")
        bob = create_researcher(db, "bob", PASSWORD)
        create_researcher(db, "carol", PASSWORD)
        share_survey(db, stored_survey(db), bob.id)
    return app


def stored_survey(db: Database) -> Survey:
    survey = get_survey(db, SLUG)
    assert survey is not None
    return survey


def as_user(app: Flask, username: str) -> FlaskClient:
    client = app.test_client()
    assert log_in(client, username).status_code == 302
    return client


def true_log_odds(year: np.ndarray, age: np.ndarray) -> np.ndarray:
    return INTERCEPT + np.asarray(YEAR_EFFECTS)[year] + AGE_SLOPE * (age - 21)


def simulate_responses(app: Flask, n: int = RESPONSES, seed: int = 20261121) -> None:
    """``n`` respondents whose true "cheated" follows the logistic model in year and age,
    every sensitive answer randomized by its question's own mechanism with a seeded NumPy
    generator (never for real answers), each stored through ``record_response``."""
    rng = np.random.default_rng(seed)
    with app.app_context():
        db = get_db()
        survey = stored_survey(db)
        by_key = {q.key: q for q in survey.questions}
        year = rng.integers(0, 4, n)
        age = rng.integers(18, 30, n)
        cheated = rng.random(n) < expit(true_log_odds(year, age))
        substance = np.where(rng.random(n) < expit(-1.0 + 0.5 * year), 1, rng.integers(0, 3, n))
        device = rng.integers(0, 3, n)
        tools = np.where(rng.random(n) < expit(-1.0 + 0.5 * year), 2, rng.integers(0, 8, n))
        drinks = rng.integers(0, 21, n)
        reported = {
            "cheated": simulate(by_key["cheated"].mechanism, cheated, rng),
            "substance": simulate(by_key["substance"].mechanism, substance, rng),
            "device": simulate(by_key["device"].mechanism, device, rng),
            "tools": simulate(by_key["tools"].mechanism, tools, rng),
            "drinks": simulate(by_key["drinks"].mechanism, drinks, rng),
        }
        age_skipped = rng.random(n) < AGE_SKIPPED
        device_skipped = rng.random(n) < DEVICE_SKIPPED
        for i in range(n):
            record_response(
                db,
                survey,
                {
                    "year": int(year[i]),
                    "age": None if age_skipped[i] else int(age[i]),
                    "cheated": bool(reported["cheated"][i]),
                    "substance": int(reported["substance"][i]),
                    "device": None
                    if device_skipped[i]
                    else tuple(int(bit) for bit in reported["device"][i]),
                    "tools": tuple(int(index) for index in reported["tools"][i]),
                    "drinks": int(reported["drinks"][i]),
                },
                f"simulated-{seed}-{i}",
            )


@pytest.fixture
def simulated(studied: Flask, built_once: Callable[[Callable[[Flask], None]], Flask]) -> Flask:
    """The studied survey with RESPONSES simulated respondents, stored once per module and
    backend (4,000 ``record_response`` calls took 7-15 s): ``studied`` left the state it
    builds under them."""
    return built_once(simulate_responses)


def stored_rows(database: Database) -> list[dict[str, Any]]:
    """Every stored response's answers, read the slow way (tests only)."""
    return [json.loads(row[0]) for row in database.execute("SELECT answers FROM responses")]


# (a) The regression recovers a known model through storage.


def test_the_regression_recovers_the_true_model_through_storage(simulated: Flask) -> None:
    with simulated.app_context():
        db = get_db()
        result = analysis.fit_regression(db, stored_survey(db), "cheated", ["year", "age"])
    truth = {
        "intercept": INTERCEPT - 21 * AGE_SLOPE,
        "year=Second": YEAR_EFFECTS[1],
        "year=Third": YEAR_EFFECTS[2],
        "year=Fourth or later": YEAR_EFFECTS[3],
        "age": AGE_SLOPE,
    }
    assert [term.name for term in result.terms] == list(truth)
    assert not result.boundary
    for term in result.terms:
        c = term.coefficient
        assert c.estimate is not None and c.std_error is not None
        assert abs(c.estimate - truth[term.name]) < 5 * c.std_error, (term.name, c)
        # Informative, not a vacuous pass: each effect is measured well enough to matter.
        assert term.name == "intercept" or c.std_error < 0.25
    skipped = round(AGE_SKIPPED * RESPONSES)
    assert result.n + result.dropped == RESPONSES
    assert abs(result.dropped - skipped) < 5 * np.sqrt(skipped)
    assert result.terms[1].reference == "First"


def test_the_fit_from_counts_equals_the_fit_from_every_row(
    simulated: Flask, database: Database
) -> None:
    """The weighted distinct rows give exactly the per-response fit."""
    with simulated.app_context():
        db = get_db()
        survey = stored_survey(db)
        result = analysis.fit_regression(db, survey, "cheated", ["year", "age"])
    design = design_from_responses(
        stored_rows(database),
        "cheated",
        [
            Covariate("year", QuestionType.CHOICE, ("First", "Second", "Third", "Fourth or later")),
            Covariate("age", QuestionType.NUMBER),
        ],
    )
    mechanism = survey.questions[2].mechanism
    assert isinstance(mechanism, TwoCoinDesign)
    each = fit_randomized_logistic(
        design.matrix,
        np.asarray(design.outcome, dtype=float),
        mechanism.p_false,
        mechanism.p_true,
        design.names,
    )
    assert result.n == each.n and result.dropped == design.dropped
    for term, one in zip(result.terms, each.coefficients, strict=True):
        assert term.name == one.name
        assert term.coefficient.estimate == pytest.approx(one.estimate, abs=1e-7)
        assert term.coefficient.std_error == pytest.approx(one.std_error, rel=1e-6)


@pytest.mark.parametrize(
    ("outcome", "option", "label"),
    [("substance", 1, "Cannabis"), ("device", 1, "Laptop"), ("tools", 2, "laptop")],
)
def test_an_option_of_a_choice_is_fitted_against_the_rest(
    simulated: Flask, outcome: str, option: int, label: str
) -> None:
    """GRR, OUE and subset-selection outcomes: the option with P = logistic(-1 + 0.5·year)
    + the rest uniform, so its log odds are not exactly linear; only the signs and the n
    are checked (the device's answers are uniform: no sign)."""
    with simulated.app_context():
        db = get_db()
        result = analysis.fit_regression(db, stored_survey(db), outcome, ["year"], option=option)
    assert result.category == label
    assert result.n + result.dropped == RESPONSES
    assert (result.dropped > 0) == (outcome == "device")  # only the device may be skipped
    if outcome != "device":
        assert all((term.coefficient.estimate or 0) > 0 for term in result.terms[1:])


# (b) Estimates by group are estimate_by_group on counts made by hand.


def test_by_group_estimates_equal_the_library_on_hand_counts(
    simulated: Flask, database: Database
) -> None:
    rows = stored_rows(database)
    with simulated.app_context():
        db = get_db()
        survey = stored_survey(db)
        result = analysis.estimate_groups(
            db, survey, "cheated", "year", first="1", second="2", method="wilson"
        )
    mechanism = survey.questions[2].mechanism
    assert isinstance(mechanism, TwoCoinDesign)
    by_hand = count_by_group((str(row["year"]), row["cheated"] == 1) for row in rows)
    ordered = {key: by_hand[key] for key in sorted(by_hand)}
    expected = estimate_by_group(ordered, mechanism, 0.95, "wilson")
    (category,) = result.categories
    assert category.category == "yes"
    assert [(tuple(g.key for g in r.groups), r.n, r.estimate) for r in category.rows] == [
        (e.groups, e.n, e.estimate) for e in expected
    ]
    assert [g.label for r in category.rows for g in r.groups] == [
        "First",
        "Second",
        "Third",
        "Fourth or later",
    ]
    assert category.difference == group_difference(ordered, "1", "2", mechanism, 0.95, "wilson")
    assert result.answered == RESPONSES and result.skipped == 0


def test_a_number_s_mean_by_group_is_the_dashboard_s_estimator_on_each_group(
    simulated: Flask, database: Database
) -> None:
    """Drinks (uniform on 0..20, mean 10, in every year) by year: each group's mean is
    ``estimate_mean`` on that group's sums made by hand, within 5 standard errors of 10,
    and the difference is the MOVER of two such means."""
    rows = stored_rows(database)
    with simulated.app_context():
        db = get_db()
        survey = stored_survey(db)
        result = analysis.estimate_groups(db, survey, "drinks", "year", first="3", second="0")
    drinks = next(q for q in survey.questions if q.key == "drinks")
    mechanism = drinks.mechanism

    def mean(sums: GroupSums) -> MeanEstimate:
        estimate = estimate_mean(
            sums.n,
            sums.total,
            sums.total_squares,
            mechanism.value_offset,  # type: ignore[attr-defined]
            mechanism.value_scale,  # type: ignore[attr-defined]
            0,
            20,
        )
        assert estimate is not None
        return estimate

    by_hand = {
        str(year): GroupSums(len(reports), sum(reports), sum(report * report for report in reports))
        for year in range(4)
        for reports in [[row["drinks"] for row in rows if row["year"] == year]]
    }
    (category,) = result.categories
    assert category.category == "mean"
    assert [(r.n, r.estimate) for r in category.rows] == [
        (by_hand[g].n, mean(by_hand[g])) for g in "0123"
    ]
    for row in category.rows:
        assert row.estimate is not None
        assert abs(row.estimate.point - 10) < 5 * row.estimate.std_error
    expected = mean_difference(by_hand, "3", "0", mechanism)  # type: ignore[arg-type]
    assert category.difference == expected


def test_each_option_by_a_number_covariate_with_skips(simulated: Flask, database: Database) -> None:
    """Every option of an OUE question by age: a number's distinct values are the groups,
    responses without an age or a device belong to none, and each option reads its own
    bit."""
    rows = [row for row in stored_rows(database) if None not in (row["age"], row["device"])]
    with simulated.app_context():
        db = get_db()
        survey = stored_survey(db)
        result = analysis.estimate_groups(db, survey, "device", "age")
    mechanism = survey.questions[4].mechanism
    assert [c.category for c in result.categories] == ["Phone", "Laptop", "Tablet"]
    for option, category in enumerate(result.categories):
        by_hand = count_by_group((str(row["age"]), row["device"][option] == "1") for row in rows)
        ordered = {key: by_hand[key] for key in sorted(by_hand, key=int)}
        expected = estimate_by_group(ordered, mechanism)  # type: ignore[arg-type]
        assert [r.estimate for r in category.rows] == [e.estimate for e in expected]
    assert result.skipped == RESPONSES - len(rows)


def test_small_groups_are_pooled_or_withheld_and_cannot_be_compared(studied: Flask) -> None:
    """40 in the first year, 20 and 15 in the second and third (pooled: 35), 0 in the
    fourth; comparing the second year is refused in words."""
    store_fixed(studied, [(0, 40, 20), (1, 20, 10), (2, 15, 5)])
    with studied.app_context():
        db = get_db()
        result = analysis.estimate_groups(db, stored_survey(db), "cheated", "year")
        (category,) = result.categories
        assert [(r.status, [g.label for g in r.groups], r.n) for r in category.rows] == [
            ("shown", ["First"], 40),
            ("pooled", ["Second", "Third"], 35),
        ]
        assert [g.key for g in result.comparable] == ["0"]
        refused = analysis.estimate_groups(
            db, stored_survey(db), "cheated", "year", first="0", second="1"
        )
        assert refused.categories[0].difference is None
        assert "fewer than 30" in (refused.categories[0].difference_refused or "")


def store_fixed(app: Flask, groups: list[tuple[int, int, int]], tag: str = "fixed") -> None:
    """(year index, respondents, reported yes) per group; the rest answered alike."""
    with app.app_context():
        db = get_db()
        survey = stored_survey(db)
        i = 0
        for year, respondents, yes in groups:
            for j in range(respondents):
                record_response(
                    db,
                    survey,
                    {
                        "year": year,
                        "age": 20 + j % 3,
                        "cheated": j < yes,
                        "substance": j % 3,
                        "device": (0, 1, 0),
                        "tools": (0, 1),
                        "drinks": 2,
                    },
                    f"{tag}-{i}",
                )
                i += 1


# (c) The pages: who may see them, and plain refusals.


def pages(query: str = "") -> list[str]:
    return [
        f"/research/surveys/{SLUG}/groups?question=cheated&by=year{query}",
        f"/research/surveys/{SLUG}/groups.csv?question=cheated&by=year{query}",
        f"/research/surveys/{SLUG}/regression?outcome=cheated&covariates=year&covariates=age",
        f"/research/surveys/{SLUG}/regression.csv?outcome=cheated&covariates=year",
    ]


def test_owner_and_viewer_see_the_pages_strangers_and_anonymous_do_not(simulated: Flask) -> None:
    owner, viewer = as_user(simulated, "ada"), as_user(simulated, "bob")
    stranger, anonymous = as_user(simulated, "carol"), simulated.test_client()
    for path in pages("&first=0&second=1"):
        for client in (owner, viewer):
            response = client.get(path)
            assert response.status_code == 200, (path, response.get_data(as_text=True)[:2000])
        assert stranger.get(path).status_code == 404
        refused = anonymous.get(path)
        assert refused.status_code == 302 and "/login" in refused.headers["Location"]


def test_the_pages_show_labels_intervals_and_the_difference(simulated: Flask) -> None:
    owner = as_user(simulated, "ada")
    page = owner.get(pages("&first=0&second=1")[0]).get_data(as_text=True)
    for text in ("Have you cheated on an exam?", "Fourth or later", "<caption>", 'scope="row"'):
        assert text in page
    assert "Difference First − Second" in page and "MOVER" in page
    assert 'data-label="Interval"' in page
    fitted = owner.get(pages()[2]).get_data(as_text=True)
    for text in ("Intercept", "Which year of study are you in?: Second", "(against “First”)"):
        assert text in fitted
    assert "How old are you?" in fitted and "responses used" in fitted


def test_the_pages_speak_the_page_language(simulated: Flask) -> None:
    owner = as_user(simulated, "ada")
    page = owner.get(pages("&lang=ko")[0]).get_data(as_text=True)
    assert "4학년 이상" in page and "시험에서 부정행위를 한 적이 있습니까?" in page
    fitted = owner.get(pages()[2] + "&lang=ko").get_data(as_text=True)
    assert "몇 학년입니까?: 2학년" in fitted


def test_the_dashboard_links_to_both_analyses(simulated: Flask) -> None:
    page = as_user(simulated, "bob").get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert f"/research/surveys/{SLUG}/groups" in page
    assert f"/research/surveys/{SLUG}/regression" in page


def test_the_forms_alone_render_without_a_query(studied: Flask) -> None:
    owner = as_user(studied, "ada")
    for path in ("groups", "regression"):
        page = owner.get(f"/research/surveys/{SLUG}/{path}")
        assert page.status_code == 200
        text = page.get_data(as_text=True)
        assert '<label for="' in text and "errors" not in text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("regression?outcome=cheated&covariates=substance", "is a sensitive question"),
        ("regression?outcome=cheated&covariates=nosuch", "There is no question with the key"),
        ("regression?outcome=drinks&covariates=year", "is a number question"),
        ("regression?outcome=year&covariates=age", "is not randomized"),
        ("regression?outcome=substance&covariates=year", "Choose which option"),
        ("regression?outcome=substance.7&covariates=year", "has no option number 7"),
        ("regression?outcome=cheated", "Choose at least one covariate"),
        ("groups?question=cheated&by=substance", "is a sensitive question"),
        ("groups?question=nosuch&by=year", "There is no question with the key"),
        ("groups?question=cheated&by=year&first=0&second=9", "There is no group"),
    ],
)
def test_what_cannot_be_analysed_is_refused_in_words(
    simulated: Flask, path: str, message: str
) -> None:
    owner = as_user(simulated, "ada")
    response = owner.get(f"/research/surveys/{SLUG}/{path}")
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    page, _, query = path.partition("?")
    download = owner.get(f"/research/surveys/{SLUG}/{page}.csv?{query}")
    assert download.status_code == 400


def test_too_few_rows_are_refused_and_a_share_of_zero_is_shown_one_sided(studied: Flask) -> None:
    owner = as_user(studied, "ada")
    store_fixed(studied, [(0, 8, 4), (1, 8, 4)])
    few = owner.get(f"/research/surveys/{SLUG}/regression?outcome=cheated&covariates=year")
    assert few.status_code == 400 and "Too few responses" in few.get_data(as_text=True)
    # Every second-year reports yes, every first-year no: beyond what the coins produce for
    # shares of 100% and 0%. The likelihood is highest there (a boundary fit): shown, with
    # infinite estimates and one-sided intervals, and said in words; no longer refused.
    store_fixed(studied, [(0, 300, 0), (1, 300, 300)], tag="split")
    split = owner.get(f"/research/surveys/{SLUG}/regression?outcome=cheated&covariates=year")
    assert split.status_code == 200
    page = split.get_data(as_text=True)
    assert "The reports are best explained by a true share of 0% (or 100%)" in page
    assert "An interval that reaches −∞ or ∞ is open on that side" in page
    assert ">-∞<" in page and ">∞<" in page and ">—<" in page  # estimates; no standard errors
    assert "%%" not in page
    rows = list(
        csv.DictReader(
            io.StringIO(csv_text(owner, "regression.csv?outcome=cheated&covariates=year"))
        )
    )
    assert [(r["estimate"], r["std_error"], r["ci_low"], r["ci_high"][:1]) for r in rows] == [
        ("-inf", "", "-inf", "-"),
        ("inf", "", rows[1]["ci_low"], "i"),
    ]
    assert float(rows[1]["ci_low"]) > 0 and rows[1]["ci_high"] == "inf"


def test_a_rare_answer_s_open_interval_is_explained_on_the_page(studied: Flask) -> None:
    """First-years report yes at 5% (3 of 60), barely above the 4.7% the coins give a true
    share of 0 (ε = 3): the estimate is finite, but a share of 0 cannot be ruled out, so
    the intercept's interval is open below, and the page says why in words."""
    store_fixed(studied, [(0, 60, 3), (1, 60, 20)])
    owner = as_user(studied, "ada")
    page = owner.get(f"/research/surveys/{SLUG}/regression?outcome=cheated&covariates=year")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "An interval that reaches −∞ or ∞ is open on that side" in text
    assert "The reports are best explained" not in text  # not a boundary fit
    assert "profile-likelihood intervals" in text and ">-∞ – " in text


# (d) The CSVs, as literal text.


def csv_text(client: FlaskClient, path: str) -> str:
    response = client.get(f"/research/surveys/{SLUG}/{path}")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/csv"
    return response.get_data(as_text=True)


GROUPS_CSV = """\
survey,question,category,by,status,group,versus,n,estimate,std_error,ci_low,ci_high,confidence,interval_method\r
analysis-test,cheated,yes,year,shown,First,,40,0.555240,0.086904,0.387633,0.713166,0.95,wilson\r
analysis-test,cheated,yes,year,shown,Second,,30,0.315868,0.095085,0.160061,0.513478,0.95,wilson\r
analysis-test,cheated,yes,year,withheld,Third,,,,,,,,\r
analysis-test,cheated,yes,year,difference,First,Second,,0.239371,,-0.019746,0.461220,0.95,mover-wilson\r
"""


def test_the_groups_csv_columns_and_rows(studied: Flask) -> None:
    """ε = 3, f = ½: p_false = (1 - tanh 1.5)/2 = 0.047426, slope tanh 1.5 = 0.905148.
    First: 22/40 reported → (0.55 - 0.047426)/0.905148 = 0.555240, se √(0.55·0.45/40)/
    0.905148 = 0.086904. Third (5) is alone below 30, so withheld, not pooled."""
    store_fixed(studied, [(0, 40, 22), (1, 30, 10), (2, 5, 5)])
    owner = as_user(studied, "ada")
    text = csv_text(owner, "groups.csv?question=cheated&by=year&first=0&second=1&method=wilson")
    assert text == GROUPS_CSV


REGRESSION_CSV = """\
survey,outcome,category,term,covariate,level,reference,estimate,std_error,ci_low,ci_high,confidence,interval_method,n,dropped\r
analysis-test,cheated,yes,intercept,,,,0.147573,0.404711,-0.651249,0.968867,0.95,profile-likelihood,60,0\r
analysis-test,cheated,yes,year=Second,year,Second,First,-1.288145,0.632420,-2.641175,-0.097144,0.95,profile-likelihood,60,0\r
"""
# The columns after ``dropped``: e to the estimate and to the bounds above, and Wald's
# p-value 2·Φ(−|estimate ÷ std_error|), written to every digit.
ODDS_RATIO_COLUMNS = ["odds_ratio", "odds_ratio_low", "odds_ratio_high", "p_value"]
ODDS_RATIOS = [(1.15902, 0.521394, 2.63496, 0.715382), (0.275782, 0.0712775, 0.907425, 0.041665)]


def test_the_regression_csv_columns_and_rows(studied: Flask) -> None:
    """One two-level covariate: the model is saturated, so β̂ are the groups' logits.
    First: 16/30 → π̂ = 0.536800, logit 0.147573; Second: 8/30 → π̂ = 0.242224, logit
    -1.140572, so year=Second = -1.288145. The profile-likelihood intervals have closed
    forms too: the intercept's is First's binomial likelihood-ratio interval on the logit
    scale, 2·(ℓ(π̂) - ℓ(π)) = 1.959964², with ℓ(π) = 16·log μ + 14·log(1 - μ), μ = p0 +
    t·π; year=Second's deviance at b is the least over a of First's deviance at a plus
    Second's at a + b (computed apart with SciPy: -2.641175 and -0.097144)."""
    store_fixed(studied, [(0, 30, 16), (1, 30, 8)])
    owner = as_user(studied, "ada")
    header, *rows = csv.reader(
        io.StringIO(csv_text(owner, "regression.csv?outcome=cheated&covariates=year"))
    )
    kept = len(header) - len(ODDS_RATIO_COLUMNS)
    assert "".join(",".join(row[:kept]) + "\r\n" for row in [header, *rows]) == REGRESSION_CSV
    assert header[kept:] == ODDS_RATIO_COLUMNS
    assert [tuple(float(cell) for cell in row[kept:]) for row in rows] == [
        pytest.approx(expected, rel=1e-5) for expected in ODDS_RATIOS
    ]


# Issue item 5: the per-response CSV and its codebook, read as R's rr package reads them.


def read_as_r(client: FlaskClient) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The per-response CSV with R's column names (the codebook's ``r_columns``), as
    ``read.csv`` gives it, and the codebook by question key."""
    text = csv_text(client, "responses.csv")
    book = client.get(f"/research/surveys/{SLUG}/codebook.json?kind=responses").get_json()
    header, *lines = list(csv.reader(io.StringIO(text)))
    r_header = header[:3] + [name for q in book["questions"] for name in q["r_columns"]]
    assert len(r_header) == len(header)
    return [dict(zip(r_header, line, strict=True)) for line in lines], {
        q["key"]: q for q in book["questions"]
    }


def rrreg_like(
    rows: list[dict[str, str]], outcome: Any, levels: list[str], rr: dict[str, Any]
) -> list[float]:
    """What ``rrreg(y ~ factor(year, levels = LEVELS) + age, data = d, p = rr$p, p0 = rr$p0,
    p1 = rr$p1, design = "forced-known")`` maximizes: na.omit drops empty cells (read.csv's
    NA), the factor is treatment-coded against its first level, and P(y = 1 | x) =
    p1 + p·logistic(xᵀβ). Returns β̂ (rr's EM converges to the same maximum)."""
    kept = [row for row in rows if row["year"] and row["age"] and outcome(row) is not None]
    x = np.array(
        [
            [1.0] + [float(row["year"] == level) for level in levels[1:]] + [float(row["age"])]
            for row in kept
        ]
    )
    y = np.array([outcome(row) for row in kept], dtype=float)
    assert round(rr["p"] + rr["p0"] + rr["p1"], 10) == 1  # rr refuses anything else
    fit = fit_randomized_logistic(x, y, rr["p1"], rr["p1"] + rr["p"])
    return [c.estimate or math.nan for c in fit.coefficients]


@pytest.mark.parametrize("outcome", ["cheated", "substance", "device", "tools"])
def test_r_reads_the_export_and_fits_what_the_page_fits(simulated: Flask, outcome: str) -> None:
    owner = as_user(simulated, "ada")
    rows, book = read_as_r(owner)
    levels = book["year"]["options"]
    rr = book[outcome]["r_rr_package"]
    assert rr["design"] == "forced-known"
    reads: dict[str, Any] = {
        "cheated": lambda row: int(row["cheated"]) if row["cheated"] else None,
        "substance": lambda row: int(row["substance"] == "Cannabis") if row["substance"] else None,
        "device": lambda row: int(row["device.1"]) if row["device.1"] else None,
        "tools": lambda row: int(row["tools.1"]) if row["tools.1"] else None,
    }
    option = None if outcome == "cheated" else 1
    with simulated.app_context():
        db = get_db()
        page = analysis.fit_regression(db, stored_survey(db), outcome, ["year", "age"], option)
    assert rrreg_like(rows, reads[outcome], levels, rr) == pytest.approx(
        [term.coefficient.estimate for term in page.terms], abs=1e-6
    )
    assert book["device"]["r_columns"] == ["device.0", "device.1", "device.2"]


def test_r_names_follow_make_names() -> None:
    from survey_app.domain.exports import r_name

    assert [r_name(k) for k in ("year", "2fa", "_x", "if", "in_school")] == [
        "year",
        "X2fa",
        "X_x",
        "if.",
        "in_school",
    ]
