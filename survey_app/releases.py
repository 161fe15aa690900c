"""Public releases under central differential privacy: the figures, the budget, the ledger.

A release is a frozen snapshot of figures chosen by a survey's owner, computed once at
publishing and stored; the public page (``public.py``) shows the stored numbers again and
never draws fresh noise. Figures come in two kinds:

- *free*: the sensitive questions' estimates, computed from the randomized reports alone
  (post-processing of what the coins already protect): ε = 0;
- *noisy*: anything that counts plain answers (``privacy.central``): a plain question's
  histogram (Δ = 1), a sensitive yes/no question by the groups of a plain covariate
  (Δ = 2, groups shown on their noisy sizes), the most common answer of a plain question
  by Report Noisy Max (Δ = 1, only the winner).

The release's ε is split equally among its noisy figures, ε/k each: by basic composition
the k figures together are ε-DP, and that ε is charged to the survey's central budget.
Publishing the same snapshot again (the same data fingerprint, choices and ε) costs 0 and
re-shows the stored figures: fresh noise on the same data would be a new release.

Every count goes through ``crosstabs.joint_counts``. The ledger is read, charged and
written in one write transaction, so two owners publishing at once cannot overspend.
Errors carry facts, not sentences: the browser and the command line word them.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, cast

import sqlite_utils

from .crosstabs import joint_counts
from .db import write_transaction
from .estimates import survey_estimates
from .privacy import SECURE, RandomSource
from .privacy.central import (
    SENSITIVITY,
    BudgetExceededError,
    Ledger,
    Release,
    accuracy_bound,
    fingerprint,
    noise_gamma,
    noisy_counts,
    release_group_estimates,
    report_noisy_max,
)
from .privacy.groups import MIN_GROUP_SIZE, GroupCount
from .privacy.mechanism import ProportionMechanism
from .surveys import Question, Survey

ESTIMATES = "estimates"
# A budget or a release's ε: a plain decimal, at most 3 places, up to these. Beyond ε = 10
# a count's noise is mostly below one: nothing a public page should call private.
EPSILON_PATTERN = re.compile(r"\d{1,3}(\.\d{1,3})?")
MAX_RELEASE_EPSILON = Fraction(10)
MAX_BUDGET = Fraction(100)
CONFIDENCE = 0.95


class ReleaseError(ValueError):
    """A release or budget the rules refuse; nothing was stored."""


class UnknownFigureError(ReleaseError):
    def __init__(self, figure: str) -> None:
        super().__init__(
            f"no figure {figure!r}: use estimates, histogram:KEY, groups:KEY:BY, mode:KEY"
        )
        self.figure = figure


class UnknownQuestionError(ReleaseError):
    def __init__(self, key: str) -> None:
        super().__init__(f"the survey has no question {key!r}")
        self.key = key


class NotPlainChoiceError(ReleaseError):
    """A histogram, a most-common answer or a grouping needs a plain choice question:
    a sensitive question's stored values are randomized reports, not answers to count."""

    def __init__(self, key: str) -> None:
        super().__init__(f"{key!r} is not a plain (sensitive: false) choice question")
        self.key = key


class NotSensitiveYesNoError(ReleaseError):
    def __init__(self, key: str) -> None:
        super().__init__(f"{key!r} is not a sensitive yes/no question")
        self.key = key


class NothingChosenError(ReleaseError):
    def __init__(self) -> None:
        super().__init__("choose at least one figure to publish")


class NoResponsesError(ReleaseError):
    def __init__(self, slug: str) -> None:
        super().__init__(f"{slug} has no responses yet: there is nothing to publish")
        self.slug = slug


class EpsilonError(ReleaseError):
    """An ε or budget that is not a decimal within its limits (``most``), or missing."""

    def __init__(self, text: str | None, most: Fraction) -> None:
        if text is None:
            problem = "noisy figures need the release's ε (--epsilon)"
        else:
            problem = f"ε cannot be {text!r}"
        super().__init__(
            f"{problem}: give a number above 0 and at most {decimal_text(most)}, "
            "with at most 3 decimals"
        )
        self.text = text
        self.most = most


