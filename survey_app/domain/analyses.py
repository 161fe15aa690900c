"""Analyses across questions for the dashboard: a sensitive share by the groups of a plain
covariate, and the randomized-response logistic regression on plain covariates.

Both start from ``crosstabs.joint_counts``: how many responses stored each combination of
values, which is all either analysis needs (the sufficient statistics), kept per process
and caught up incrementally, so a page over a million responses never reads every row's
JSON in Python. The statistics are ``privacy.groups`` and ``privacy.regression``
unchanged; this module picks the questions, checks what may be asked, names groups and
coefficients with the survey's words, and says in plain words why something cannot be
shown (``AnalysisError``, whose message is for the page). No Flask here: the caller
passes the database and the survey, already in the page's language.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from survey_app.domain.answers import Stored
from survey_app.domain.exports import csv_chunks, neutralize
from survey_app.privacy import (
    DEFAULT_INTERVAL_METHOD,
    Estimate,
    NumericMechanism,
    ProportionMechanism,
)
from survey_app.privacy.groups import (
    MIN_GROUP_SIZE,
    Difference,
    GroupCount,
    GroupEstimate,
    GroupSums,
    GroupTooSmallError,
    estimate_by_group,
    group_difference,
    mean_difference,
    means_by_group,
)
from survey_app.privacy.means import MeanEstimate
from survey_app.privacy.regression import (
    Coefficient,
    Covariate,
    DesignMatrixError,
    NotConvergedError,
    RegressionError,
    TooFewRowsError,
    design_from_counts,
    fit_question,
)
from survey_app.privacy.words import Text, lazy_gettext
from survey_app.storage.backends import Database
from survey_app.storage.crosstabs import joint_counts
from survey_app.storage.surveys import Question, Survey


class AnalysisError(ValueError):
    """The analysis cannot be made as asked; its message (a ``privacy.words`` marker, or a
    ``Refusal``) says why, in the reader's language once put in words by ``str``."""


# Questions


def _question(survey: Survey, key: str | None) -> Question:
    for question in survey.questions:
        if question.key == key:
            return question
    raise AnalysisError(
        lazy_gettext("There is no question with the key “%(key)s” in this survey.", key=key)
    )


def _outcome(
    survey: Survey, key: str | None, option: int | None, numbers: bool = False
) -> Question:
    """A sensitive yes/no or choice question (or number, with ``numbers``), with
    ``option`` valid for it."""
    question = _question(survey, key)
    if not question.sensitive:
        raise AnalysisError(
            lazy_gettext(
                "“%(text)s” is not randomized: its answers are stored as given, so the "
                "dashboard already shows them exactly. Choose a sensitive question.",
                text=question.text,
            )
        )
    if question.type.estimates_mean and not numbers:
        raise AnalysisError(
            lazy_gettext(
                "“%(text)s” is a number question. The regression is for yes/no questions "
                "and for the options of choice questions; the mean of a number by group is "
                "on the page of estimates by group.",
                text=question.text,
            )
        )
    if option is not None and (
        not question.type.has_options or not 0 <= option < len(question.options)
    ):
        raise AnalysisError(
            lazy_gettext(
                "“%(text)s” has no option number %(option)s.", text=question.text, option=option
            )
        )
    return question


def _plain(survey: Survey, key: str | None, outcome: Question) -> Question:
    """A plain (not randomized) question other than the outcome."""
    question = _question(survey, key)
    if question.sensitive:
        raise AnalysisError(
            lazy_gettext(
                "“%(text)s” is a sensitive question: its stored values are randomized reports, "
                "not answers, so it cannot define groups or be a covariate. Choose a plain "
                "question (one stored as given).",
                text=question.text,
            )
        )
    if question.key == outcome.key:
        raise AnalysisError(lazy_gettext("A question cannot be compared with itself."))
    return question


def outcome_questions(survey: Survey) -> tuple[Question, ...]:
    """The questions these analyses can estimate: sensitive yes/no and choice questions."""
    return tuple(q for q in survey.sensitive_questions if not q.type.estimates_mean)


