"""Public releases under central DP: noisy figures as accurate as they say, a mode figure
that is Report Noisy Max's winner only (its win rate: tests/privacy/test_central.py), a ledger that
refuses overspending and charges every release, the owner-only publish page, the command
line, and a public page that needs no login and sets no cookie. (tests/app/test_public_dp.py:
what the public page guarantees.)

Statistical checks use a seeded source and bounds of 5 standard errors.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlite_utils
from flask import Flask
from flask.testing import FlaskClient

from survey_app.domain import release_snapshots
from survey_app.domain.definitions import load_definition
from survey_app.domain.releases import publish, quote_release, set_budget
from survey_app.privacy import SECURE, RandomSource
from survey_app.privacy.central import BudgetExceededError, decimal_text
from survey_app.storage.accounts import create_researcher
from survey_app.storage.backends import Database
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey, share_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.examples import MIXED, MIXED_SLUG
from tests.support.researchers import PASSWORD, log_in
from tests.support.statistics import Seeded, five_se

OWNED = "ada-life"  # the mixed survey (plain `year` covariate), owned by ada
CONFIDENCE = 0.95

# A plain two-option question that may be skipped: a response skipping it is new data (a
# new fingerprint, so a new release with fresh noise) that leaves its counts unchanged.
TWO_CAMPUSES = """\
slug: campus-mode
title: Two campuses
questions:
  - key: campus
    text: Which campus do you study at?
    type: choice
    options: [north, south]
    sensitive: false
    required: false
  - key: smoked
    text: Have you smoked this month?
    type: yes_no
"""


@pytest.fixture
def owned(mixed_app: Flask, researcher: str, tmp_path: Path) -> Flask:
    """ada owns a copy of the mixed survey; bob can view it."""
    path = tmp_path / "owned.yaml"
    path.write_text(MIXED.read_text().replace(f"slug: {MIXED_SLUG}\n", f"slug: {OWNED}\n"))
    with mixed_app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        survey = store_survey(db, load_definition(path), ada[0])
        bob = create_researcher(db, "bob", PASSWORD)
        share_survey(db, survey, bob.id)
    return mixed_app


def survey_named(slug: str) -> Survey:
    survey = get_survey(get_db(), slug)
    assert survey is not None
    return survey


def store(app: Flask, slug: str, how_many: int, start: int = 0, **fixed: Any) -> None:
    """Responses cycling through the covariate's years; ``fixed`` values override."""
    with app.app_context():
        db = get_db()
        survey = survey_named(slug)
        for i in range(start, start + how_many):
            reported: dict[str, Any] = {q.key: None for q in survey.questions}
            if "year" in reported:
                reported |= {"year": i % 4, "cheated": i % 3 == 0, "skipped_meals": i % 2 == 0}
                reported |= {"substance": i % 5, "drinks": i % 2}  # Duchi: one bit
            reported |= fixed
            record_response(db, survey, reported, f"{slug}-{i}")


def csrf(page: str) -> str:
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert token, "the page has a CSRF token"
    return token.group(1)


def release_rows(database: Database) -> list[tuple[Any, ...]]:
    return database.execute("SELECT id, epsilon, cost, snapshot FROM releases").fetchall()


def quote_and_publish(
    db: Database,
    survey: Survey,
    figures: list[str],
    epsilon: Fraction | None,
    source: RandomSource = SECURE,
) -> dict[str, Any]:
    """Quote, then publish the quote, as the page and the command do; the snapshot stored."""
    typed = None if epsilon is None else decimal_text(epsilon)
    return publish(db, quote_release(db, survey, figures, typed), source).snapshot


# --- exact distributions -------------------------------------------------------------------


def discrete_laplace_pmf(gamma: float, support: np.ndarray) -> np.ndarray:
    alpha = math.exp(-gamma)
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(support)


def stated_accuracy(gamma: float, k: int) -> int:
    """The smallest m with k·P(|Z| > m) ≤ 5%, from the pmf summed (not the library's formula)."""
    support = np.arange(-5000, 5001)
    pmf = discrete_laplace_pmf(gamma, support)
    m = 0
    while k * pmf[np.abs(support) > m].sum() > 1 - CONFIDENCE:
        m += 1
    return m