class NoBudgetError(ReleaseError):
    def __init__(self, slug: str) -> None:
        super().__init__(
            f"{slug} has no central budget: noisy figures cost ε; set one first "
            f"(survey-app budget {slug} EPSILON)"
        )
        self.slug = slug


class OverBudgetError(ReleaseError):
    """The release (``needed``) or a new budget would not fit; ``ledger`` is unchanged."""

    def __init__(self, needed: Fraction, ledger: CentralLedger, message: str) -> None:
        super().__init__(message)
        self.needed = needed
        self.ledger = ledger


@dataclass(frozen=True)
class FigureChoice:
    """One figure the owner may tick: its id, kind and the questions it is about."""

    id: str
    kind: str  # estimates | histogram | groups | mode
    question: Question | None = None
    covariate: Question | None = None

    @property
    def free(self) -> bool:
        return self.kind == ESTIMATES


@dataclass(frozen=True)
class LedgerEntry:
    """One release: ``what`` names its figures by question key (for the terminal);
    ``figures`` are the same, for pages that name them in the reader's language."""

    id: int
    released_at: str
    what: str
    epsilon: Fraction
    cost: Fraction
    figures: tuple[FigureChoice, ...] = ()


@dataclass(frozen=True)
class CentralLedger:
    """A survey's central budget (None: never set) and its releases, oldest first."""

    budget: Fraction | None
    entries: tuple[LedgerEntry, ...]

    @property
    def spent(self) -> Fraction:
        return sum((entry.cost for entry in self.entries), Fraction(0))

    @property
    def remaining(self) -> Fraction | None:
        return None if self.budget is None else self.budget - self.spent


@dataclass(frozen=True)
class Published:
    """What ``publish`` stored: the release's row, what it cost, and whether its figures
    are an earlier release's shown again (the same snapshot)."""

    release_id: int
    epsilon: Fraction
    cost: Fraction
    republished: bool
    snapshot: dict[str, Any]


# --- numbers as text ---------------------------------------------------------------------


def decimal_text(value: Fraction) -> str:
    """An exact decimal for a Fraction that has one ("0.25"), else "p/q"."""
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def parse_epsilon(text: str | None, most: Fraction = MAX_RELEASE_EPSILON) -> Fraction:
    """A central ε or budget typed as a decimal ("0.5"): exact, above 0, at most ``most``."""
    cleaned = (text or "").strip()
    if not EPSILON_PATTERN.fullmatch(cleaned):
        raise EpsilonError(text, most)
    value = Fraction(cleaned)
    if not 0 < value <= most:
        raise EpsilonError(text, most)
    return value


# --- what can be published ----------------------------------------------------------------


def _plain_choice(question: Question) -> bool:
    return not question.sensitive and question.type == "choice"


def _sensitive_yes_no(question: Question) -> bool:
    return question.sensitive and question.type == "yes_no"


def offered_figures(survey: Survey) -> list[FigureChoice]:
    """Every figure the survey can publish, in the order the publish page lists them."""
    plain = [q for q in survey.questions if _plain_choice(q)]
    offered = [FigureChoice(ESTIMATES, ESTIMATES)]
    offered += [FigureChoice(f"histogram:{q.key}", "histogram", q) for q in plain]
    offered += [
        FigureChoice(f"groups:{q.key}:{c.key}", "groups", q, c)
        for q in survey.questions
        if _sensitive_yes_no(q)
        for c in plain
    ]
    offered += [FigureChoice(f"mode:{q.key}", "mode", q) for q in plain]
    return offered


def default_figures(survey: Survey) -> list[str]:
    """The command line's (and the publish page's preselected) figures: every sensitive
    estimate, plus the histogram of every plain choice question."""
    return [f.id for f in offered_figures(survey) if f.kind in (ESTIMATES, "histogram")]


