"""Every question type in one survey (examples/every-type.yaml): the estimates the
dashboard, the exports, the page of estimates by group and the public page show cover
known truths at their nominal rate in a seeded simulation (issue 19's "done when").

The simulation calls what those pages call, from counts made the way the database makes
them: ``question_estimate`` (the dashboard, export.csv and estimates.json),
``groups_from_counts`` (the by-group page and groups.csv), ``release_sensitive_estimates``
and ``release_group_estimates`` (the public page's figures, their central noise drawn by a
seeded source). tests/browser/test_every_type.py builds this survey in the builder and
answers it in Chromium; tests/app/test_mixed_results.py and the pages' own tests check that
each page shows what these functions return.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import cast

import numpy as np
import pytest
from flask import Flask

from survey_app.domain.analyses import groups_from_counts
from survey_app.domain.answers import from_stored
from survey_app.domain.definitions import parse_definition
from survey_app.domain.question_estimates import question_estimate
from survey_app.privacy.central import (
    release_group_estimates,
    release_sensitive_estimates,
    tally_reports,
)
from survey_app.privacy.groups import GroupCount
from survey_app.privacy.mechanisms import ProportionMechanism
from survey_app.privacy.wire import Report, Stored
from survey_app.storage.surveys import Question, Survey, store_survey
from survey_app.web.database_session import get_db
from tests.support.every_type import (
    EVERY_TYPE,
    joint,
    stored_answers,
    tally_cells,
    true_answers,
)
from tests.support.statistics import Seeded

SURVEYS = 400
RESPONDENTS = 300
#: The public page's figure ε, split equally among the five sensitive questions.
PUBLIC_EPSILON = Fraction(1)
#: Groups formed in fewer surveys than this are not judged one by one.
MIN_SURVEYS = 100


def floor(surveys: int) -> float:
    """95% less five standard errors of a coverage rate over ``surveys`` surveys."""
    return 0.95 - 5 * math.sqrt(0.95 * 0.05 / surveys)


@pytest.fixture
def survey(app: Flask) -> Survey:
    with app.app_context():
        return store_survey(get_db(), parse_definition(EVERY_TYPE.read_text()))


def test_auto_lands_on_subset_selection_and_the_piecewise_mechanism(survey: Survey) -> None:
    mechanisms = {q.key: q.mechanism.name for q in survey.questions}
    assert mechanisms == {
        "year": "none",
        "cheated": "two_coin_randomized_response",
        "substance": "subset_selection",
        "drinks": "piecewise",
        "done": "sampled_option",
        "binge": "generalized_randomized_response",
        "satisfied": "none",
    }


def _reports(question: Question, stored: list[Stored]) -> Counter[Report | None]:
    """How many times each report was stored, as the public page reads them."""
    return Counter(from_stored(question, value) for value in stored)


def _shares(question: Question, truth: np.ndarray) -> list[float]:
    """The true share of each category: "yes", each option, or each option ticked."""
    if question.type.is_yes_no:
        return [float(np.mean(truth))]
    if question.type.is_multiple:
        return [float(share) for share in np.mean(truth, axis=0)]
    return [float(np.mean(truth == j)) for j in range(len(question.options))]


def _mean(question: Question, truth: np.ndarray) -> float:
    scores = np.asarray(question.scores) if question.type.has_scores else None
    return float(np.mean(truth if scores is None else scores[truth]))


def _dashboard(
    question: Question, stored: list[Stored], truth: np.ndarray
) -> Iterator[tuple[str, bool]]:
    """Whether each interval the dashboard shows for ``question`` covers its truth."""
    if not question.sensitive and not question.type.has_scores:
        return  # a plain choice: its counts are exact, shown without intervals
    result = question_estimate(question, tally_cells(question, stored), 0.95, "clopper-pearson")
    if question.type.estimates_mean or question.type.has_scores:
        assert result.mean is not None
        yield f"{question.key} mean", result.mean.low <= _mean(question, truth) <= result.mean.high
    if question.type.estimates_mean:
        return
    every = True
    for j, (category, share) in enumerate(
        zip(result.categories, _shares(question, truth), strict=True)
    ):
        assert category.estimate is not None and category.simultaneous is not None
        yield f"{question.key}[{j}]", category.estimate.low <= share <= category.estimate.high
        every &= category.simultaneous.low <= share <= category.simultaneous.high
    yield f"{question.key}[all at once]", every


def _by_group(
    question: Question,
    year: Question,
    stored: Mapping[str, list[Stored]],
    truths: Mapping[str, np.ndarray],
) -> Iterator[tuple[str, bool]]:
    """Whether each group's interval on the by-group page covers the group's truth."""
    analysis = groups_from_counts(question, year, joint(stored, "year", question.key))
    for category in analysis.categories:
        for row in category.rows:
            if row.estimate is None:
                continue  # withheld: nothing shown
            years = [int(group.key) for group in row.groups]  # pooled: several
            members = np.isin(truths["year"], years)
            truth = truths[question.key][members]
            if category.option is None:  # "yes", or a number's mean
                target = float(np.mean(truth.astype(float)))
            elif question.type.is_multiple:
                target = float(np.mean(truth[:, category.option]))
            else:
                target = float(np.mean(truth == category.option))
            label = f"{question.key}[{category.option}] in years {years}"
            yield label, row.estimate.low <= target <= row.estimate.high


def _public(
    survey: Survey,
    stored: Mapping[str, list[Stored]],
    truths: Mapping[str, np.ndarray],
    source: Seeded,
) -> Iterator[tuple[str, bool]]:
    """Whether each interval of the public page's figures covers its truth: every
    sensitive question's estimates, and "cheated" by year."""
    questions = survey.sensitive_questions
    tallies = [
        (q.mechanism, tally_reports(q.mechanism, _reports(q, stored[q.key]))) for q in questions
    ]
    released = release_sensitive_estimates(tallies, PUBLIC_EPSILON, 0.95, source)
    for question, noisy in zip(questions, released, strict=True):
        truth = truths[question.key]
        targets = (
            [float(np.mean(truth))] if question.type.estimates_mean else _shares(question, truth)
        )
        for j, (estimate, target) in enumerate(zip(noisy.estimates, targets, strict=True)):
            yield f"public {question.key}[{j}]", estimate.low <= target <= estimate.high
    cheated = next(q for q in questions if q.key == "cheated")
    counts = joint(stored, "year", "cheated")
    groups = {str(g): GroupCount(counts[(g, 1)], counts[(g, 1)] + counts[(g, 0)]) for g in range(4)}
    mechanism = cast(ProportionMechanism, cheated.mechanism)
    release = release_group_estimates(groups, mechanism, PUBLIC_EPSILON, 0.95, source=source)
    for group in release.groups:
        assert group.estimate is not None
        share = float(np.mean(truths["cheated"][truths["year"] == int(group.group)]))
        yield (
            f"public cheated in year {group.group}",
            group.estimate.low <= share <= group.estimate.high,
        )