def within_probability(gamma: float, m: int) -> float:
    support = np.arange(-m, m + 1)
    return float(discrete_laplace_pmf(gamma, support).sum())


# --- (a) noisy figures are as accurate as they say -------------------------------------------


@pytest.mark.slow
def test_noisy_counts_lie_within_their_stated_accuracy(owned: Flask) -> None:
    # One release per replicate: one new response each time makes it new data, so fresh
    # noise (re-publishing unchanged data would show the stored figures again).
    replicates, epsilon = 200, Fraction(1, 2)
    figures = ["histogram:year", "groups:cheated:year"]
    store(owned, OWNED, 240)
    source = Seeded(2026)
    hits = {"histogram": [0, 0], "groups": [0, 0]}  # [counts within ±accuracy, joint holds]
    checks = {"histogram": 0, "groups": 0}
    with owned.app_context():
        db = get_db()
        survey = survey_named(OWNED)
        set_budget(db, survey, Fraction(100))
        for i in range(replicates):
            store(owned, OWNED, 1, start=240 + i)
            year = [0] * 4
            groups = [[0, 0] for _ in range(4)]
            for (stored,) in db.execute(
                "SELECT answers FROM responses WHERE survey_id = ?", [survey.id]
            ):
                answers = json.loads(stored)
                year[answers["year"]] += 1
                groups[answers["year"]][0] += 1
                groups[answers["year"]][1] += answers["cheated"]
            snapshot = quote_and_publish(db, survey, figures, epsilon, source)
            histogram, by_year = snapshot["figures"]
            assert histogram["epsilon"] == by_year["epsilon"] == "0.25"  # ε split in two
            truth = {
                "histogram": (year, [c["noisy_count"] for c in histogram["cells"]], histogram),
                "groups": (
                    [v for n, yes in groups for v in (n, yes)],
                    [v for g in by_year["groups"] for v in (g["noisy_n"], g["noisy_reported"])],
                    by_year,
                ),
            }
            for kind, (true, noisy, figure) in truth.items():
                errors = [abs(a - b) for a, b in zip(true, noisy, strict=True)]
                hits[kind][0] += sum(e <= figure["accuracy"] for e in errors)
                hits[kind][1] += all(e <= figure["joint_accuracy"] for e in errors)
                checks[kind] += len(errors)
    for kind, sensitivity, k in (("histogram", 1, 4), ("groups", 2, 8)):
        gamma = 0.25 / sensitivity  # γ = (ε/2)/Δ
        assert figure_accuracies(owned, kind) == (
            stated_accuracy(gamma, 1),
            stated_accuracy(gamma, k),
        )
        each, joint = figure_accuracies(owned, kind)
        # Each count: at least 95%, and exactly the rate the noise predicts (two-sided:
        # too little noise would pass "at least 95%" and still break the privacy claim).
        rate, expected = hits[kind][0] / checks[kind], within_probability(gamma, each)
        assert expected >= CONFIDENCE
        assert rate >= CONFIDENCE - five_se(CONFIDENCE, checks[kind]), (kind, rate)
        assert abs(rate - expected) <= five_se(expected, checks[kind]), (kind, rate, expected)
        joint_rate = hits[kind][1] / replicates
        assert joint_rate >= CONFIDENCE - five_se(CONFIDENCE, replicates), (kind, joint_rate)
        assert joint >= each


def figure_accuracies(app: Flask, kind: str) -> tuple[int, int]:
    """(accuracy, joint accuracy) of the latest release's figure of this kind."""
    with app.app_context():
        from survey_app.storage.releases import latest_snapshot

        snapshot = latest_snapshot(get_db(), OWNED)
        assert snapshot is not None
        figure = next(f for f in snapshot["figures"] if f["kind"] == kind)
        return figure["accuracy"], figure["joint_accuracy"]


# --- (b) a mode figure is Report Noisy Max's winner, and only that --------------------------