def figure_choice(survey: Survey, figure: str) -> FigureChoice:
    """The figure an id names, or the precise reason it cannot be published."""
    kind, _, rest = figure.partition(":")
    keys = rest.split(":") if rest else []
    expected = {ESTIMATES: 0, "histogram": 1, "mode": 1, "groups": 2}
    if kind not in expected or len(keys) != expected[kind]:
        raise UnknownFigureError(figure)
    questions = {q.key: q for q in survey.questions}
    for key in keys:
        if key not in questions:
            raise UnknownQuestionError(key)
    if kind == ESTIMATES:
        return FigureChoice(ESTIMATES, ESTIMATES)
    if kind == "groups":
        question, covariate = questions[keys[0]], questions[keys[1]]
        if not _sensitive_yes_no(question):
            raise NotSensitiveYesNoError(question.key)
        if not _plain_choice(covariate):
            raise NotPlainChoiceError(covariate.key)
        return FigureChoice(figure, kind, question, covariate)
    question = questions[keys[0]]
    if not _plain_choice(question):
        raise NotPlainChoiceError(question.key)
    return FigureChoice(figure, kind, question)


def chosen_figures(survey: Survey, figures: Sequence[str]) -> list[FigureChoice]:
    """The figures named, once each, in the page's order; refused if none or any unknown."""
    named = {figure_choice(survey, figure).id for figure in figures}
    if not named:
        raise NothingChosenError()
    return [f for f in offered_figures(survey) if f.id in named]


def noisy_figure_count(figures: Sequence[FigureChoice]) -> int:
    return sum(not f.free for f in figures)


def describe_figures(figures: Sequence[FigureChoice]) -> str:
    """The ledger's "what": a short list by question key, e.g. "estimates; histogram of year"."""
    return "; ".join(_describe(f) for f in figures)


def _describe(figure: FigureChoice) -> str:
    key = figure.question.key if figure.question else ""
    if figure.kind == "histogram":
        return f"histogram of {key}"
    if figure.kind == "groups":
        return f"{key} by {figure.covariate.key if figure.covariate else ''}"
    if figure.kind == "mode":
        return f"most common {key}"
    return "sensitive estimates"


# --- the ledger -----------------------------------------------------------------------------


def central_ledger(db: sqlite_utils.Database, survey: Survey) -> CentralLedger:
    """The survey's budget and every release charged against it."""
    row = db.execute("SELECT central_budget FROM surveys WHERE id = ?", [survey.id]).fetchone()
    entries = tuple(
        LedgerEntry(
            r[0],
            r[1],
            r[2],
            Fraction(r[3]),
            Fraction(r[4]),
            tuple(figure_choice(survey, f["id"]) for f in json.loads(r[5])["figures"]),
        )
        for r in db.execute(
            "SELECT id, released_at, what, epsilon, cost, snapshot FROM releases "
            "WHERE survey_id = ? ORDER BY id",
            [survey.id],
        )
    )
    return CentralLedger(None if row[0] is None else Fraction(row[0]), entries)


def set_budget(db: sqlite_utils.Database, survey: Survey, budget: Fraction) -> CentralLedger:
    """Set the survey's central budget; it may not go below what releases already spent."""
    if not 0 < budget <= MAX_BUDGET:
        raise EpsilonError(decimal_text(budget), MAX_BUDGET)
    with write_transaction(db):
        ledger = central_ledger(db, survey)
        try:
            Ledger(ledger.budget or budget, _releases(db, survey)).with_budget(budget)
        except BudgetExceededError as err:
            raise OverBudgetError(budget, ledger, str(err)) from None
        db.execute(
            "UPDATE surveys SET central_budget = ? WHERE id = ?", [decimal_text(budget), survey.id]
        )
    return central_ledger(db, survey)


