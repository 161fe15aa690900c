"""A release's figures, computed once when it is published: the snapshot it stores and the
public page shows again, never drawing fresh noise.

The page promises central differential privacy under adding or removing one person, so
every figure depends on who took part only through noisy counts (``privacy.central``):

- the sensitive questions' estimates, from each question's noisy (n, report counts): the
  coins hide how a person answered, not *that* they answered, and an interval's width
  gives n away (``release_sensitive_estimates``);
- a plain question's histogram (Δ = 1), a sensitive yes/no question by the groups of a
  plain covariate (Δ = 2, groups shown on their noisy sizes), the most common answer of a
  plain question by Report Noisy Max (Δ = 1, only the winner).

The one exception is the owner's explicit choice of the estimates from exact counts
(``exact-estimates``): free in ε, recorded in the snapshot, and named on the public page
as not covered. Every count goes through ``crosstabs.joint_counts``.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, cast

from survey_app.domain.answers import from_stored
from survey_app.domain.figure_kinds import FigureKind
from survey_app.domain.question_estimates import survey_estimates
from survey_app.domain.release_figures import FigureChoice
from survey_app.privacy import (
    SECURE,
    Estimate,
    MeanEstimate,
    ProportionMechanism,
    QuestionType,
    RandomSource,
)
from survey_app.privacy.central import (
    SENSITIVITY,
    accuracy_bound,
    decimal_text,
    noise_gamma,
    noisy_counts,
    release_group_estimates,
    release_sensitive_estimates,
    report_noisy_max,
    tally_reports,
)
from survey_app.privacy.groups import MIN_GROUP_SIZE, GroupCount
from survey_app.storage.backends import Database
from survey_app.storage.crosstabs import joint_counts
from survey_app.storage.surveys import Question, Survey

CONFIDENCE = 0.95
# How far one person moves each noisy figure's counts in all (ℓ1).
_SENSITIVITY = {
    FigureKind.HISTOGRAM: SENSITIVITY["histogram"],
    FigureKind.MODE: SENSITIVITY["noisy_max"],
    FigureKind.GROUPS: SENSITIVITY["group_tallies"],
}


def prepare_counts(db: Database, survey: Survey, figures: Sequence[FigureChoice]) -> None:
    """Scan the counts these figures need before the write lock is taken: the first scan of
    a survey can be long, and under the lock it would hold up every response."""
    for keys in _count_keys(survey, figures):
        joint_counts(db, survey, keys)


def _count_keys(survey: Survey, figures: Sequence[FigureChoice]) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = []
    for f in figures:
        if f.kind is FigureKind.ESTIMATES:
            keys += [(q.key,) for q in survey.questions if q.sensitive]
        elif f.kind.of_a_plain_choice and f.question is not None:
            keys.append((f.question.key,))
        elif f.kind.by_groups and f.question is not None and f.covariate is not None:
            keys.append((f.covariate.key, f.question.key))
    return keys


def release_snapshot(
    db: Database,
    survey: Survey,
    figures: Sequence[FigureChoice],
    epsilon: Fraction,
    at: datetime.datetime,
    source: RandomSource = SECURE,
) -> dict[str, Any]:
    """The chosen figures computed now, ``epsilon`` split equally among the noisy ones:
    what the release stores and the public page shows. Call it under the write lock,
    so that every count describes the same rows."""
    noisy = sum(not f.free for f in figures)
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
    db: Database,
    survey: Survey,
    figure: FigureChoice,
    share: Fraction,
    source: RandomSource,
) -> dict[str, Any]:
    if figure.kind is FigureKind.EXACT_ESTIMATES:
        return _exact_estimates_figure(db, survey)
    if figure.kind is FigureKind.ESTIMATES:
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
        "sensitivity": _SENSITIVITY[figure.kind],
    }
    if figure.kind.by_groups:
        assert figure.covariate is not None
        return noisy | _groups_figure(db, survey, question, figure.covariate, share, source)
    counts = plain_counts(db, survey, question)
    if figure.kind is FigureKind.HISTOGRAM:
        released = noisy_counts(counts, share, _SENSITIVITY[figure.kind], source)
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


def plain_counts(db: Database, survey: Survey, question: Question) -> list[int]:
    """How many responses chose each option of a plain choice question, zeros included
    (a skip is no option's count)."""
    counts = joint_counts(db, survey, [question.key])
    return [counts.get((index,), 0) for index in range(len(question.options))]


def group_counts(
    db: Database, survey: Survey, question: Question, covariate: Question
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
    db: Database,
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
    db: Database, survey: Survey, share: Fraction, source: RandomSource
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
        "id": str(FigureKind.ESTIMATES),
        "kind": FigureKind.ESTIMATES,
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


def _reports(db: Database, survey: Survey, question: Question) -> dict[Any, int]:
    """How many times each report to a question was stored (skips left out)."""
    counts = joint_counts(db, survey, [question.key])
    return {
        from_stored(question, stored): times
        for (stored,), times in counts.items()
        if stored is not None
    }


def _exact_estimates_figure(db: Database, survey: Survey) -> dict[str, Any]:
    """The sensitive questions' estimates from the exact counts, as on the dashboard.

    Free in ε, but not private about who took part: each interval's width, and any two
    releases' difference, give the exact number of answers away. Published only when the
    owner chooses it; the public page says so. Plain questions are left out.
    """
    questions = []
    for item in survey_estimates(db, survey, CONFIDENCE):
        if item.question.sensitive:
            if item.question.type.estimates_mean:
                estimates: list[Estimate | MeanEstimate | None] = [item.mean]
            else:
                estimates = [category.estimate for category in item.categories]
            questions.append(
                _question_fields(item.question) | {"rows": _rows(item.question, estimates)}
            )
    kind = FigureKind.EXACT_ESTIMATES
    return {"id": str(kind), "kind": kind, "epsilon": "0", "questions": questions}


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
    labels: Sequence[str | None] = question.options if question.type.has_options else [None]
    if not estimates:
        return []
    return [
        {"label": label, "point": e.point, "low": e.low, "high": e.high}
        for label, e in zip(labels, estimates, strict=True)
        if e is not None
    ]


def read_snapshot(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A snapshot read back from its JSON as ``release_snapshot`` made it: each figure's
    ``kind`` a ``FigureKind`` and each question's ``type`` a ``QuestionType`` again (the
    JSON holds their plain strings), so the public page asks them what they are."""
    return {**stored, "figures": [_read_figure(figure) for figure in stored["figures"]]}


def _read_figure(figure: Mapping[str, Any]) -> dict[str, Any]:
    read = {**figure, "kind": FigureKind(figure["kind"])}
    if "questions" in figure:
        read["questions"] = [
            {**question, "type": QuestionType(question["type"])} for question in figure["questions"]
        ]
    return read