def plain_questions(survey: Survey) -> tuple[Question, ...]:
    """The questions stored as given, which can define groups or be covariates."""
    return survey.plain_questions


def _in_category(question: Question, stored: Stored, option: int | None) -> bool:
    """Whether a stored report is in the category: "yes", or option ``option``."""
    return stored is not None and question.mechanism.report_format.counts_for(stored, option)


def _bears_on(question: Question, stored: Stored, option: int | None) -> bool:
    """Whether a stored report says anything about the category: every report does,
    except a tick-all one about another option than ``option`` (a skip is kept)."""
    if stored is None or not question.type.is_multiple:
        return True
    index, _bit = question.mechanism.report_format.load(stored)  # type: ignore[misc]
    return bool(index == option)


def _label(question: Question, stored: Stored) -> str:
    """A plain answer in words: a choice's option text, or the number."""
    if question.type.has_options and isinstance(stored, int):
        return question.options[stored]
    return str(stored)


# Estimates by group


@dataclass(frozen=True)
class Group:
    """A group of a plain covariate: ``key`` is its stored value as text (an option's
    index, or the number), ``label`` its words."""

    key: str
    label: str


@dataclass(frozen=True)
class CategoryGroups:
    """One category ("yes", or one option) by group, and the chosen difference.

    ``difference_refused`` says why no difference is shown when two groups were chosen
    but cannot be compared (one of them too small).
    """

    category: str  # "yes", or the option's text
    option: int | None
    rows: tuple[GroupEstimate[Group], ...]  # groups named by their records
    difference: Difference | None = None
    difference_refused: str | None = None


@dataclass(frozen=True)
class GroupAnalysis:
    question: Question
    by: Question
    categories: tuple[CategoryGroups, ...]
    #: Groups large enough to be shown alone: the ones that can be compared.
    comparable: tuple[Group, ...]
    first: Group | None
    second: Group | None
    #: Responses that answered both questions, and those that skipped either.
    answered: int
    skipped: int
    confidence: float
    method: str
    min_size: int = MIN_GROUP_SIZE

    @property
    def any_pooled(self) -> bool:
        return any(row.pooled for c in self.categories for row in c.rows)

    @property
    def any_withheld(self) -> bool:
        return any(row.withheld for c in self.categories for row in c.rows)


def estimate_groups(
    db: Database,
    survey: Survey,
    question_key: str | None,
    by_key: str | None,
    option: int | None = None,
    first: str | None = None,
    second: str | None = None,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
    patience: float | None = None,
) -> GroupAnalysis:
    """``question_key``'s share ("yes", or each option; only ``option`` if given) in each
    group of the plain question ``by_key``, and the difference between groups ``first``
    and ``second`` (group keys) with its MOVER interval.

    Groups come in the covariate's order (options as listed, numbers ascending); groups
    below ``MIN_GROUP_SIZE`` are pooled or withheld exactly as ``estimate_by_group``
    decides. A response counts when it answered both questions. ``patience``: how long
    to wait for another request counting the survey (``crosstabs.joint_counts``).
    """
    question = _outcome(survey, question_key, option, numbers=True)
    by = _plain(survey, by_key, question)
    counts = joint_counts(db, survey, (by.key, question.key), patience=patience)
    return groups_from_counts(question, by, counts, option, first, second, confidence, method)