def _releases(db: sqlite_utils.Database, survey: Survey) -> tuple[Release, ...]:
    return tuple(
        Release(
            what=r[0],
            epsilon=Fraction(r[1]),
            data_fingerprint=r[2],
            choices=r[3],
            at=datetime.datetime.fromisoformat(r[4]),
            cost=Fraction(r[5]),
        )
        for r in db.execute(
            "SELECT what, epsilon, data_fingerprint, choices, released_at, cost FROM releases "
            "WHERE survey_id = ? ORDER BY id",
            [survey.id],
        )
    )


def data_fingerprint(db: sqlite_utils.Database, survey: Survey) -> str:
    """Names the data a release was computed from: the response count and the newest
    response's id. Responses are never changed or deleted once stored and ids only grow,
    so the same pair means the same rows; one more response gives another fingerprint."""
    count, newest = db.execute(
        "SELECT count(*), coalesce(max(id), 0) FROM responses WHERE survey_id = ?", [survey.id]
    ).fetchone()
    return fingerprint({"responses": count, "newest_response": newest})


def choices_fingerprint(figures: Sequence[FigureChoice]) -> str:
    return fingerprint(sorted(f.id for f in figures))


def release_cost(
    db: sqlite_utils.Database, survey: Survey, figures: Sequence[FigureChoice], epsilon: Fraction
) -> Fraction:
    """What publishing these figures now would cost: 0 for free figures only or for the
    same snapshot again, else ε. (The confirmation page shows it; ``publish`` decides.)"""
    if noisy_figure_count(figures) == 0:
        return Fraction(0)
    ledger = Ledger(Fraction(1), _releases(db, survey))
    earlier = ledger.previous(data_fingerprint(db, survey), choices_fingerprint(figures), epsilon)
    return Fraction(0) if earlier is not None else epsilon


# --- publishing ---------------------------------------------------------------------------


def publish(
    db: sqlite_utils.Database,
    survey: Survey,
    figures: Sequence[str],
    epsilon: Fraction | None,
    source: RandomSource = SECURE,
    now: datetime.datetime | None = None,
) -> Published:
    """Compute the chosen figures, charge the ledger and store the snapshot, all in one
    write transaction: either all of it is stored or nothing is.

    ``epsilon`` is the whole release's, split equally among its noisy figures; it is
    ignored (the release costs 0) when only free figures are chosen. ``source`` is the
    OS's secure source in production; tests inject a seeded one.
    """
    chosen = chosen_figures(survey, figures)
    noisy = noisy_figure_count(chosen)
    if noisy == 0:
        epsilon = Fraction(0)
    elif epsilon is None or not 0 < epsilon <= MAX_RELEASE_EPSILON:
        raise EpsilonError(None if epsilon is None else decimal_text(epsilon), MAX_RELEASE_EPSILON)
    keys = _count_keys(chosen)
    for key_set in keys:
        joint_counts(db, survey, key_set)  # outside the lock: the first scan can be long
    at = (now or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
    with write_transaction(db):
        # Under the write lock no response arrives: the fingerprint, the counts and the
        # tallies below describe the same rows.
        if not _response_count(db, survey):
            raise NoResponsesError(survey.slug)
        data = data_fingerprint(db, survey)
        choices = choices_fingerprint(chosen)
        what = describe_figures(chosen)
        earlier = _earlier_snapshot(db, survey, data, choices, epsilon)
        cost = Fraction(0) if earlier is not None else epsilon
        if cost > 0:
            _charge(db, survey, what, epsilon, data, choices, at)
        if earlier is not None:
            snapshot = earlier
        else:
            snapshot = _snapshot(db, survey, chosen, epsilon, noisy, at, source)
        cursor = db.execute(
            "INSERT INTO releases (survey_id, released_at, what, epsilon, cost, "
            "data_fingerprint, choices, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                survey.id,
                at.isoformat(),
                what,
                decimal_text(epsilon),
                decimal_text(cost),
                data,
                choices,
                json.dumps(snapshot, sort_keys=True),
            ],
        )
    return Published(int(cursor.lastrowid or 0), epsilon, cost, earlier is not None, snapshot)


