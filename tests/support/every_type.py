"""The survey with one question of every type (examples/every-type.yaml): known true
answers for its respondents, and their reports drawn by each question's own mechanism.

Truths depend on the year of study (the plain covariate), so the estimates by group have
different truths to cover. NumPy's seeded generator stands in for the secure coins here
and nowhere else: these are simulated respondents, never real answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from scipy.special import expit

from survey_app.domain.answers import from_stored, to_stored
from survey_app.privacy import simulate
from survey_app.privacy.wire import Report, Stored
from survey_app.storage.surveys import Question, Survey
from survey_app.storage.tallies import increments

from .paths import ROOT

EVERY_TYPE = ROOT / "examples" / "every-type.yaml"
EVERY_TYPE_SLUG = "every-type"

#: Substance: most people none, a Zipf-like tail over the other seven.
SUBSTANCE = np.array([0.55, 0.18, 0.09, 0.06, 0.04, 0.03, 0.03, 0.02])
#: Each tick-all option's chance of being ticked (the fourth rises with the year).
DONE = np.array([0.12, 0.05, 0.08, 0.35, 0.2])
BINGE = np.array([0.45, 0.3, 0.15, 0.1])
SATISFIED = np.array([0.05, 0.1, 0.2, 0.45, 0.2])


def true_answers(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``n`` respondents' true answers, by question key (tick-all: one row of 0/1 each)."""
    year = rng.integers(0, 4, n)
    done = (rng.random((n, len(DONE))) < DONE).astype(int)
    done[:, 3] = rng.random(n) < expit(-1.2 + 0.5 * year)
    drinks = np.where(rng.random(n) < 0.6, 0, rng.integers(1, 51, n))
    return {
        "year": year,
        "cheated": rng.random(n) < expit(-2.0 + 0.6 * year),
        "substance": rng.choice(len(SUBSTANCE), n, p=SUBSTANCE),
        "drinks": drinks,
        "done": done,
        "binge": rng.choice(len(BINGE), n, p=BINGE),
        "satisfied": rng.choice(len(SATISFIED), n, p=SATISFIED),
    }


def _report(question: Question, value: Any) -> Report:
    if question.type.is_yes_no:
        return bool(value)
    if isinstance(value, np.ndarray):
        return tuple(int(part) for part in value)
    return int(value)


def stored_answers(
    survey: Survey, truths: Mapping[str, np.ndarray], rng: np.random.Generator
) -> dict[str, list[Stored]]:
    """Each question's stored values, one per respondent: the sensitive ones randomized by
    the question's mechanism, the plain ones as given."""
    stored = {}
    for question in survey.questions:
        values = truths[question.key]
        reports = simulate(question.mechanism, values, rng) if question.sensitive else values
        stored[question.key] = [to_stored(question, _report(question, r)) for r in reports]
    return stored


def reports(survey: Survey, stored: Mapping[str, list[Stored]]) -> list[dict[str, Report | None]]:
    """One response per respondent, as ``record_response`` takes it."""
    n = len(next(iter(stored.values())))
    return [{q.key: from_stored(q, stored[q.key][i]) for q in survey.questions} for i in range(n)]


def tally_cells(question: Question, stored: Iterable[Stored]) -> dict[str, int]:
    """The tally cells ``stored`` values of ``question`` add up to, as ``record_response``
    keeps them (the dashboard's input)."""
    cells: Counter[str] = Counter()
    for value, n in Counter(stored).items():
        for cell, amount in increments(question, from_stored(question, value)):
            cells[cell] += amount * n
    return dict(cells)


def joint(stored: Mapping[str, list[Stored]], *keys: str) -> Counter[tuple[Stored, ...]]:
    """How many respondents stored each combination of values for ``keys``: what
    ``crosstabs.joint_counts`` reads from the database."""
    return Counter(zip(*(stored[key] for key in keys), strict=True))