def groups_from_counts(
    question: Question,
    by: Question,
    counts: Mapping[tuple[Stored, ...], int],
    option: int | None = None,
    first: str | None = None,
    second: str | None = None,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> GroupAnalysis:
    """``estimate_groups`` from the stored (group, report) combinations and how many
    responses stored each: all of the analysis but the counting, so a simulation can check
    what the page shows without a database."""
    answered_counts = {c: n for c, n in counts.items() if None not in c}
    values = sorted({group for group, _report in answered_counts}, key=_order)
    groups = {str(value): Group(str(value), _label(by, value)) for value in values}
    sizes: Counter[str] = Counter()
    for (group, _report), n in answered_counts.items():
        sizes[str(group)] += n
    chosen = _chosen_groups(groups, first, second)
    if question.type.estimates_mean:
        categories = [_means(question, answered_counts, groups, chosen, confidence)]
    else:
        categories = _shares(question, option, answered_counts, groups, chosen, confidence, method)
    answered = sum(answered_counts.values())
    return GroupAnalysis(
        question=question,
        by=by,
        categories=tuple(categories),
        comparable=tuple(groups[key] for key in groups if sizes[key] >= MIN_GROUP_SIZE),
        first=chosen[0] if chosen else None,
        second=chosen[1] if chosen else None,
        answered=answered,
        skipped=sum(counts.values()) - answered,
        confidence=confidence,
        method=method,
    )


def _shares(
    question: Question,
    option: int | None,
    answered_counts: Mapping[tuple[Stored, ...], int],
    groups: Mapping[str, Group],
    chosen: tuple[Group, Group] | None,
    confidence: float,
    method: str,
) -> list[CategoryGroups]:
    """Each category's share ("yes", each option, or only ``option``) by group, and the
    chosen difference."""
    mechanism = cast(ProportionMechanism, question.mechanism)  # an outcome question's
    if question.type.is_yes_no:
        options: list[int | None] = [None]
    else:
        options = [option] if option is not None else list(range(len(question.options)))
    categories = []
    for index in options:
        tallies = _group_counts(question, answered_counts, index)
        estimates = estimate_by_group(tallies, mechanism, confidence, method)
        rows = tuple(e.relabelled(groups.__getitem__) for e in estimates)
        difference, refused = None, None
        if chosen is not None:
            try:
                difference = group_difference(
                    tallies, chosen[0].key, chosen[1].key, mechanism, confidence, method
                )
            except GroupTooSmallError:
                refused = _too_small_to_compare()
        category = "yes" if index is None else question.options[index]
        categories.append(CategoryGroups(category, index, rows, difference, refused))
    return categories


def _means(
    question: Question,
    answered_counts: Mapping[tuple[Stored, ...], int],
    groups: Mapping[str, Group],
    chosen: tuple[Group, Group] | None,
    confidence: float,
) -> CategoryGroups:
    """A number question's mean by group (the dashboard's interval in each group)."""
    mechanism = cast(NumericMechanism, question.mechanism)
    sums: dict[str, GroupSums] = {}
    for (group, report), n in sorted(answered_counts.items(), key=lambda i: _order(i[0][0])):
        value = int(str(report))
        old = sums.get(str(group), GroupSums(0, 0, 0))
        sums[str(group)] = GroupSums(
            old.n + n, old.total + n * value, old.total_squares + n * value * value
        )

    rows = tuple(
        e.relabelled(groups.__getitem__) for e in means_by_group(sums, mechanism, confidence)
    )
    difference, refused = None, None
    if chosen is not None:
        try:
            difference = mean_difference(sums, chosen[0].key, chosen[1].key, mechanism, confidence)
        except GroupTooSmallError:
            refused = _too_small_to_compare()
    return CategoryGroups("mean", None, rows, difference, refused)


def _too_small_to_compare() -> str:
    """In the reader's words now: the analysis keeps it as text."""
    return str(
        lazy_gettext(
            "Groups with fewer than %(size)s respondents are not shown alone, so "
            "they cannot be compared either. Choose two groups shown in the table.",
            size=MIN_GROUP_SIZE,
        )
    )


def _chosen_groups(
    groups: Mapping[str, Group], first: str | None, second: str | None
) -> tuple[Group, Group] | None:
    if not first and not second:
        return None
    if not first or not second or first == second:
        raise AnalysisError(lazy_gettext("Choose two different groups to compare."))
    for key in (first, second):
        if key not in groups:
            raise AnalysisError(
                lazy_gettext("There is no group “%(group)s” to compare.", group=key)
            )
    return groups[first], groups[second]


def _group_counts(
    question: Question, counts: Mapping[tuple[Stored, ...], int], option: int | None
) -> dict[str, GroupCount]:
    """Each group's (reports in the category, respondents), in the groups' order."""
    reported: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for (group, report), n in sorted(counts.items(), key=lambda item: _order(item[0][0])):
        if not _bears_on(question, report, option):
            continue  # a tick-all report about another option: n_j counts only its own
        totals[str(group)] += n
        reported[str(group)] += n if _in_category(question, report, option) else 0
    return {group: GroupCount(reported[group], totals[group]) for group in totals}


def _order(value: Stored) -> tuple[int, int | str]:
    return (0, value) if isinstance(value, int) else (1, str(value))


GROUP_COLUMNS = (
    "survey",
    "question",
    "category",
    "by",
    "status",
    "group",
    "versus",
    "n",
    "estimate",
    "std_error",
    "ci_low",
    "ci_high",
    "confidence",
    "interval_method",
)


def _interval_method(estimate: Estimate | MeanEstimate | None) -> str | None:
    """The estimate's interval method ("t" for a mean's Student t interval)."""
    return None if estimate is None else estimate.method


def group_rows(survey: Survey, analysis: GroupAnalysis) -> Iterator[dict[str, Any]]:
    """The by-group table as mappings keyed by ``GROUP_COLUMNS``: one per row of each
    category (status shown, pooled or withheld), then the difference if one was asked."""
    common = {"survey": survey.slug, "question": analysis.question.key, "by": analysis.by.key}
    for category in analysis.categories:
        for row in category.rows:
            estimate = row.estimate
            yield {
                **common,
                "category": category.category,
                "status": row.status,
                "group": " + ".join(group.label for group in row.groups),
                "versus": None,
                "n": row.n,
                "estimate": estimate and estimate.point,
                "std_error": estimate and estimate.std_error,
                "ci_low": estimate and estimate.low,
                "ci_high": estimate and estimate.high,
                "confidence": estimate and estimate.confidence,
                "interval_method": _interval_method(estimate),
            }
        difference = category.difference
        if difference is not None and analysis.first and analysis.second:
            yield {
                **common,
                "category": category.category,
                "status": "difference",
                "group": analysis.first.label,
                "versus": analysis.second.label,
                "n": None,
                "estimate": difference.point,
                "std_error": None,
                "ci_low": difference.low,
                "ci_high": difference.high,
                "confidence": difference.confidence,
                "interval_method": difference.method,
            }


def group_csv(survey: Survey, analysis: GroupAnalysis) -> Iterator[str]:
    return _csv(GROUP_COLUMNS, group_rows(survey, analysis), {"category", "group", "versus"})


# The regression


@dataclass(frozen=True)
class Term:
    """One coefficient with the words for it: the intercept (``question`` None), a number
    covariate, or a choice covariate's ``option`` against its ``reference`` option."""

    name: str
    question: Question | None
    option: str | None
    reference: str | None
    coefficient: Coefficient


@dataclass(frozen=True)
class RegressionResult:
    outcome: Question
    option: int | None
    covariates: tuple[Question, ...]
    terms: tuple[Term, ...]
    #: Responses used (every covariate and the outcome answered) and left out.
    n: int
    dropped: int
    confidence: float
    #: The likelihood is highest at an estimated share of 0% or 100% for some respondents:
    #: some estimates are infinite, with no standard error (``RegressionFit.boundary``).
    boundary: bool
    #: Tick all that apply: responses left out as reporting on another option.
    elsewhere: int = 0

    @property
    def open_sided(self) -> bool:
        """Some interval runs to -∞ or ∞: the reports cannot rule out a share of 0% (or
        100%) for some respondents, which the page says in words."""
        return any(
            math.isinf(term.coefficient.low) or math.isinf(term.coefficient.high)
            for term in self.terms
        )

    @property
    def category(self) -> str:
        """ "yes", or the option's text (as in the aggregate CSV's category column)."""
        return "yes" if self.option is None else self.outcome.options[self.option]


def fit_regression(
    db: Database,
    survey: Survey,
    outcome_key: str | None,
    covariate_keys: Sequence[str],
    option: int | None = None,
    confidence: float = 0.95,
    patience: float | None = None,
) -> RegressionResult:
    """P(true answer in the category | covariates) = logistic(xᵀβ), fitted by maximum
    likelihood to the reports under the outcome question's design, from the joint counts
    of (covariates, outcome): one weighted row per distinct combination.

    The category is "yes" for a yes/no outcome and option ``option`` (required) for a
    choice. Responses that skipped the outcome or a covariate are left out and counted.
    ``patience``: as for ``estimate_groups``.
    """
    outcome = _outcome(survey, outcome_key, option)
    if outcome.type.has_options and option is None:
        raise AnalysisError(
            lazy_gettext("Choose which option of “%(text)s” to model.", text=outcome.text)
        )
    if not covariate_keys:
        raise AnalysisError(lazy_gettext("Choose at least one covariate."))
    if len(set(covariate_keys)) != len(covariate_keys):
        raise AnalysisError(lazy_gettext("Choose each covariate once."))
    covariates = tuple(_plain(survey, key, outcome) for key in covariate_keys)
    keys = (*(q.key for q in covariates), outcome.key)
    counts, elsewhere = _about_option(
        outcome, joint_counts(db, survey, keys, patience=patience), option
    )
    mechanism = cast(ProportionMechanism, outcome.mechanism)  # an outcome question's
    try:
        design = design_from_counts(counts, outcome.key, [_covariate(q) for q in covariates])
        fit = fit_question(design, mechanism, option, confidence)
    except RegressionError as error:
        raise AnalysisError(_refusal(error)) from error
    references = _references(covariates, counts)
    return RegressionResult(
        outcome=outcome,
        option=option,
        covariates=covariates,
        terms=tuple(_term(c, covariates, references) for c in fit.coefficients),
        n=fit.n,
        dropped=design.dropped,
        confidence=confidence,
        boundary=fit.boundary,
        elsewhere=elsewhere,
    )


def _about_option(
    outcome: Question, counts: Mapping[tuple[Stored, ...], int], option: int | None
) -> tuple[Mapping[tuple[Stored, ...], int], int]:
    """The combinations whose outcome report bears on ``option``, and how many responses
    reported on another option: a tick-all report is about one option drawn at random, so
    only the reports about ``option`` carry its likelihood (each a yes/no report with the
    mechanism's p, 1 - p). Skips are kept, for the design to count as dropped."""
    if not outcome.type.is_multiple:
        return counts, 0
    kept = {c: n for c, n in counts.items() if _bears_on(outcome, c[-1], option)}
    return kept, sum(counts.values()) - sum(kept.values())


def _covariate(question: Question) -> Covariate:
    return Covariate(question.key, question.type, question.options, question.sensitive)


def _references(
    covariates: Sequence[Question], counts: Mapping[tuple[Stored, ...], int]
) -> dict[str, str]:
    """Each choice covariate's reference option: the first one chosen by a response kept
    in the fit (``design_from_columns`` codes the others against it)."""
    kept = [combination for combination in counts if None not in combination]
    references = {}
    for i, question in enumerate(covariates):
        chosen = [value for c in kept if isinstance(value := c[i], int)]
        if question.type.has_options and chosen:
            references[question.key] = question.options[min(chosen)]
    return references


def _term(
    coefficient: Coefficient, covariates: Sequence[Question], references: Mapping[str, str]
) -> Term:
    name = coefficient.name
    for question in covariates:
        if name == question.key:
            return Term(name, question, None, None, coefficient)
        if name.startswith(question.key + "=") and question.type.has_options:
            option = name[len(question.key) + 1 :]
            return Term(name, question, option, references.get(question.key), coefficient)
    return Term(name, None, None, None, coefficient)  # the intercept


@dataclass(frozen=True)
class Refusal:
    """Why a regression cannot be fitted: the reason in the reader's words, and the
    library's own sentence, which names the question but is English: it follows the
    reason only where the reason is read in English."""

    reason: Text
    detail: str

    def __str__(self) -> str:
        said = str(self.reason)
        return f"{said} ({self.detail})" if said == self.reason.msgid else said


def _refusal(error: RegressionError) -> Refusal:
    """The library's refusal in the reader's words; its own sentence (English, naming the
    question) follows as the detail."""
    detail = str(error)
    if isinstance(error, TooFewRowsError):
        reason = lazy_gettext(
            "Too few responses answered the outcome and every covariate: a regression needs "
            "at least 10 per coefficient. Choose fewer covariates or wait for more responses."
        )
    elif isinstance(error, NotConvergedError):
        reason = lazy_gettext(
            "The fit did not settle: the data say too little about these covariates. Try "
            "fewer covariates or wait for more responses."
        )
    elif isinstance(error, DesignMatrixError):
        reason = lazy_gettext(
            "A covariate cannot be used: everyone gave it the same answer, or it is a "
            "combination of other covariates."
        )
    else:
        reason = lazy_gettext("This regression cannot be fitted.")
    return Refusal(reason, detail)


REGRESSION_COLUMNS = (
    "survey",
    "outcome",
    "category",
    "term",
    "covariate",
    "level",
    "reference",
    "estimate",
    "std_error",
    "ci_low",
    "ci_high",
    "confidence",
    "interval_method",
    "n",
    "dropped",
    "odds_ratio",
    "odds_ratio_low",
    "odds_ratio_high",
    "p_value",
)
# Written to every digit: odds ratios and p-values span orders of magnitude, where six
# decimals would print 1e-9 as 0.
_FULL_PRECISION = frozenset({"odds_ratio", "odds_ratio_low", "odds_ratio_high", "p_value"})


def regression_rows(survey: Survey, result: RegressionResult) -> Iterator[dict[str, Any]]:
    """One mapping per coefficient, keyed by ``REGRESSION_COLUMNS``: β on the log-odds scale
    of the true answer being in the category, then e^β with e^ of the interval's bounds and
    the Wald p-value (added last, so the earlier columns keep their places). An estimate
    or bound at infinity is written ``inf`` or ``-inf`` (as R's ``read.csv`` and pandas
    read them); an estimate the data do not pin down, and a boundary fit's standard errors
    and p-values, are empty."""
    for term in result.terms:
        c = term.coefficient
        odds_low, odds_high = c.odds_ratio_interval
        yield {
            "survey": survey.slug,
            "outcome": result.outcome.key,
            "category": result.category,
            "term": term.name,
            "covariate": term.question and term.question.key,
            "level": term.option,
            "reference": term.reference,
            "estimate": c.estimate,
            "std_error": c.std_error,
            "ci_low": c.low,
            "ci_high": c.high,
            "confidence": result.confidence,
            "interval_method": "profile-likelihood",
            "n": result.n,
            "dropped": result.dropped,
            "odds_ratio": c.odds_ratio,
            "odds_ratio_low": odds_low,
            "odds_ratio_high": odds_high,
            "p_value": c.p_value,
        }


def regression_csv(survey: Survey, result: RegressionResult) -> Iterator[str]:
    return _csv(
        REGRESSION_COLUMNS,
        regression_rows(survey, result),
        {"category", "term", "level", "reference"},
        _FULL_PRECISION,
    )


def _csv(
    columns: Sequence[str],
    rows: Iterator[dict[str, Any]],
    texts: set[str],
    full: frozenset[str] = frozenset(),
) -> Iterator[str]:
    """Rows as CSV: survey words guarded against spreadsheet formulas, numbers to six
    decimals (the ``full`` columns to every digit, Python's shortest exact form), the
    confidence as written, empty cells for None."""

    def cell(column: str, value: Any) -> object:
        if value is None:
            return ""
        if column in texts:
            return neutralize(str(value))
        if column == "confidence":
            return f"{value:g}"
        if isinstance(value, float):
            return repr(value) if column in full else f"{value:.6f}"
        return value

    lines = ([cell(column, row[column]) for column in columns] for row in rows)
    return csv_chunks(itertools.chain([list(columns)], lines))