def _response_count(db: sqlite_utils.Database, survey: Survey) -> int:
    row = db.execute("SELECT count(*) FROM responses WHERE survey_id = ?", [survey.id]).fetchone()
    return int(row[0])


def _count_keys(figures: Sequence[FigureChoice]) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = []
    for f in figures:
        if f.kind in ("histogram", "mode") and f.question is not None:
            keys.append((f.question.key,))
        elif f.kind == "groups" and f.question is not None and f.covariate is not None:
            keys.append((f.covariate.key, f.question.key))
    return keys


def _earlier_snapshot(
    db: sqlite_utils.Database, survey: Survey, data: str, choices: str, epsilon: Fraction
) -> dict[str, Any] | None:
    """The stored figures of the first release of this same snapshot, if there was one."""
    for row in db.execute(
        "SELECT epsilon, snapshot FROM releases WHERE survey_id = ? AND data_fingerprint = ? "
        "AND choices = ? ORDER BY id",
        [survey.id, data, choices],
    ):
        if Fraction(row[0]) == epsilon:
            stored: dict[str, Any] = json.loads(row[1])
            return stored
    return None


def _charge(
    db: sqlite_utils.Database,
    survey: Survey,
    what: str,
    epsilon: Fraction,
    data: str,
    choices: str,
    at: datetime.datetime,
) -> None:
    """Refuse, before anything is written, a release the budget cannot pay for."""
    ledger = central_ledger(db, survey)
    if ledger.budget is None:
        raise NoBudgetError(survey.slug)
    try:
        Ledger(ledger.budget, _releases(db, survey)).charge(what, epsilon, data, choices, at)
    except BudgetExceededError as err:
        raise OverBudgetError(epsilon, ledger, str(err)) from None


def _snapshot(
    db: sqlite_utils.Database,
    survey: Survey,
    figures: Sequence[FigureChoice],
    epsilon: Fraction,
    noisy: int,
    at: datetime.datetime,
    source: RandomSource,
) -> dict[str, Any]:
    share = epsilon / noisy if noisy else Fraction(0)
    return {
        "survey": {"slug": survey.slug, "title": survey.title},
        "released_at": at.isoformat(),
        "epsilon": decimal_text(epsilon),
        "noisy_figures": noisy,
        "figure_epsilon": decimal_text(share),
        "confidence": CONFIDENCE,
        "figures": [_figure(db, survey, f, share, source) for f in figures],
    }


def _figure(
    db: sqlite_utils.Database,
    survey: Survey,
    figure: FigureChoice,
    share: Fraction,
    source: RandomSource,
) -> dict[str, Any]:
    if figure.kind == ESTIMATES:
        return _estimates_figure(db, survey)
    question = figure.question
    assert question is not None
    noisy = {
        "id": figure.id,
        "kind": figure.kind,
        "question": question.key,
        "text": question.text,
        "epsilon": decimal_text(share),
        "epsilon_value": float(share),
        "sensitivity": SENSITIVITY[
            {"histogram": "histogram", "mode": "noisy_max", "groups": "group_tallies"}[figure.kind]
        ],
    }
    if figure.kind == "groups":
        assert figure.covariate is not None
        return noisy | _groups_figure(db, survey, question, figure.covariate, share, source)
    counts = plain_counts(db, survey, question)
    if figure.kind == "histogram":
        released = noisy_counts(counts, share, SENSITIVITY["histogram"], source)
        return noisy | {
            "cells": [
                {"label": label, "noisy_count": value}
                for label, value in zip(question.options, released.values, strict=True)
            ],
            "accuracy": released.accuracy,
            "joint_accuracy": released.joint_accuracy,
        }
    winner = report_noisy_max(counts, share, source)
    # If every one of the k noisy counts is within ±m of its truth (probability ≥ 95%,
    # the union bound), the winner's true count is within 2m of the true largest.
    joint = accuracy_bound(noise_gamma(share, SENSITIVITY["noisy_max"]), len(counts))
    return noisy | {
        "winner": question.options[winner],
        "options": list(question.options),
        "joint_accuracy": joint,
        "gap": 2 * joint,
    }