@pytest.mark.slow
def test_every_interval_covers_its_truth_at_the_nominal_rate(survey: Survey) -> None:
    """400 simulated surveys of 300 respondents with fixed true answers (so the truths
    are the respondents' own shares and means): each 95% interval must cover its truth in
    at least 95% - 5 standard errors of 400 surveys (≈ 0.895).

    Intervals that ignore the coins, or with a wrong p_true or p_false, cover far less:
    replacing subset selection's estimator by the GRR one, or the public page's noise
    variance by zero, takes the lowest rate well below the floor.
    """
    rng = np.random.default_rng(20261126)
    truths = true_answers(RESPONDENTS, rng)
    source = Seeded(20261126)
    by_key = {q.key: q for q in survey.questions}
    covered: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for _ in range(SURVEYS):
        stored = stored_answers(survey, truths, rng)
        checks = [
            *(c for q in survey.questions for c in _dashboard(q, stored[q.key], truths[q.key])),
            *(
                c
                for q in survey.sensitive_questions
                for c in _by_group(q, by_key["year"], stored, truths)
            ),
            *_public(survey, stored, truths, source),
        ]
        for label, hit in checks:
            covered[label] += hit
            seen[label] += 1
    # A group pooled with others only in some surveys (a tick-all option's reports by
    # year, n_j ≈ 15 a group) is judged over the surveys that formed it, when there are
    # enough of them to judge; the rarely formed ones are counted together.
    rare = [label for label in seen if seen[label] < MIN_SURVEYS]
    for label in rare:
        covered["rarely formed groups"] += covered.pop(label)
        seen["rarely formed groups"] += seen.pop(label)
    assert seen["rarely formed groups"] < 0.02 * sum(seen.values())
    assert len(seen) > 100  # every type, every page: not a vacuous pass
    short = {
        label: (covered[label] / seen[label], seen[label])
        for label in seen
        if covered[label] / seen[label] < floor(seen[label])
    }
    assert not short, short
