"""Public releases under central differential privacy: the figures, the budget, the ledger.

A release is a frozen snapshot of figures chosen by a survey's owner, computed once at
publishing and stored; the public page (``public.py``) shows the stored numbers again and
never draws fresh noise. The page promises central differential privacy under adding or
removing one person, so every figure depends on who took part only through noisy counts
(``privacy.central``):

- the sensitive questions' estimates, from each question's noisy (n, report counts): the
  coins hide how a person answered, not *that* they answered, and an interval's width
  gives n away (``release_sensitive_estimates``);
- a plain question's histogram (Δ = 1), a sensitive yes/no question by the groups of a
  plain covariate (Δ = 2, groups shown on their noisy sizes), the most common answer of a
  plain question by Report Noisy Max (Δ = 1, only the winner).

The release's ε is split equally among its noisy figures, ε/k each: by basic composition
the k figures together are ε-DP, and that ε is charged to the survey's central budget.
Every release costs its ε, even on unchanged data: re-showing old figures when nothing
changed would publish *that* nothing changed. The one exception to the promise is the
owner's explicit choice of the estimates from exact counts (``exact-estimates``): free in
ε, recorded in the snapshot, and named on the public page as not covered.

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
from typing import Any, ClassVar, cast

import sqlite_utils

from survey_app.domain.answers import from_stored
from survey_app.domain.question_estimates import survey_estimates
from survey_app.privacy import SECURE, Estimate, MeanEstimate, RandomSource
from survey_app.privacy.central import (
    SENSITIVITY,
    BudgetExceededError,
    Ledger,
    Release,
    accuracy_bound,
    fingerprint,
    noise_gamma,
    noisy_counts,
    release_group_estimates,
    release_sensitive_estimates,
    report_noisy_max,
    tally_reports,
)
from survey_app.privacy.groups import MIN_GROUP_SIZE, GroupCount
from survey_app.privacy.mechanism import ProportionMechanism
from survey_app.storage.crosstabs import joint_counts
from survey_app.storage.database import write_transaction
from survey_app.storage.surveys import Question, Survey

ESTIMATES = "estimates"
EXACT_ESTIMATES = "exact-estimates"
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
            f"no figure {figure!r}: use estimates, exact-estimates, histogram:KEY, "
            "groups:KEY:BY, mode:KEY"
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


class BothEstimatesError(ReleaseError):
    """The estimates from noisy and from exact counts at once: the exact ones give away
    what the noise hides, and the noisy ones would only spend ε for nothing."""

    def __init__(self) -> None:
        super().__init__("choose estimates or exact-estimates, not both")


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
    kind: str  # estimates | exact-estimates | histogram | groups | mode
    question: Question | None = None
    covariate: Question | None = None

    @property
    def free(self) -> bool:
        """Computed from exact counts, costing no ε and outside the central guarantee."""
        return self.kind == EXACT_ESTIMATES


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
    kind: ClassVar[str] = "release"

    @property
    def at(self) -> str:
        return self.released_at

    @property
    def exact(self) -> bool:
        """Whether it showed figures from exact counts, which the central ε does not cover."""
        return any(figure.free for figure in self.figures)


@dataclass(frozen=True)
class BudgetChange:
    """The owner set the central budget to ``budget`` at ``at`` (``previous``: None if it
    was the first), after the survey's first ``releases_before`` releases. Public pages
    list every change: a budget raised after the fact is no cap a reader can count on, so
    they see each raise."""

    at: str
    budget: Fraction
    previous: Fraction | None
    releases_before: int
    kind: ClassVar[str] = "budget"


@dataclass(frozen=True)
class CentralLedger:
    """A survey's central budget (None: never set), its releases and its budget changes,
    oldest first."""

    budget: Fraction | None
    entries: tuple[LedgerEntry, ...]
    budget_changes: tuple[BudgetChange, ...] = ()

    @property
    def spent(self) -> Fraction:
        return sum((entry.cost for entry in self.entries), Fraction(0))

    @property
    def remaining(self) -> Fraction | None:
        return None if self.budget is None else self.budget - self.spent

    @property
    def history(self) -> tuple[LedgerEntry | BudgetChange, ...]:
        """Releases and budget changes in the order they happened (times are to the
        second, so each change says how many releases came before it)."""
        events: list[LedgerEntry | BudgetChange] = []
        for count, entry in enumerate((*self.entries, None)):
            events += [c for c in self.budget_changes if c.releases_before == count]
            if entry is not None:
                events.append(entry)
        return tuple(events)


@dataclass(frozen=True)
class Published:
    """What ``publish`` stored: the release's row, what it cost and its figures."""

    release_id: int
    epsilon: Fraction
    cost: Fraction
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
    offered = [FigureChoice(ESTIMATES, ESTIMATES), FigureChoice(EXACT_ESTIMATES, EXACT_ESTIMATES)]
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
    estimate from noisy counts, plus the histogram of every plain choice question."""
    return [f.id for f in offered_figures(survey) if f.kind in (ESTIMATES, "histogram")]


def figure_choice(survey: Survey, figure: str) -> FigureChoice:
    """The figure an id names, or the precise reason it cannot be published."""
    kind, _, rest = figure.partition(":")
    keys = rest.split(":") if rest else []
    expected = {ESTIMATES: 0, EXACT_ESTIMATES: 0, "histogram": 1, "mode": 1, "groups": 2}
    if kind not in expected or len(keys) != expected[kind]:
        raise UnknownFigureError(figure)
    questions = {q.key: q for q in survey.questions}
    for key in keys:
        if key not in questions:
            raise UnknownQuestionError(key)
    if kind in (ESTIMATES, EXACT_ESTIMATES):
        return FigureChoice(kind, kind)
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
    """The figures named, once each, in the page's order; refused if none or any unknown,
    or if both kinds of estimates are named."""
    named = {figure_choice(survey, figure).id for figure in figures}
    if not named:
        raise NothingChosenError()
    if {ESTIMATES, EXACT_ESTIMATES} <= named:
        raise BothEstimatesError()
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
    if figure.kind == EXACT_ESTIMATES:
        return "exact sensitive estimates"
    return "sensitive estimates"


# --- the ledger -----------------------------------------------------------------------------


def central_ledger(db: sqlite_utils.Database, survey: Survey) -> CentralLedger:
    """The survey's budget, every release charged against it and every budget change."""
    row = db.execute("SELECT central_budget FROM surveys WHERE id = ?", [survey.id]).fetchone()
    changes = tuple(
        BudgetChange(r[0], Fraction(r[1]), None if r[2] is None else Fraction(r[2]), r[3])
        for r in db.execute(
            "SELECT changed_at, budget, previous, releases_before FROM budget_changes "
            "WHERE survey_id = ? ORDER BY id",
            [survey.id],
        )
    )
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
    return CentralLedger(None if row[0] is None else Fraction(row[0]), entries, changes)