def plain_counts(db: sqlite_utils.Database, survey: Survey, question: Question) -> list[int]:
    """How many responses chose each option of a plain choice question, zeros included
    (a skip is no option's count)."""
    counts = joint_counts(db, survey, [question.key])
    return [counts.get((index,), 0) for index in range(len(question.options))]


def group_counts(
    db: sqlite_utils.Database, survey: Survey, question: Question, covariate: Question
) -> dict[str, GroupCount]:
    """Per option of the covariate, every one of them (which groups exist must not depend
    on the data): (reported yes, respondents who answered the yes/no question)."""
    counts = joint_counts(db, survey, [covariate.key, question.key])
    result = {}
    for index, option in enumerate(covariate.options):
        yes = counts.get((index, 1), 0)
        result[option] = GroupCount(reported=yes, n=yes + counts.get((index, 0), 0))
    return result


def _groups_figure(
    db: sqlite_utils.Database,
    survey: Survey,
    question: Question,
    covariate: Question,
    share: Fraction,
    source: RandomSource,
) -> dict[str, Any]:
    # A yes/no question's mechanism reports yes with p_true or p_false (figure_choice
    # admits only those): a ProportionMechanism.
    mechanism = cast(ProportionMechanism, question.mechanism)
    released = release_group_estimates(
        group_counts(db, survey, question, covariate),
        mechanism,
        share,
        CONFIDENCE,
        MIN_GROUP_SIZE,
        source,
    )
    return {
        "covariate": covariate.key,
        "covariate_text": covariate.text,
        "min_size": MIN_GROUP_SIZE,
        "accuracy": released.accuracy,
        "joint_accuracy": released.joint_accuracy,
        "groups": [
            {
                "label": g.group,
                "noisy_n": g.noisy_n,
                "noisy_reported": g.noisy_reported,
                "estimate": None
                if g.estimate is None
                else {"point": g.estimate.point, "low": g.estimate.low, "high": g.estimate.high},
            }
            for g in released.groups
        ],
    }


def _estimates_figure(db: sqlite_utils.Database, survey: Survey) -> dict[str, Any]:
    """The sensitive questions' estimates, from the randomized reports alone (free).

    Plain questions are left out: their "estimates" would be exact counts of plain
    answers, which only noisy figures may release.
    """
    questions = []
    for item in survey_estimates(db, survey, CONFIDENCE):
        if not item.question.sensitive:
            continue
        rows: list[dict[str, Any]] = []
        if item.mean is not None:
            rows.append(
                {
                    "label": None,
                    "point": item.mean.point,
                    "low": item.mean.low,
                    "high": item.mean.high,
                }
            )
        for category in item.categories:
            if category.estimate is not None:
                rows.append(
                    {
                        "label": None if item.question.type == "yes_no" else category.category,
                        "point": category.estimate.point,
                        "low": category.estimate.low,
                        "high": category.estimate.high,
                    }
                )
        questions.append(
            {
                "question": item.question.key,
                "text": item.question.text,
                "type": item.question.type,
                "min": item.question.min,
                "max": item.question.max,
                "rows": rows,
            }
        )
    return {"id": ESTIMATES, "kind": ESTIMATES, "epsilon": "0", "questions": questions}


def latest_snapshot(db: sqlite_utils.Database, slug: str) -> dict[str, Any] | None:
    """The figures the public page shows: those of the survey's latest release."""
    row = db.execute(
        "SELECT r.snapshot FROM releases r JOIN surveys s ON s.id = r.survey_id "
        "WHERE s.slug = ? ORDER BY r.id DESC LIMIT 1",
        [slug],
    ).fetchone()
    if row is None:
        return None
    snapshot: dict[str, Any] = json.loads(row[0])
    return snapshot
