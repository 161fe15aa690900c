"""Which figures a survey can publish, how an owner names them, and how a release's are
named back.

A figure id is what the publish page's checkboxes and ``survey-app publish --figure``
send: ``estimates`` (every sensitive question's estimates, from noisy counts),
``exact-estimates`` (the same from exact counts: free, and outside the central
guarantee), ``histogram:KEY`` and ``mode:KEY`` (a plain choice question's noisy counts, or
its most common answer by Report Noisy Max), ``groups:KEY:BY`` (a sensitive yes/no
question by the options of a plain choice covariate). A refused id raises the precise
reason (``release_errors``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from survey_app.domain.figure_kinds import FigureKind
from survey_app.domain.release_errors import (
    BothEstimatesError,
    NothingChosenError,
    NotPlainChoiceError,
    NotSensitiveYesNoError,
    UnknownFigureError,
    UnknownQuestionError,
)
from survey_app.privacy.central import Release
from survey_app.storage.surveys import Question, Survey


@dataclass(frozen=True)
class FigureChoice:
    """One figure the owner may tick: its id, kind and the questions it is about."""

    id: str
    kind: FigureKind
    question: Question | None = None
    covariate: Question | None = None

    @property
    def free(self) -> bool:
        """Computed from exact counts, costing no ε and outside the central guarantee."""
        return self.kind.free


def _plain_choice(question: Question) -> bool:
    return not question.sensitive and question.type.has_options


def _sensitive_yes_no(question: Question) -> bool:
    return question.sensitive and question.type.is_yes_no


def offered_figures(survey: Survey) -> list[FigureChoice]:
    """Every figure the survey can publish, in the order the publish page lists them."""
    plain = [q for q in survey.questions if _plain_choice(q)]
    estimates = (FigureKind.ESTIMATES, FigureKind.EXACT_ESTIMATES)
    offered = [FigureChoice(str(kind), kind) for kind in estimates]
    offered += [FigureChoice(_id(FigureKind.HISTOGRAM, q), FigureKind.HISTOGRAM, q) for q in plain]
    offered += [
        FigureChoice(_id(FigureKind.GROUPS, q, c), FigureKind.GROUPS, q, c)
        for q in survey.questions
        if _sensitive_yes_no(q)
        for c in plain
    ]
    offered += [FigureChoice(_id(FigureKind.MODE, q), FigureKind.MODE, q) for q in plain]
    return offered


def _id(kind: FigureKind, *questions: Question) -> str:
    """A figure's id: its kind, then the keys of the questions it is about."""
    return ":".join((kind, *(q.key for q in questions)))


def default_figures(survey: Survey) -> list[str]:
    """The command line's (and the publish page's preselected) figures: every sensitive
    estimate from noisy counts, plus the histogram of every plain choice question."""
    return [f.id for f in offered_figures(survey) if f.kind.preselected]


def figure_choice(survey: Survey, figure: str) -> FigureChoice:
    """The figure an id names, or the precise reason it cannot be published."""
    kind_text, _, rest = figure.partition(":")
    keys = rest.split(":") if rest else []
    try:
        kind = FigureKind(kind_text)
    except ValueError:
        raise UnknownFigureError(figure) from None
    if len(keys) != kind.key_count:
        raise UnknownFigureError(figure)
    questions = {q.key: q for q in survey.questions}
    for key in keys:
        if key not in questions:
            raise UnknownQuestionError(key)
    if kind.is_estimates:
        return FigureChoice(figure, kind)
    if kind.by_groups:
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


def chosen_figures(survey: Survey, figures: Sequence[str]) -> tuple[FigureChoice, ...]:
    """The figures named, once each, in the page's order; refused if none or any unknown,
    or if both kinds of estimates are named."""
    named = {figure_choice(survey, figure).id for figure in figures}
    if not named:
        raise NothingChosenError()
    if {FigureKind.ESTIMATES, FigureKind.EXACT_ESTIMATES} <= named:
        raise BothEstimatesError()
    return tuple(f for f in offered_figures(survey) if f.id in named)


def released_figures(survey: Survey, release: Release) -> tuple[FigureChoice, ...]:
    """The figures a stored release showed, for pages that name them in the reader's
    language (``templates/research/_figure_name.html``)."""
    return tuple(figure_choice(survey, figure) for figure in release.figures)


def describe_figures(figures: Sequence[FigureChoice]) -> str:
    """The ledger's "what": a short list by question key, e.g.
    "sensitive estimates; histogram of year"."""
    return "; ".join(_describe(f) for f in figures)


def _describe(figure: FigureChoice) -> str:
    key = figure.question.key if figure.question else ""
    if figure.kind.by_groups:
        return f"{key} by {figure.covariate.key if figure.covariate else ''}"
    if figure.kind.only_the_winner:
        return f"most common {key}"
    if figure.kind.of_a_plain_choice:
        return f"histogram of {key}"
    if figure.kind.free:
        return "exact sensitive estimates"
    return "sensitive estimates"
