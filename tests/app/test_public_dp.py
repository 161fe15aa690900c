"""The public page under central DP: every figure depends on who took part only through
noisy counts, the noise matches what one person can change, the intervals cover, and the
page tells its readers the whole story (the total ε, every release, every budget raise).

Neighbouring data sets: one respondent added or removed.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import re
import sys
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from flask import Flask

from survey_app import create_app
from survey_app.domain.definitions import load_definition
from survey_app.domain.releases import publish, quote_release, set_budget
from survey_app.privacy import (
    FAIR_COINS,
    SECURE,
    DiscreteLaplace,
    DiscretePiecewise,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    Mechanism,
    OptimizedUnaryEncoding,
    RandomSource,
    SampledOption,
    SubsetSelection,
)
from survey_app.privacy.central import (
    decimal_text,
    question_noise,
    release_question,
    release_sensitive_estimates,
    tally_reports,
)
from survey_app.privacy.coins import discrete_laplace
from survey_app.privacy.means import MeanEstimate
from survey_app.storage.backends import Database
from survey_app.storage.database import MIGRATIONS, write_transaction
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, get_survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.paths import ROOT
from tests.support.statistics import Seeded

SCRIPT = ROOT / "scripts" / "public_coverage.py"
DOC = ROOT / "docs" / "public-releases.md"

_spec = importlib.util.spec_from_file_location("public_coverage", SCRIPT)
assert _spec is not None and _spec.loader is not None
public_coverage = importlib.util.module_from_spec(_spec)
sys.modules["public_coverage"] = public_coverage  # dataclasses look their module up here
_spec.loader.exec_module(public_coverage)


# --- (b) the noise matches what one person can change, exactly ------------------------------

MECHANISMS: dict[str, Mechanism] = {
    "yes/no": FAIR_COINS,
    "GRR": GeneralizedRandomizedResponse.from_epsilon(3, 1),
    "OUE": OptimizedUnaryEncoding.from_epsilon(3, 1),
    "subset selection": SubsetSelection.from_epsilon(4, 1, 2),
    "tick all that apply": SampledOption.from_epsilon(2, 1),
    "Duchi": DuchiBinary.from_epsilon(0, 4, 1),
    # A large local ε keeps the honest range small enough to enumerate (B = 8).
    "discrete Laplace": DiscreteLaplace.from_epsilon(0, 2, 10),
    "piecewise": DiscretePiecewise.best_for(0, 3, 2),  # reports 0-74
}


def possible_reports(mechanism: Mechanism) -> list[Any]:
    """Every report one person could add: the honest ones and a few beyond, which a
    forger might send (the release must hold for them too)."""
    low, high = mechanism.report_range()
    if isinstance(mechanism, OptimizedUnaryEncoding):
        return list(itertools.product(range(low, high + 1), repeat=mechanism.k))
    if isinstance(mechanism, SubsetSelection):  # a set of another size is never stored
        return list(itertools.combinations(range(mechanism.k), mechanism.size))
    if isinstance(mechanism, SampledOption):  # an option and its bit
        return list(itertools.product(range(mechanism.k), (0, 1)))
    return list(range(low - 2, high + 3))


def worst_log_ratio(
    base: Sequence[int], neighbour: Sequence[int], gammas: Sequence[Fraction]
) -> Fraction:
    """max over every output o near both tallies of |ln P(o | base)/P(o | neighbour)|.

    Each coordinate carries independent discrete Laplace noise with pmf (1 - α)/(1 + α)·
    α^|o - c|, α = e^-γ: the constants cancel and the log-ratio is exactly
    Σ γ_i (|o_i - c'_i| - |o_i - c_i|), a Fraction. Outputs range over every integer from
    two below the lower tally to two above the higher, in every coordinate.
    """
    windows = [range(min(a, b) - 2, max(a, b) + 3) for a, b in zip(base, neighbour, strict=True)]
    worst = Fraction(0)
    for output in itertools.product(*windows):
        terms = zip(output, base, neighbour, gammas, strict=True)
        ratio = sum((g * (abs(o - b) - abs(o - a)) for o, a, b, g in terms), Fraction(0))
        worst = max(worst, abs(ratio))
    return worst


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_one_person_moves_the_noisy_tally_by_at_most_e_to_the_epsilon(name: str) -> None:
    """For every report one added (or removed) person could make, every noisy (n, counts)
    output is at most e^ε_q times likelier under one tally than the other, and exactly
    e^ε_q for the worst: the sensitivity is neither understated nor overstated."""
    mechanism = MECHANISMS[name]
    epsilon = Fraction(1, 5)
    count_gamma, report_gamma = question_noise(mechanism, epsilon)
    reports = possible_reports(mechanism)
    base_reports = dict.fromkeys(reports[:: max(1, len(reports) // 4)], 1)
    base = tally_reports(mechanism, base_reports)
    gammas = [count_gamma] + [report_gamma] * (len(base) - 1)
    worst = Fraction(0)
    for report in reports:
        added = dict(base_reports)
        added[report] = added.get(report, 0) + 1
        worst = max(worst, worst_log_ratio(base, tally_reports(mechanism, added), gammas))
    assert worst == epsilon


def test_the_estimates_figure_composes_to_its_epsilon() -> None:
    """One person may answer every sensitive question: their worst log-ratios add up, and
    the figure's ε split over the questions makes the sum exactly the figure's ε."""
    epsilon = Fraction(1, 2)
    tallies = [(m, tally_reports(m, {})) for m in MECHANISMS.values()]
    released = release_sensitive_estimates(tallies, epsilon, source=Seeded(1))
    total = Fraction(0)
    for (mechanism, base), question in zip(tallies, released, strict=True):
        gammas = [question.count_gamma] + [question.report_gamma] * (len(base) - 1)
        total += max(
            worst_log_ratio(base, tally_reports(mechanism, {r: 1}), gammas)
            for r in possible_reports(mechanism)
        )
    assert total == epsilon


# --- (c) the intervals from noisy counts cover, as docs/public-releases.md says -------------


def documented_rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split(public_coverage.START)[1].split(public_coverage.END)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]


@pytest.mark.slow
@pytest.mark.parametrize("index", [6, 36])  # yes/no at 50%, and the Laplace mean: ε = 0.1, n = 100
def test_noisy_count_intervals_cover_as_documented(index: int) -> None:
    """Recomputed with the script's seed, a cell is the documented row (so the table is
    the code's), and its coverage is at least 95% less 5 standard errors. These cells are
    where the noise outweighs the sampling: an interval without the noise's variance
    covers far less there."""
    grid = [
        (case, n, eps)
        for case in public_coverage.CASES
        for eps in public_coverage.EPSILONS
        for n in public_coverage.SIZES
    ]
    case, n, epsilon = grid[index]
    result = public_coverage.cell(case, n, epsilon, index)
    assert public_coverage.row(result) == documented_rows()[index]
    shown = round(result.shown * public_coverage.REPLICATES)
    assert result.coverage >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / shown)


def test_the_documented_minimum_is_the_tables() -> None:
    rows = documented_rows()
    coverages = [float(row.split("|")[5]) for row in rows]
    assert len(rows) == len(public_coverage.CASES) * 6
    text = DOC.read_text(encoding="utf-8")
    stated = re.search(r"Minimum: \*\*([0-9.]+)\*\*", text)
    assert stated is not None and float(stated[1]) == min(coverages)
    # 2,000 replicates: 0.95 less 5 standard errors is 0.926.
    assert min(coverages) >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / public_coverage.REPLICATES)


# --- noise forced through the exact sampler ---------------------------------------------------


def laplace_transcript(z: int, gamma: Fraction) -> list[int]:
    """The integers ``coins.discrete_laplace`` must draw to return z (CKS 2020, Algorithm 2,
    worked backwards): U = x mod t and V = x div t for x = s·|z| (γ = s/t), so that
    ⌊(U + tV)/s⌋ = |z|; U accepted (its e^(-U/t) coin's first Bernoulli fails); V
    successes of the e^(-1) coin (Bernoulli(1) yes, ½ yes, ⅓ no: three draws, odd; then
    the e^(-0) coin's Bernoulli(0) no) and one failure (1 yes, ½ no); then the sign."""
    s, t = gamma.numerator, gamma.denominator
    x = s * abs(z)
    u, v = x % t, x // t
    accept = Fraction(u, t).denominator - 1  # randbelow(b) = b - 1 fails Bernoulli(a/b)
    return [u, accept, *([0, 0, 2, 0] * v), 0, 1, 0 if z < 0 else 1]


class Forced:
    """A RandomSource that makes each discrete Laplace draw the next planned value."""

    def __init__(self, plan: Sequence[tuple[int, Fraction]]) -> None:
        self.answers = deque(a for z, g in plan for a in laplace_transcript(z, g))

    def randbelow(self, n: int, /) -> int:
        value = self.answers.popleft()
        assert 0 <= value < n, "the plan is out of step with the sampler's draws"
        return value


class NoNoise:
    """Every discrete Laplace draw is 0, whatever γ (the transcript of 0 needs no γ)."""

    def __init__(self) -> None:
        self.answers = itertools.cycle([0, 0, 0, 1, 1])

    def randbelow(self, n: int, /) -> int:
        return next(self.answers)


@pytest.mark.parametrize("gamma", [Fraction(1, 7), Fraction(5, 3), Fraction(2, 1001)])
def test_forced_noise_is_what_the_exact_sampler_draws(gamma: Fraction) -> None:
    for z in (0, 1, -1, 4, -9, 250):
        assert discrete_laplace(gamma, Forced([(z, gamma)])) == z
    assert [discrete_laplace(gamma, NoNoise()) for _ in range(3)] == [0, 0, 0]


# --- (a) neighbouring data sets, the same noisy counts: the same page, byte for byte ----------

EVERY_KIND = """\
slug: every-kind
title: Every kind of question
questions:
  - {key: year, text: "Which year?", type: choice, options: ["1", "2", "3"], sensitive: false}
  - {key: cheated, text: "Cheated?", type: yes_no}
  - {key: drug, text: "Which drug?", type: choice, options: [a, b, c], mechanism: grr}
  - {key: apps, text: "Which apps?", type: choice, options: [p, q, r, s], mechanism: oue}
  - {key: drinks, text: "Drinks?", type: number, min: 0, max: 10, mechanism: laplace}
  - {key: hours, text: "Hours?", type: number, min: 0, max: 20, mechanism: duchi}
  - {key: used, text: "Which used?", type: multiple, options: [x, y, z]}
"""
SLUG = "every-kind"
FIGURES = ["estimates", "histogram:year", "groups:cheated:year"]
EPSILON = Fraction(3, 2)
SHARE = EPSILON / len(FIGURES)
DAY = [datetime(2026, 11, d, 12, 0, tzinfo=UTC) for d in range(20, 26)]


def reports(i: int) -> dict[str, Any]:
    return {
        "year": i % 3,
        "cheated": i % 4 == 0,
        "drug": i % 3,
        "apps": tuple((i >> j) & 1 for j in range(4)),
        "drinks": i % 13 - 1,
        "hours": i % 2,
        "used": (i % 3, i % 2),
    }


ONE_MORE: dict[str, Any] = {
    "year": 2,
    "cheated": True,
    "drug": 1,
    "apps": (1, 1, 1, 1),
    "drinks": 40,
    "hours": 1,
    "used": (2, 1),
}


def quote_and_publish(
    db: Database,
    survey: Survey,
    figures: list[str],
    epsilon: Fraction | None,
    source: RandomSource,
    now: datetime,
) -> dict[str, Any]:
    """Quote, then publish the quote, as the page and the command do; the snapshot stored."""
    typed = None if epsilon is None else decimal_text(epsilon)
    return publish(db, quote_release(db, survey, figures, typed), source, now).snapshot


def survey_of(app: Flask) -> Survey:
    survey = get_survey(get_db(), SLUG)
    assert survey is not None
    return survey


def build(path: Path, one_more: bool) -> Flask:
    """40 respondents, a budget, a first release, a raise; then perhaps one more person."""
    app = create_app(
        {"TESTING": True, "DATABASE": str(path), "SECRET_KEY": "t", "RATE_LIMITS": False}
    )
    definition = path.with_suffix(".yaml")
    definition.write_text(EVERY_KIND)
    with app.app_context():
        db = get_db()
        survey = store_survey(db, load_definition(definition))
        set_budget(db, survey, Fraction(2), now=DAY[0])
        for i in range(40):
            record_response(db, survey, reports(i), f"r-{i}")
        quote_and_publish(db, survey, FIGURES, EPSILON, NoNoise(), DAY[1])
        set_budget(db, survey, Fraction(5), now=DAY[2])
        if one_more:
            record_response(db, survey, ONE_MORE, "one-more")
    return app


def released(snapshot: dict[str, Any]) -> list[tuple[int, Fraction]]:
    """Every noisy count of a snapshot with its γ, in the order the release drew them."""
    values: list[tuple[int, Fraction]] = []
    for figure in snapshot["figures"]:
        if figure["kind"] == "estimates":
            for question in figure["questions"]:
                values.append((question["noisy_n"], Fraction(question["count_gamma"])))
                gamma = Fraction(question["report_gamma"])
                values += [(value, gamma) for value in question["noisy_reports"]]
        elif figure["kind"] == "histogram":
            values += [(cell["noisy_count"], SHARE) for cell in figure["cells"]]
        elif figure["kind"] == "groups":
            for group in figure["groups"]:
                values += [(group["noisy_n"], SHARE / 2), (group["noisy_reported"], SHARE / 2)]
    return values


def publish_now(app: Flask, source: Any, figures: list[str] = FIGURES) -> dict[str, Any]:
    with app.app_context():
        eps = EPSILON if "estimates" in figures else None
        return quote_and_publish(get_db(), survey_of(app), figures, eps, source, DAY[3])


def page(app: Flask) -> bytes:
    response = app.test_client().get(f"/results/{SLUG}")
    assert response.status_code == 200
    return response.get_data()


def stored_snapshot(app: Flask) -> str:
    with app.app_context():
        row = get_db().execute("SELECT snapshot FROM releases ORDER BY id DESC").fetchone()
        return str(row[0])


@pytest.fixture
def neighbours(tmp_path: Path) -> Iterator[tuple[Flask, Flask]]:
    """D and D' = D plus one person who answered everything after the first release."""
    yield build(tmp_path / "d.db", one_more=False), build(tmp_path / "d1.db", one_more=True)


@pytest.mark.slow
def test_neighbours_with_the_same_noisy_counts_publish_the_same_page(
    neighbours: tuple[Flask, Flask], tmp_path: Path
) -> None:
    without, with_one = neighbours
    # D's counts, released with no noise, and D''s (a copy, published the same way).
    counts = released(publish_now(without, NoNoise()))
    probe = build(tmp_path / "probe.db", one_more=True)
    counts_with_one = released(publish_now(probe, NoNoise()))
    assert counts != counts_with_one  # the extra person is in the counts
    # D' gets the noise that lands its counts exactly on D's.
    plan = [(c - d, g) for (c, g), (d, _) in zip(counts, counts_with_one, strict=True)]
    source = Forced(plan)
    publish_now(with_one, source)
    assert not source.answers  # every planned draw was used: the plan was in step
    assert stored_snapshot(with_one) == stored_snapshot(without)
    assert page(with_one) == page(without)
    assert page(probe) != page(without)  # the same data without the forced noise: not equal


def test_exact_estimates_differ_between_neighbours_and_the_page_says_so(
    neighbours: tuple[Flask, Flask],
) -> None:
    without, with_one = neighbours
    for app in neighbours:
        snapshot = publish_now(app, NoNoise(), ["exact-estimates"])
        assert snapshot["exact_figures"] == ["exact-estimates"]
    assert stored_snapshot(with_one) != stored_snapshot(without)
    text = page(without).decode()
    assert (
        "Not covered: the estimates of the sensitive questions on this page were computed "
        "from exact counts. They reveal exactly how many people answered each question"
    ) in text
    assert "Not covered by the privacy guarantee: from exact counts." in text
    assert "Together they are differentially private" not in text


# --- (d) the page lists every release, the total ε and every budget change ----------------


def test_the_page_lists_every_release_the_total_and_the_raises(
    neighbours: tuple[Flask, Flask],
) -> None:
    app, _ = neighbours
    publish_now(app, Seeded(3))
    text = page(app).decode()
    assert re.search(r"Together they are differentially private with ε = 3:", text)
    assert "Total privacy spent: ε = 3, by 2 releases." in text
    history = text.split('id="releases"')[1]
    rows = re.findall(r'<th scope="row">([^<]+)</th>\s*<td data-label="What">(.*?)</td>', history)
    assert [(day, re.sub(r"<[^>]+>", " ", what).split()[:5]) for day, what in rows] == [
        ("2026-11-20", ["Privacy", "budget", "set", "to", "ε"]),
        ("2026-11-21", ["Estimates", "of", "every", "sensitive", "question"]),
        ("2026-11-22", ["Privacy", "budget", "raised", "from", "ε"]),
        ("2026-11-23", ["Estimates", "of", "every", "sensitive", "question"]),
    ]
    assert "Privacy budget raised from ε = 2 to ε = 5." in history
    assert history.count("1.5</td>") == 2  # each release's ε
    assert history.count("(shown on this page)") == 1


def test_estimates_stored_before_the_noise_are_named_exact(tmp_path: Path) -> None:
    """Releases made before estimates came from noisy counts stored the exact ones as
    "estimates": the migration renames them, so the page does not claim they were noisy."""
    app = build(tmp_path / "old.db", one_more=False)
    with app.app_context():
        db = get_db()
        with write_transaction(db):
            db.execute("DELETE FROM releases")
        quote_and_publish(db, survey_of(app), ["exact-estimates"], None, SECURE, DAY[3])
        old = json.loads(stored_snapshot(app))
        del old["exact_figures"]
        old["figures"][0]["id"] = old["figures"][0]["kind"] = "estimates"
        with write_transaction(db):
            db.execute(
                "UPDATE releases SET snapshot = ?, what = 'sensitive estimates'",
                [json.dumps(old, sort_keys=True)],
            )
            db.execute("DROP TABLE budget_changes")
            names = [migration.__name__ for migration in MIGRATIONS]
            assert isinstance(db, sqlite_utils.Database)
            MIGRATIONS[names.index("_budget_changes_and_exact_estimates")](db)
        assert db.execute("SELECT what FROM releases").fetchone()[0] == "exact sensitive estimates"
    snapshot = json.loads(stored_snapshot(app))
    assert snapshot["exact_figures"] == ["exact-estimates"]
    assert snapshot["figures"][0]["kind"] == "exact-estimates"
    assert "Not covered: the estimates of the sensitive questions" in page(app).decode()


def test_a_piecewise_mean_is_released_on_the_answers_scale() -> None:
    """Its reports sum in report units; the release maps the mean and its interval back
    through value_offset and value_scale (leaving them out leaves it in report units)."""
    import numpy as np

    mechanism = DiscretePiecewise.best_for(0, 50, 4)
    rng = np.random.default_rng(3)
    answers = rng.integers(0, 51, 20_000) * (rng.random(20_000) < 0.2)  # mostly zero
    stored = Counter(int(report) for report in mechanism.simulate(answers, rng))
    released = release_question(mechanism, tally_reports(mechanism, stored), 10, source=Seeded(1))
    (mean,) = released.estimates
    assert isinstance(mean, MeanEstimate)
    assert mean.low <= answers.mean() <= mean.high
    assert abs(mean.point - answers.mean()) < 5 * mean.std_error < 1


def test_each_tick_all_option_is_released_from_its_own_noisy_pair() -> None:
    """Option j's share from the noisy reports about it (c̃_j0 + c̃_j1) and those saying
    ticked (c̃_j1): 20,000 people, a quarter ticking option 0, all option 1, none option
    2; each interval holds its truth and the estimate is near it. Estimating option j
    among all n (the choice's denominator) would put option 1 near 1/3, not 1."""
    import numpy as np

    mechanism = SampledOption.from_epsilon(3, 2)
    rng = np.random.default_rng(5)
    people = 20_000
    answers = np.column_stack(
        [rng.random(people) < 0.25, np.ones(people, int), np.zeros(people, int)]
    ).astype(int)
    stored = Counter((int(j), int(b)) for j, b in mechanism.simulate(answers, rng))
    released = release_question(mechanism, tally_reports(mechanism, stored), 1, source=Seeded(2))
    assert len(released.estimates) == mechanism.k
    for estimate, truth in zip(released.estimates, (0.25, 1.0, 0.0), strict=True):
        assert estimate.low <= truth <= estimate.high
        assert abs(estimate.point - truth) < 0.05