def test_a_mode_figure_releases_report_noisy_max_s_winner_only(
    app: Flask, researcher: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wiring, in one publish: the mechanism gets the question's counts (a skip is no
    option's count) and the whole ε of a one-figure release, and the figure shows the
    option it picked and nothing of the counts. Its win rate is checked where it is made,
    at the pure layer (tests/privacy/test_central.py)."""
    path = tmp_path / "campus.yaml"
    path.write_text(TWO_CAMPUSES)
    with app.app_context():
        db = get_db()
        set_budget(db, store_survey(db, load_definition(path)), Fraction(100))
    for option, how_many in enumerate((10, 20)):
        store(app, "campus-mode", how_many, start=100 * option, campus=option, smoked=False)
    store(app, "campus-mode", 3, start=500, campus=None, smoked=True)
    asked: list[tuple[list[int], Fraction]] = []

    def noisy_max(counts: list[int], epsilon: Fraction, source: Any) -> int:
        asked.append((list(counts), epsilon))
        return 0  # the smaller count: a winner the true counts alone would not give

    monkeypatch.setattr(release_snapshots, "report_noisy_max", noisy_max)
    with app.app_context():
        snapshot = quote_and_publish(
            get_db(), survey_named("campus-mode"), ["mode:campus"], Fraction(1, 10)
        )
    assert asked == [([10, 20], Fraction(1, 10))]
    (figure,) = snapshot["figures"]
    assert figure["winner"] == "north" and figure["options"] == ["north", "south"]
    assert figure["epsilon"] == "0.1" and figure["sensitivity"] == 1 and "gap" in figure
    assert not {"cells", "counts", "noisy_count"} & set(figure)  # the winner only


# --- (c) the ledger: refuses overspending, forgives re-publishing, charges new data -----------


def publish_in_browser(
    client: FlaskClient, figures: list[str], epsilon: str, slug: str = OWNED
) -> tuple[int, str]:
    """Ask (GET: the confirmation page), then confirm (POST with its CSRF token)."""
    query = {"figure": figures, "epsilon": epsilon}
    asked = client.get(f"/research/surveys/{slug}/publish/release", query_string=query)
    if asked.status_code != 200:
        return asked.status_code, asked.get_data(as_text=True)
    data = {"csrf_token": csrf(asked.get_data(as_text=True)), **query}
    answer = client.post(
        f"/research/surveys/{slug}/publish/release", data=data, follow_redirects=True
    )
    return answer.status_code, answer.get_data(as_text=True)


def set_budget_in_browser(client: FlaskClient, budget: str, slug: str = OWNED) -> tuple[int, str]:
    asked = client.get(f"/research/surveys/{slug}/publish/budget", query_string={"budget": budget})
    if asked.status_code != 200:
        return asked.status_code, asked.get_data(as_text=True)
    data = {"csrf_token": csrf(asked.get_data(as_text=True)), "budget": budget}
    answer = client.post(
        f"/research/surveys/{slug}/publish/budget", data=data, follow_redirects=True
    )
    return answer.status_code, answer.get_data(as_text=True)


def public_page(app: Flask, slug: str = OWNED) -> str:
    response = app.test_client().get(f"/results/{slug}")
    assert response.status_code == 200
    return response.get_data(as_text=True)


@pytest.fixture
def ada(owned: Flask) -> Iterator[FlaskClient]:
    client = owned.test_client()
    assert log_in(client, "ada").status_code == 302
    store(owned, OWNED, 120)
    yield client


HISTOGRAM = ["estimates", "histogram:year"]


def test_the_ledger_refuses_overspending_and_charges_every_release(
    owned: Flask, ada: FlaskClient, database: sqlite_utils.Database
) -> None:
    # No budget: noisy figures are refused, the estimates from noisy counts too; the
    # estimates from exact counts are not.
    for figures in (HISTOGRAM, ["estimates"]):
        status, page = publish_in_browser(ada, figures, "0.5")
        assert status == 400 and "has no central budget yet" in page
    assert release_rows(database) == []
    status, page = publish_in_browser(ada, ["exact-estimates"], "")
    assert status == 200 and "Published. This release cost ε = 0." in page
    assert set_budget_in_browser(ada, "1")[0] == 200
    status, page = publish_in_browser(ada, HISTOGRAM, "0.75")
    assert status == 200 and "Published. This release cost ε = 0.75." in page
    first = public_page(owned)
    assert "Noisy count" in first

    # Over the budget: refused with the numbers, nothing stored, the public page unchanged.
    rows = release_rows(database)
    status, page = publish_in_browser(ada, ["histogram:year", "mode:year"], "0.5")
    assert status == 400
    assert "this needs ε = 0.5, but the budget is 1 and 0.75 is already spent" in page
    assert release_rows(database) == rows and public_page(owned) == first
    # The confirmation step refused it; a confirmed POST (a token from an earlier page,
    # or a budget spent meanwhile by another tab) is refused by the service itself.
    token = csrf(ada.get(f"/research/surveys/{OWNED}/publish/budget?budget=1").get_data(True))
    data = {"csrf_token": token, "figure": ["histogram:year", "mode:year"], "epsilon": "0.5"}
    forced = ada.post(f"/research/surveys/{OWNED}/publish/release", data=data)
    assert forced.status_code == 400
    assert "this needs ε = 0.5, but the budget is 1" in forced.get_data(as_text=True)
    assert release_rows(database) == rows and public_page(owned) == first

    # The same data, figures and ε again cost again: showing the old figures for free
    # would tell the public that nobody answered in between. Here it no longer fits.
    status, page = publish_in_browser(ada, HISTOGRAM, "0.75")
    assert status == 400 and "this needs ε = 0.75" in page
    assert release_rows(database) == rows
    assert set_budget_in_browser(ada, "1.5")[0] == 200
    status, page = publish_in_browser(ada, HISTOGRAM, "0.75")
    assert status == 200 and "cost ε = 0.75" in page
    again = release_rows(database)
    assert again[-1][3] != rows[-1][3]  # fresh noise, no new response
    assert [row[2] for row in again] == ["0", "0.75", "0.75"]
    # The budget cannot go below what is spent.
    status, page = set_budget_in_browser(ada, "1")
    assert status == 400 and "1.5 is already spent" in page


def test_the_publish_page_shows_the_ledger_and_the_split(owned: Flask, ada: FlaskClient) -> None:
    assert "/publish" in ada.get(f"/research/surveys/{OWNED}/study").get_data(as_text=True)
    set_budget_in_browser(ada, "2")
    query = {"figure": ["estimates", "histogram:year", "groups:cheated:year"], "epsilon": "1.5"}
    asked = ada.get(f"/research/surveys/{OWNED}/publish/release", query_string=query)
    text = asked.get_data(as_text=True)
    assert "ε = 1.5 in all: 0.5 for each of 3 noisy figures." in text
    assert "This costs ε = 1.5 of the budget, leaving 0.5." in text
    assert "reveal exactly how many" not in text
    publish_in_browser(ada, query["figure"], "1.5")  # type: ignore[arg-type]
    page = ada.get(f"/research/surveys/{OWNED}/publish").get_data(as_text=True)
    assert "Budget ε = 2; spent 1.5; remaining 0.5." in page
    figures = re.search(r'data-label="Figures">(.*?)</td>', page, re.S)
    assert figures is not None
    assert figures[1].split("<br>") == [
        "Estimates of every sensitive question (from noisy counts)",
        "How many chose each answer to “Which year of study are you in?” (noisy counts)",
        "“Have you cheated on an exam in the past year?” by the answers to “Which year of "
        "study are you in?” (noisy group sizes)",
    ]
    korean = ada.get(f"/research/surveys/{OWNED}/publish?lang=ko").get_data(as_text=True)
    assert "histogram of year" not in korean  # named in the page's language
    shown = public_page(owned)
    assert "ε = 0.5 each" in shown
    assert "sensitivity 2" in shown and "sensitivity 1" in shown
    # The estimates' ε split among the 5 sensitive questions.
    assert "split equally among its 5 questions: ε = 0.1 each." in shown


def test_exact_estimates_are_the_owners_explicit_choice(owned: Flask, ada: FlaskClient) -> None:
    set_budget_in_browser(ada, "1")
    query = {"figure": ["exact-estimates", "histogram:year"], "epsilon": "0.5"}
    asked = ada.get(f"/research/surveys/{OWNED}/publish/release", query_string=query)
    assert "reveal exactly how many people answered each sensitive question" in asked.get_data(
        as_text=True
    )
    both = {"figure": ["estimates", "exact-estimates"], "epsilon": "0.5"}
    refused = ada.get(f"/research/surveys/{OWNED}/publish/release", query_string=both)
    assert refused.status_code == 400
    assert "not both" in refused.get_data(as_text=True)
    publish_in_browser(ada, query["figure"], "0.5")  # type: ignore[arg-type]
    with owned.app_context():
        from survey_app.storage.releases import latest_snapshot

        snapshot = latest_snapshot(get_db(), OWNED)
    assert snapshot is not None and snapshot["exact_figures"] == ["exact-estimates"]
    shown = public_page(owned)
    assert "Estimates of the sensitive questions, from exact counts" in shown
    assert "Not covered: the estimates of the sensitive questions on this page" in shown


# --- (d) who may publish, CSRF, and what cannot be published ---------------------------------


def test_viewers_strangers_and_forged_posts_change_nothing(
    owned: Flask, ada: FlaskClient, database: sqlite_utils.Database
) -> None:
    set_budget_in_browser(ada, "1")
    before = database.execute(
        "SELECT central_budget FROM surveys WHERE slug = ?", [OWNED]
    ).fetchone()
    # The owner's own session, without the token: refused, nothing stored.
    for path, data in (
        ("release", {"figure": HISTOGRAM, "epsilon": "0.5"}),
        ("budget", {"budget": "5"}),
    ):
        response = ada.post(f"/research/surveys/{OWNED}/publish/{path}", data=data)
        assert response.status_code == 400
    bob = owned.test_client()
    assert log_in(bob, "bob").status_code == 302
    for path in ("", "/release?figure=estimates", "/budget?budget=5"):
        assert bob.get(f"/research/surveys/{OWNED}/publish{path}").status_code == 403
    token = re.findall(
        r'name="csrf_token" value="([^"]+)"', bob.get("/logout").get_data(as_text=True)
    )
    post = bob.post(
        f"/research/surveys/{OWNED}/publish/release",
        data={"csrf_token": token[0], "figure": ["estimates"], "epsilon": ""},
    )
    assert post.status_code == 403
    stranger = owned.test_client()
    assert stranger.get(f"/research/surveys/{OWNED}/publish").status_code == 302  # log in
    assert release_rows(database) == []
    after = database.execute(
        "SELECT central_budget FROM surveys WHERE slug = ?", [OWNED]
    ).fetchone()
    assert before == after == ("1",)
    assert owned.test_client().get(f"/results/{OWNED}").status_code == 404


@pytest.mark.parametrize(
    ("figure", "message"),
    [
        ("groups:cheated:substance", "substance is not a plain choice question"),
        ("groups:year:year", "year is not a sensitive yes/no question"),
        ("histogram:cheated", "cheated is not a plain choice question"),
        ("histogram:nothing", "The survey has no question nothing."),
        ("mode:drinks", "drinks is not a plain choice question"),
        ("pie:year", "There is no such figure."),
    ],
)
def test_figures_that_cannot_be_published_are_refused_clearly(
    owned: Flask, ada: FlaskClient, database: sqlite_utils.Database, figure: str, message: str
) -> None:
    set_budget_in_browser(ada, "1")
    status, page = publish_in_browser(ada, ["estimates", figure], "0.5")
    assert status == 400 and message in page
    assert release_rows(database) == []


def test_a_group_too_small_is_withheld_on_its_noisy_size(owned: Flask) -> None:
    # 120 responses in 4 years: 30 per year, right at the limit, so noise decides; a year
    # nobody is in is withheld, and every group is listed (which exist never depends on data).
    store(owned, OWNED, 200, year=1)
    with owned.app_context():
        db = get_db()
        survey = survey_named(OWNED)
        set_budget(db, survey, Fraction(10))
        snapshot = quote_and_publish(db, survey, ["groups:cheated:year"], Fraction(5), Seeded(3))
    groups = {g["label"]: g for g in snapshot["figures"][0]["groups"]}
    assert list(groups) == ["1", "2", "3", "4+"]
    assert groups["2"]["estimate"] is not None
    assert groups["1"]["estimate"] is None and groups["4+"]["estimate"] is None
    page = public_page(owned)
    assert page.count("Withheld: fewer than 30 respondents (by the noisy count).") == 3


def test_a_quote_the_budget_no_longer_covers_is_refused_when_published(
    owned: Flask, database: sqlite_utils.Database
) -> None:
    # Two quotes that each fit (two tabs, two owners); the first published spends what
    # the second counted on, so publishing the second charges the ledger again and stops.
    store(owned, OWNED, 20)
    with owned.app_context():
        db = get_db()
        survey = survey_named(OWNED)
        set_budget(db, survey, Fraction(1))
        first = quote_release(db, survey, ["histogram:year"], "0.75")
        second = quote_release(db, survey, ["mode:year"], "0.5")
        assert second.cost == Fraction(1, 2) and second.after.remaining == Fraction(1, 2)
        publish(db, first, Seeded(1))
        rows = release_rows(database)
        with pytest.raises(BudgetExceededError) as refused:
            publish(db, second, Seeded(2))
    assert refused.value.needed == Fraction(1, 2) and refused.value.remaining == Fraction(1, 4)
    assert release_rows(database) == rows


def test_only_exact_estimates_wait_for_the_first_response(owned: Flask, runner: Any) -> None:
    # Exact estimates of nobody tell that nobody answered: refused. A noisy release is
    # noise either way, and refusing it would tell the same: published.
    result = runner.invoke(args=["publish", OWNED, "--figure", "exact-estimates"])
    assert result.exit_code == 1
    assert "ada-life has no responses yet: there is nothing to publish" in result.output
    runner.invoke(args=["budget", OWNED, "1"])
    result = runner.invoke(args=["publish", OWNED, "--epsilon", "0.5"])
    assert result.exit_code == 0, result.output


def test_a_mistyped_epsilon_is_refused_even_for_exact_estimates_alone(
    owned: Flask, runner: Any
) -> None:
    # The page asks for ε only when a figure carries noise; a command line that was given
    # one checks it anyway: "--epsilon 0,5" is a typo to point out, not to ignore.
    store(owned, OWNED, 10)
    only_exact = ["publish", OWNED, "--figure", "exact-estimates"]
    result = runner.invoke(args=[*only_exact, "--epsilon", "junk"])
    assert result.exit_code != 0 and "junk" in result.output, result.output
    with owned.app_context():
        assert release_rows(get_db()) == []
    result = runner.invoke(args=only_exact)
    assert result.exit_code == 0, result.output


# --- (e) the command line ---------------------------------------------------------------------


def test_budget_publish_and_releases_on_the_command_line(owned: Flask, runner: Any) -> None:
    store(owned, OWNED, 60)
    result = runner.invoke(args=["publish", OWNED, "--epsilon", "0.5"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: ada-life has no central budget: noisy figures cost ε; set one first "
        "(survey-app budget ada-life EPSILON)\n"
    )
    result = runner.invoke(args=["budget", OWNED, "1"])
    assert result.output == "ada-life: central budget ε = 1, spent 0, remaining 1.\n"
    result = runner.invoke(args=["publish", OWNED, "--epsilon", "0.6"])
    assert result.exit_code == 0, result.output
    assert result.output == (
        "Published release 1 of ada-life.\n"
        "ε = 0.6: 0.3 for each of 2 noisy figures.\n"
        "Cost: 0.6.\n"
        "ada-life: central budget ε = 1, spent 0.6, remaining 0.4.\n"
        "http://127.0.0.1:5000/results/ada-life\n"
    )
    again = runner.invoke(args=["publish", OWNED, "--epsilon", "0.6"])
    assert again.exit_code == 1 and "needs ε = 0.6, but only 0.4" in again.output
    over = runner.invoke(args=["publish", OWNED, "--epsilon", "0.5", "--figure", "mode:year"])
    assert over.exit_code == 1
    assert over.output == (
        "Error: this release needs ε = 0.5, but only 0.4 of the survey's central budget "
        "of 1 is left; nothing was published\n"
    )
    low = runner.invoke(args=["budget", OWNED, "0.5"])
    assert low.exit_code == 1
    assert "releases have already spent ε = 0.6" in low.output
    bad = runner.invoke(args=["budget", OWNED, "0.0001"])
    assert bad.exit_code == 1 and "ε cannot be '0.0001'" in bad.output
    runner.invoke(args=["budget", OWNED, "1.5"])
    ledger = runner.invoke(args=["releases", OWNED])
    lines = ledger.output.splitlines()
    assert lines[0] == "ada-life: central budget ε = 1.5, spent 0.6, remaining 0.9."
    when = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"
    assert re.fullmatch(rf"-  {when}  budget ε = 1 \(was none\)", lines[1])
    assert re.fullmatch(
        rf"1  {when}  ε = 0\.6  cost 0\.6  sensitive estimates; histogram of year", lines[2]
    )
    assert re.fullmatch(rf"-  {when}  budget ε = 1\.5 \(was 1\)", lines[3])
    assert len(lines) == 4
    help_text = runner.invoke(args=["publish", "--help"]).output
    assert "histogram of every plain choice" in help_text and "--exact-estimates" in help_text


def test_exact_estimates_need_no_budget(owned: Flask, runner: Any) -> None:
    store(owned, OWNED, 10)
    result = runner.invoke(args=["publish", OWNED, "--figure", "estimates", "--exact-estimates"])
    assert result.exit_code == 0, result.output
    assert (
        "Estimates from exact counts: ε = 0, but they reveal how many answered each "
        "question; the public page says they are not covered.\nCost: 0.\n"
    ) in result.output
    both = runner.invoke(
        args=["publish", OWNED, "--figure", "estimates", "--figure", "exact-estimates"]
    )
    assert both.exit_code == 1 and "not both" in both.output
    assert runner.invoke(args=["releases", "nope"]).output == "Error: no survey with slug 'nope'\n"


# --- (f) the public page ----------------------------------------------------------------------


def test_the_public_page_needs_no_login_and_sets_no_cookie(owned: Flask, runner: Any) -> None:
    store(owned, OWNED, 80)
    runner.invoke(args=["budget", OWNED, "1"])
    assert runner.invoke(args=["publish", OWNED, "--epsilon", "1"]).exit_code == 0
    visitor = owned.test_client()
    response = visitor.get(f"/results/{OWNED}")
    assert response.status_code == 200
    assert "Set-Cookie" not in response.headers
    assert visitor.get_cookie("session") is None
    page = response.get_data(as_text=True)
    assert "a random whole number was added to it: the noise" in page
    assert "all 4 counts at once are within ±" in page
    assert "Privacy: ε = 0.5 for this figure; sensitivity 1" in page
    assert "Together they are differentially private with ε = 1:" in page
    assert "<script" not in page and "style=" not in page
    assert visitor.get("/results/no-such-survey").status_code == 404


@pytest.mark.parametrize(
    ("figure", "epsilon"), [("estimates", Fraction(1)), ("exact-estimates", None)]
)
def test_estimates_leave_out_plain_questions(
    owned: Flask, figure: str, epsilon: Fraction | None
) -> None:
    # A plain question's "estimate" would be its exact counts: its histogram shows them.
    store(owned, OWNED, 40)
    with owned.app_context():
        db = get_db()
        set_budget(db, survey_named(OWNED), Fraction(1))
        snapshot = quote_and_publish(db, survey_named(OWNED), [figure], epsilon, Seeded(4))
    (shown,) = snapshot["figures"]
    assert [q["question"] for q in shown["questions"]] == [
        "cheated",
        "skipped_meals",
        "substance",
        "drinks",
        "stress",
    ]
    noisy = figure == "estimates"
    assert snapshot["noisy_figures"] == int(noisy)
    assert snapshot["exact_figures"] == ([] if noisy else ["exact-estimates"])