def set_budget(
    db: sqlite_utils.Database,
    survey: Survey,
    budget: Fraction,
    now: datetime.datetime | None = None,
) -> CentralLedger:
    """Set the survey's central budget; it may not go below what releases already spent.
    A change is recorded with its time (``budget_changes``), for the public page."""
    if not 0 < budget <= MAX_BUDGET:
        raise EpsilonError(decimal_text(budget), MAX_BUDGET)
    at = (now or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
    with write_transaction(db):
        ledger = central_ledger(db, survey)
        try:
            Ledger(ledger.budget or budget, _releases(db, survey)).with_budget(budget)
        except BudgetExceededError as err:
            raise OverBudgetError(budget, ledger, str(err)) from None
        if budget != ledger.budget:
            db.execute(
                "UPDATE surveys SET central_budget = ? WHERE id = ?",
                [decimal_text(budget), survey.id],
            )
            db.execute(
                "INSERT INTO budget_changes (survey_id, changed_at, budget, previous, "
                "releases_before) VALUES (?, ?, ?, ?, ?)",
                [
                    survey.id,
                    at.isoformat(),
                    decimal_text(budget),
                    None if ledger.budget is None else decimal_text(ledger.budget),
                    len(ledger.entries),
                ],
            )
    return central_ledger(db, survey)


def _releases(db: sqlite_utils.Database, survey: Survey) -> tuple[Release, ...]:
    return tuple(
        Release(
            what=r[0],
            epsilon=Fraction(r[1]),
            at=datetime.datetime.fromisoformat(r[2]),
            cost=Fraction(r[3]),
        )
        for r in db.execute(
            "SELECT what, epsilon, released_at, cost FROM releases WHERE survey_id = ? ORDER BY id",
            [survey.id],
        )
    )


def data_fingerprint(db: sqlite_utils.Database, survey: Survey) -> str:
    """Names the data a release was computed from, for the record (it decides nothing):
    the response count and the newest response's id. Responses are never changed or
    deleted once stored and ids only grow, so the same pair means the same rows."""
    count, newest = db.execute(
        "SELECT count(*), coalesce(max(id), 0) FROM responses WHERE survey_id = ?", [survey.id]
    ).fetchone()
    return fingerprint({"responses": count, "newest_response": newest})


def choices_fingerprint(figures: Sequence[FigureChoice]) -> str:
    return fingerprint(sorted(f.id for f in figures))


def release_cost(figures: Sequence[FigureChoice], epsilon: Fraction) -> Fraction:
    """What publishing these figures costs: ε, or 0 for the exact estimates alone. It
    never depends on the data (see ``Ledger``)."""
    return epsilon if noisy_figure_count(figures) else Fraction(0)


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
    ignored (the release costs 0) when only the exact estimates are chosen. ``source`` is
    the OS's secure source in production; tests inject a seeded one. Nothing here
    decides on the data, not even whether there are responses: a noisy release of none
    is noise, and a refusal would tell that nobody has answered yet. Only the exact
    estimates, which tell that anyway, are refused without responses.
    """
    chosen = chosen_figures(survey, figures)
    noisy = noisy_figure_count(chosen)
    if noisy == 0:
        epsilon = Fraction(0)
    elif epsilon is None or not 0 < epsilon <= MAX_RELEASE_EPSILON:
        raise EpsilonError(None if epsilon is None else decimal_text(epsilon), MAX_RELEASE_EPSILON)
    keys = _count_keys(survey, chosen)
    for key_set in keys:
        joint_counts(db, survey, key_set)  # outside the lock: the first scan can be long
    at = (now or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
    with write_transaction(db):
        # Under the write lock no response arrives: the fingerprint, the counts and the
        # tallies below describe the same rows.
        if any(f.free for f in chosen) and not _response_count(db, survey):
            raise NoResponsesError(survey.slug)
        what = describe_figures(chosen)
        if epsilon > 0:
            _charge(db, survey, what, epsilon, at)
        snapshot = _snapshot(db, survey, chosen, epsilon, noisy, at, source)
        cursor = db.execute(
            "INSERT INTO releases (survey_id, released_at, what, epsilon, cost, "
            "data_fingerprint, choices, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                survey.id,
                at.isoformat(),
                what,
                decimal_text(epsilon),
                decimal_text(epsilon),
                data_fingerprint(db, survey),
                choices_fingerprint(chosen),
                json.dumps(snapshot, sort_keys=True),
            ],
        )
    return Published(int(cursor.lastrowid or 0), epsilon, epsilon, snapshot)


def _response_count(db: sqlite_utils.Database, survey: Survey) -> int:
    row = db.execute("SELECT count(*) FROM responses WHERE survey_id = ?", [survey.id]).fetchone()
    return int(row[0])


def _count_keys(survey: Survey, figures: Sequence[FigureChoice]) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = []
    for f in figures:
        if f.kind == ESTIMATES:
            keys += [(q.key,) for q in survey.questions if q.sensitive]
        elif f.kind in ("histogram", "mode") and f.question is not None:
            keys.append((f.question.key,))
        elif f.kind == "groups" and f.question is not None and f.covariate is not None:
            keys.append((f.covariate.key, f.question.key))
    return keys


def _charge(
    db: sqlite_utils.Database,
    survey: Survey,
    what: str,
    epsilon: Fraction,
    at: datetime.datetime,
) -> None:
    """Refuse, before anything is written, a release the budget cannot pay for."""
    ledger = central_ledger(db, survey)
    if ledger.budget is None:
        raise NoBudgetError(survey.slug)
    try:
        Ledger(ledger.budget, _releases(db, survey)).charge(what, epsilon, at)
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
        "exact_figures": [f.id for f in figures if f.free],
        "figures": [_figure(db, survey, f, share, source) for f in figures],
    }


def _figure(
    db: sqlite_utils.Database,
    survey: Survey,
    figure: FigureChoice,
    share: Fraction,
    source: RandomSource,
) -> dict[str, Any]:
    if figure.kind == EXACT_ESTIMATES:
        return _exact_estimates_figure(db, survey)
    if figure.kind == ESTIMATES:
        return _estimates_figure(db, survey, share, source)
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


def _estimates_figure(
    db: sqlite_utils.Database, survey: Survey, share: Fraction, source: RandomSource
) -> dict[str, Any]:
    """The sensitive questions' estimates from noisy counts, the figure's ε split equally
    among them (``release_sensitive_estimates`` states the accounting).

    Only noisy values and what is computed from them alone go in: no exact n, no exact
    count, no interval whose width follows the exact n. Plain questions are left out:
    their histograms are figures of their own.
    """
    questions = [q for q in survey.questions if q.sensitive]
    released = release_sensitive_estimates(
        [(q.mechanism, tally_reports(q.mechanism, _reports(db, survey, q))) for q in questions],
        share,
        CONFIDENCE,
        source,
    )
    return {
        "id": ESTIMATES,
        "kind": ESTIMATES,
        "epsilon": decimal_text(share),
        "epsilon_value": float(share),
        "questions": [
            _question_fields(question)
            | {
                "epsilon": decimal_text(noisy.epsilon),
                "count_gamma": str(noisy.count_gamma),
                "report_gamma": str(noisy.report_gamma),
                "report_sensitivity": noisy.report_sensitivity,
                "count_weight": noisy.count_weight,
                "noisy_n": noisy.noisy_n,
                "noisy_reports": list(noisy.noisy_reports),
                "n_accuracy": noisy.n_accuracy,
                "report_accuracy": noisy.report_accuracy,
                "rows": _rows(question, noisy.estimates),
            }
            for question, noisy in zip(questions, released, strict=True)
        ],
    }


def _reports(db: sqlite_utils.Database, survey: Survey, question: Question) -> dict[Any, int]:
    """How many times each report to a question was stored (skips left out)."""
    counts = joint_counts(db, survey, [question.key])
    return {
        from_stored(question, stored): times
        for (stored,), times in counts.items()
        if stored is not None
    }


def _exact_estimates_figure(db: sqlite_utils.Database, survey: Survey) -> dict[str, Any]:
    """The sensitive questions' estimates from the exact counts, as on the dashboard.

    Free in ε, but not private about who took part: each interval's width, and any two
    releases' difference, give the exact number of answers away. Published only when the
    owner chooses it; the public page says so. Plain questions are left out.
    """
    questions = []
    for item in survey_estimates(db, survey, CONFIDENCE):
        if item.question.sensitive:
            if item.question.type == "number":
                estimates: list[Estimate | MeanEstimate | None] = [item.mean]
            else:
                estimates = [category.estimate for category in item.categories]
            questions.append(
                _question_fields(item.question) | {"rows": _rows(item.question, estimates)}
            )
    return {"id": EXACT_ESTIMATES, "kind": EXACT_ESTIMATES, "epsilon": "0", "questions": questions}


def _question_fields(question: Question) -> dict[str, Any]:
    return {
        "question": question.key,
        "text": question.text,
        "type": question.type,
        "min": question.min,
        "max": question.max,
    }


def _rows(
    question: Question, estimates: Sequence[Estimate | MeanEstimate | None]
) -> list[dict[str, Any]]:
    """One row per option of a choice, one for a yes/no share or a mean; none without an
    estimate (no answers, or too few by the noisy count)."""
    labels: Sequence[str | None] = question.options if question.type == "choice" else [None]
    if not estimates:
        return []
    return [
        {"label": label, "point": e.point, "low": e.low, "high": e.high}
        for label, e in zip(labels, estimates, strict=True)
        if e is not None
    ]


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
