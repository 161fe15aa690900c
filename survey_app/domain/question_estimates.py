"""Per-question estimates from the running tallies: O(questions), never O(responses).

Every question type reduces to two shapes. A yes/no answer and each option of a choice
are *shares*: the count of reports in that category is Binomial(n, p_false + (p_true -
p_false)·π), so one estimator with the mechanism's two probabilities serves them all
(a plain question has p_true = 1, p_false = 0). A number is a *mean* of the reports
mapped back to the answer's scale. A rating scale is a choice, and also has a mean score
(``scale_means``) from the same counts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

from survey_app.privacy import (
    DEFAULT_INTERVAL_METHOD,
    Estimate,
    MeanEstimate,
    NumericMechanism,
    estimate_choice,
    estimate_proportion,
)
from survey_app.privacy.means import estimate_number_mean
from survey_app.privacy.mechanisms import SampledOption
from survey_app.privacy.scale_means import estimate_mean_score
from survey_app.privacy.ticked_shares import estimate_ticked
from survey_app.storage.backends import Database
from survey_app.storage.surveys import Question, Survey
from survey_app.storage.tallies import NOT_APPLICABLE_CELL, Cells, read_tallies


@dataclass(frozen=True)
class CategoryEstimate:
    """One share: "yes" of a yes/no question, or one option of a choice question.

    ``simultaneous`` holds for every option of the question at once (the union bound);
    for a yes/no question it is the same as ``estimate``. ``display`` is the point shown
    in plots: for a choice, the estimates projected onto the simplex (they sum to 1).
    """

    category: str
    reported: int
    estimate: Estimate | None
    simultaneous: Estimate | None
    display: float | None
    #: Tick all that apply: n_j, the reports about this option (None: every report).
    about: int | None = None


@dataclass(frozen=True)
class QuestionEstimate:
    question: Question
    n: int
    categories: tuple[CategoryEstimate, ...] = ()
    #: A number's mean answer, a scale's mean score; None without responses.
    mean: MeanEstimate | None = None
    #: Responses the question did not apply to (its ``show_if`` failed): outside ``n``,
    #: like skips, but counted apart, since the estimate describes the others only.
    not_applicable: int = 0

    def reported_rate(self, category: CategoryEstimate) -> float | None:
        among = self.n if category.about is None else category.about
        return category.reported / among if among else None


def survey_estimates(
    db: Database,
    survey: Survey,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> list[QuestionEstimate]:
    tallies = read_tallies(db, survey)
    return [
        dataclasses.replace(
            question_estimate(question, tallies[question.id], confidence, method),
            not_applicable=tallies[question.id].get(NOT_APPLICABLE_CELL, 0),
        )
        for question in survey.questions
    ]


def question_estimate(
    question: Question, cells: Cells, confidence: float, method: str
) -> QuestionEstimate:
    n = cells.get("n", 0)
    mechanism = question.mechanism
    if question.type.estimates_mean:
        mean = estimate_number_mean(
            cast(NumericMechanism, mechanism),
            n,
            cells.get("sum", 0),
            cells.get("sum_squares", 0),
            confidence,
        )
        return QuestionEstimate(question, n, mean=mean)
    p_true, p_false = mechanism.p_true, mechanism.p_false  # type: ignore[attr-defined]
    if question.type.is_yes_no:
        yes = cells.get("yes", 0)
        estimate = estimate_proportion(yes, n, p_true, p_false, confidence, method)
        point = estimate.point if estimate else None
        return QuestionEstimate(
            question, n, (CategoryEstimate("yes", yes, estimate, estimate, point),)
        )
    if question.type.is_multiple:
        return QuestionEstimate(
            question, n, _ticked_categories(question, cells, confidence, method)
        )
    counts = [cells.get(str(index), 0) for index in range(len(question.options))]
    choice = estimate_choice(counts, n, p_true, p_false, confidence, method)
    if choice is None:
        categories = tuple(
            CategoryEstimate(option, 0, None, None, None) for option in question.options
        )
    else:
        categories = tuple(
            CategoryEstimate(option, count, single, joint, shown)
            for option, count, single, joint, shown in zip(
                question.options,
                counts,
                choice.options,
                choice.simultaneous,
                choice.display,
                strict=True,
            )
        )
    mean = None
    if question.type.has_scores:
        mean = estimate_mean_score(mechanism, counts, n, question.scores, confidence)  # type: ignore[arg-type]
    return QuestionEstimate(question, n, categories, mean)


def _ticked_categories(
    question: Question, cells: Cells, confidence: float, method: str
) -> tuple[CategoryEstimate, ...]:
    """Tick all that apply: each option's share from the reports about it, n_j of them,
    c_j saying ticked (``privacy.ticked_shares``); nothing to project,
    as the shares need not sum to 1, so the point shown is the clipped estimate."""
    mechanism = cast(SampledOption, question.mechanism)
    about, ticked = mechanism.option_counts(cells)
    p_true, p_false = mechanism.exact_rates
    shares = estimate_ticked(about, ticked, float(p_true), float(p_false), confidence, method)
    return tuple(
        CategoryEstimate(
            option,
            ticked[index],
            shares.options[index] if shares else None,
            shares.simultaneous[index] if shares else None,
            single.point if shares and (single := shares.options[index]) else None,
            about[index],
        )
        for index, option in enumerate(question.options)
    )
