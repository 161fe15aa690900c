"""Logistic regression of a sensitive yes/no answer on plain covariates, under the known design.

The server never sees the true answer, only a report that is "yes" with probability
p_false for a true "no" and p_true for a true "yes". If the true answer follows a logistic
model, P(yes | x) = logistic(xᵀβ), then the *report* follows

    P(report yes | x) = p0 + t·logistic(xᵀβ),   p0 = p_false, t = p_true - p_false,

a known affine squeeze of the logistic curve (two coins: p0 = (1 - t)f, slope t; the R
packages ``rr`` and ``RRreg`` fit the same likelihood). β is estimated by maximum
likelihood over the reports; each coefficient gets a profile-likelihood interval, and a
standard error from the observed information (the negative Hessian of the log-likelihood
at the estimate).

Why profile likelihood and not Wald's β̂ ± z·se. The coins make the likelihood *bounded*:
a report has probability at least min(p0, 1 - p0 - t) whatever β, so as a coefficient runs
to ±∞ the log-likelihood levels off at a finite value instead of falling without end. When
the answer is rare (or near-universal) the log-likelihood is strongly skewed: steep on the
side of more events, nearly flat towards none. Wald's symmetric interval, read off the
curvature at the top, then misses: an intercept of -3 at ε = 1 among 300 respondents was
covered 0.91 of the time even among the fits it could make, the profile interval 0.98 of
the time over all of them (``scripts/regression_coverage.py``, ``docs/regression.md``). The
profile-likelihood interval is every value b whose best fit with β_j = b is within the
χ²₁ quantile of the best fit overall:

    2·(ℓ(β̂) - max{ℓ(β) : β_j = b}) ≤ χ²₁(confidence)  (= z²),

the likelihood-ratio test inverted (Venzon & Moolgavkar 1988; what R's ``confint`` gives a
``glm``). It follows the skew, and where the curve levels off above the cutoff the bound is
infinite: the data cannot rule out a share of 0% (or 100%). Each bound is found by SciPy's
``brentq`` between points stepped out from β̂, each point a fit of the other coefficients
with β_j fixed (``_Profile``: warm-started along the path, on the distinct covariate
patterns with their counts of reports, so the work does not grow with the responses).
This likelihood need not be concave, and where the information is low it can have
several ridges (a steep positive or negative slope putting a share of 0 on most of the
scale); the search guards against following a lesser one (``_bound``, ``_profiled``), and
tests check it against a brute-force profile on seeded surveys where it matters.

Boundary fits. "Separation" in plain logistic regression means the likelihood rises
without end; here it cannot, but its highest value can still lie at infinity: where a group
reports "yes" less often than a true share of 0% would make it (fewer than p0), the best
share there is 0%, as a single share's estimate is clipped at 0. That happens by chance
whenever the true share is small and the sample too (a quarter of the fits at intercept
-3, ε = 1, n = 300). Such a fit is reported, not refused, as a single share would be: a
coefficient whose likelihood is highest towards an infinity has that infinity as its
estimate, its interval is open on that side and bounded by the likelihood-ratio cutoff on
the other, and there is no standard error (the information there is zero). Numerically a
fit is on the boundary when some row's |xᵀβ| passes ``SEPARATION_LINEAR_PREDICTOR`` once
the log-likelihood has stopped rising: a fitted share within e^-30 of 0 or 1 is one no
survey can tell from 0 or 1.

Choice options work the same one option at a time: under GRR an option j is reported with
probability q + (p - q)·P(true = j | x), and under OUE bit j is 1 with probability
q + (1/2 - q)·P(true = j | x), so "option j versus the rest" is this model with
p0 = q. Each option gets its own β: k separate fits need not add up to a coherent
multinomial model, which is said next to the results. Numbers are not supported.

Maths, with s = logistic(η), η = xᵀβ, μ = p0 + t·s, d = dμ/dη = t·s(1 - s), a row of m
responses of which y were reported in the category, and r = y/μ - (m - y)/(1 - μ) (the
derivative of the log-likelihood with respect to μ):

    gradient  Σ r·d·x
    Hessian   Σ [-(y/μ² + (m - y)/(1 - μ)²)·d² + r·d·(1 - 2s)] x xᵀ
    expected  Σ m·d²/(μ(1 - μ)) x xᵀ   (Fisher information, positive semidefinite)

Newton steps use the observed information when it is positive definite and Fisher's
otherwise (far from the maximum, where this likelihood is not concave), each step first
shortened to move no row's η by more than ``_MAX_LINEAR_STEP`` and then halved until the
log-likelihood rises.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from statistics import NormalDist
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq
from scipy.special import expit, logit, ndtr

from .mechanisms import ProportionMechanism
from .mechanisms.cells import ANSWERED, TallyCell
from .question_types import QuestionType

Matrix = npt.NDArray[np.float64]
Vector = npt.NDArray[np.float64]

# Rows needed per coefficient (the intercept included). Ten "events per variable" is the
# classic floor for plain logistic regression (Peduzzi et al. 1996); randomized reports
# carry far less information each, which the standard errors then show, but below this
# the fit is not worth attempting at all.
MIN_ROWS_PER_COEFFICIENT = 10
# |xᵀβ| beyond this, once the log-likelihood has stopped rising, means a fitted share within
# e^-30 ≈ 1e-13 of 0 or 1 for some row: the likelihood is highest at infinity in some
# direction (a boundary fit, see the module's docstring).
SEPARATION_LINEAR_PREDICTOR = 30.0
# A profile bound further from β̂_j than this many units of the linear predictor (for the
# row with the largest |x_j|: a factor e^60 ≈ 1e26 in its odds) is infinite: beyond it the
# likelihood has levelled off wherever a share can be pushed to 0% or 100%.
PROFILE_REACH = 60.0
MAX_ITERATIONS = 100
_STEP_TOLERANCE = 1e-9
_PROFILE_STEP_TOLERANCE = 1e-6
# A Newton step's first try moves no row's linear predictor by more than this: a longer
# jump could land far out on the likelihood's flat tails, where it would stall.
_MAX_LINEAR_STEP = 10.0
# Relative rise of the log-likelihood below which a fit running off to infinity has arrived.
_VALUE_TOLERANCE = 1e-12
# A profile deviance below this at PROFILE_REACH: the likelihood is as high out there as at
# its top, so a boundary fit's coefficient is estimated at that infinity.
_FLAT_DEVIANCE = 1e-6
# The longest step, in units of the linear predictor, between points of a profile.
_PROFILE_STRIDE = 2.0
# A profile's fit higher than the maximum by this much in deviance means the maximum was
# not the highest peak: refit. Less moves the cutoff by less than this, which no bound shows.
_HIGHER_DEVIANCE = 1e-3
# Times the maximum is refitted from a higher point a profile found, before giving up.
_REFITS = 5
_GRAM_BLOCK = 65_536
_SUBSAMPLE_ROWS = 50_000


class RegressionError(ValueError):
    """The regression cannot be fitted as asked; the message says why, in plain words."""


class TooFewRowsError(RegressionError):
    pass


class NotConvergedError(RegressionError):
    pass


class DesignMatrixError(RegressionError):
    """A covariate cannot be used: sensitive, constant, unknown, or collinear with others."""


class UnsupportedOutcomeError(RegressionError):
    pass


@dataclass(frozen=True)
class Coefficient:
    """One column's β̂ with its profile-likelihood interval at the fit's confidence.

    ``estimate`` is ±inf on a boundary fit when the likelihood is highest towards that
    infinity, and None when it is as high towards both (the data say nothing about this
    coefficient once the others have run off). ``std_error`` comes from the observed
    information, which is singular on a boundary fit: None there. ``low`` and ``high`` are
    -inf and inf where the likelihood never falls by the cutoff on that side.
    """

    name: str
    estimate: float | None
    std_error: float | None
    low: float
    high: float

    @property
    def odds_ratio(self) -> float | None:
        """e^β̂: the factor by which the odds of the true answer change per unit of a number,
        or for an option against its reference (for the intercept, the odds at the
        reference itself). 0 or ∞ where β̂ is ±∞; None where β̂ is."""
        return None if self.estimate is None else _exp(self.estimate)

    @property
    def odds_ratio_interval(self) -> tuple[float, float]:
        """The interval (e^low, e^high). e^b is increasing, so it holds the true odds ratio
        exactly when (low, high) holds the true β: its coverage is the profile interval's,
        case for case (not Wald's e^(β̂ ± z·se), which would inherit Wald's shortfall)."""
        return _exp(self.low), _exp(self.high)

    @property
    def p_value(self) -> float | None:
        """The two-sided Wald p-value for β = 0, 2·(1 − Φ(|β̂/se|)), what reports quote
        beside an odds ratio; None without a standard error (a boundary fit).

        It is Wald's, not the likelihood-ratio test the interval inverts, so near the
        threshold the two can disagree on whether 0 (an odds ratio of 1) is rejected
        (how often, under a true β = 0: docs/regression.md). Φ's upper tail is SciPy's
        ``ndtr(-z)``, which is ``scipy.stats.norm.sf(z)`` without loading scipy.stats
        into every worker."""
        if self.estimate is None or self.std_error is None:
            return None
        return float(2 * ndtr(-abs(self.estimate / self.std_error)))


@dataclass(frozen=True)
class RegressionFit:
    """A fitted model: ``coefficients`` in column order (the intercept first).

    ``covariance`` is the inverse observed information, None on a boundary fit;
    ``log_likelihood`` is of the reports at β̂ (at a boundary fit, the limit it reaches);
    ``n`` rows were used.
    """

    coefficients: tuple[Coefficient, ...]
    covariance: tuple[tuple[float, ...], ...] | None
    n: int
    log_likelihood: float
    confidence: float
    p_false: float
    p_true: float

    @property
    def boundary(self) -> bool:
        """The likelihood is highest at an estimated share of 0% or 100% for some respondents."""
        return self.covariance is None


@dataclass(frozen=True)
class Covariate:
    """A question used as a covariate: its key, its kind (a number, or a choice with its
    option labels).

    ``sensitive`` is the question's flag; a sensitive question is refused, since its
    stored values are randomized reports, not answers.
    """

    key: str
    kind: QuestionType
    options: tuple[str, ...] = ()
    sensitive: bool = False


@dataclass(frozen=True)
class Design:
    """A design matrix (an intercept column, then the covariates' columns) and the outcome.

    ``outcome`` holds the outcome question's stored values for the rows kept (responses
    with every covariate and the outcome answered); ``dropped`` counts the responses left
    out. ``weights``, when set, is how many identical responses each row stands for
    (``design_from_counts``); ``n`` counts responses either way.
    """

    matrix: Matrix
    names: tuple[str, ...]
    outcome: tuple[object, ...]
    dropped: int
    weights: Vector | None = None

    @property
    def n(self) -> int:
        return len(self.outcome) if self.weights is None else int(round(self.weights.sum()))


def design_from_responses(
    responses: Sequence[Mapping[str, object]], outcome_key: str, covariates: Sequence[Covariate]
) -> Design:
    """The design from per-response dicts: question key → stored value (None or absent: skipped)."""
    keys = (outcome_key, *(c.key for c in covariates))
    columns = {key: [response.get(key) for response in responses] for key in keys}
    return design_from_columns(columns, outcome_key, covariates)


def design_from_columns(
    columns: Mapping[str, Sequence[object]], outcome_key: str, covariates: Sequence[Covariate]
) -> Design:
    """The design from one sequence of stored values per question key, all of one length.

    Numbers are used as they are; a choice becomes treatment-coded dummies, one per option
    but the reference (the first option anyone chose), named "key=option". An option no
    kept respondent chose has no column (it would be all zeros). Rows with any value
    missing are dropped (complete cases).
    """
    return _design(columns, outcome_key, covariates)


def design_from_counts(
    counts: Mapping[tuple[Any, ...], int], outcome_key: str, covariates: Sequence[Covariate]
) -> Design:
    """The design from joint counts: (covariates' stored values in order, then the
    outcome's) → how many responses stored that combination (``crosstabs.joint_counts``
    with keys ``(*covariates, outcome)``).

    One row per distinct combination, weighted by its count: the weighted likelihood is
    the responses' likelihood term for term, so the fit, its standard errors and the
    dropped count are those of the responses one by one (``design_from_columns``).
    """
    keys = (*(c.key for c in covariates), outcome_key)
    combinations = list(counts)
    if any(len(combination) != len(keys) for combination in combinations):
        raise DesignMatrixError("every combination needs one value per covariate and the outcome")
    columns = {key: [c[i] for c in combinations] for i, key in enumerate(keys)}
    weights = np.fromiter(counts.values(), dtype=np.float64, count=len(combinations))
    if not (weights > 0).all():
        raise DesignMatrixError("every combination needs a positive count")
    return _design(columns, outcome_key, covariates, weights)


def _design(
    columns: Mapping[str, Sequence[object]],
    outcome_key: str,
    covariates: Sequence[Covariate],
    weights: Vector | None = None,
) -> Design:
    if not covariates:
        raise DesignMatrixError("choose at least one covariate")
    for covariate in covariates:
        if covariate.sensitive:
            raise DesignMatrixError(
                f"{covariate.key!r} is a sensitive question: its stored values are randomized "
                "reports, not answers, so it cannot be a covariate"
            )
        if covariate.key == outcome_key:
            raise DesignMatrixError(
                f"{covariate.key!r} is the outcome; it cannot also be a covariate"
            )
        if not (covariate.kind.has_options or covariate.kind.has_range):
            raise DesignMatrixError(f"{covariate.key!r} is neither a number nor a choice question")
    keys = (outcome_key, *(c.key for c in covariates))
    for key in keys:
        if key not in columns:
            raise DesignMatrixError(f"no values for {key!r}")
    lengths = {len(columns[key]) for key in keys}
    if len(lengths) != 1:
        raise DesignMatrixError("every question needs one value per response")
    n = lengths.pop()
    missing = np.zeros(n, dtype=np.bool_)
    arrays = {}
    for covariate in covariates:
        # NumPy infers int or float for a column of numbers; a skipped answer (None)
        # leaves an object array, whose Nones mark the rows to drop.
        array = np.array(columns[covariate.key])
        if array.dtype == np.object_:
            missing |= array == None  # noqa: E711 (elementwise on an object array)
        arrays[covariate.key] = array
    missing |= np.fromiter((v is None for v in columns[outcome_key]), dtype=np.bool_, count=n)
    kept = ~missing

    parts: list[Matrix] = [np.ones((int(kept.sum()), 1))]
    names = ["intercept"]
    for covariate in covariates:
        values = arrays[covariate.key][kept]
        if values.dtype == np.object_:  # the answered values, now without None
            values = np.array(values.tolist())
        block, block_names = _columns_of(covariate, values)
        parts.append(block)
        names.extend(block_names)
    outcome = tuple(compress(columns[outcome_key], kept))
    if weights is None:
        return Design(np.hstack(parts), tuple(names), outcome, int((~kept).sum()))
    dropped = int(round(weights[~kept].sum()))
    return Design(np.hstack(parts), tuple(names), outcome, dropped, weights[kept])


def _columns_of(covariate: Covariate, values: npt.NDArray[np.generic]) -> tuple[Matrix, list[str]]:
    key = covariate.key
    if values.dtype == np.bool_ or (values.size and values.dtype.kind not in "iuf"):
        raise DesignMatrixError(f"{key!r} has values that are not numbers")
    if covariate.kind.has_range:
        if values.size and np.ptp(values) == 0:
            raise DesignMatrixError(
                f"{key!r} has the same value for every respondent, so it explains nothing"
            )
        return values.astype(np.float64).reshape(-1, 1), [key]
    k = len(covariate.options)
    if values.size and (values.dtype.kind == "f" or values.min() < 0 or values.max() >= k):
        raise DesignMatrixError(f"{key!r} has values that are not option indices 0..{k - 1}")
    used = np.flatnonzero(np.bincount(values.astype(np.int64), minlength=k))
    if used.size < 2:
        raise DesignMatrixError(
            f"every respondent gave the same answer to {key!r}, so it explains nothing"
        )
    block = (values[:, np.newaxis] == used[np.newaxis, 1:]).astype(np.float64)
    return block, [f"{key}={covariate.options[j]}" for j in used[1:]]


def category_reports(
    outcome: Sequence[object], mechanism: ProportionMechanism, option: int | None = None
) -> tuple[npt.NDArray[np.float64], float, float]:
    """The 0/1 "reported in the category" vector and (p_false, p_true) for a question's reports.

    ``outcome`` holds stored reports; the mechanism's tally cell for the category ("yes",
    or option ``option``) says which of them count, as it does for the running tallies.
    """
    if not mechanism.randomized or mechanism.question_type.estimates_mean:
        raise UnsupportedOutcomeError(
            "regression is available for sensitive yes/no questions and for the options of "
            "sensitive choice questions, not for this question"
        )
    cell = _category_cell(mechanism, option)
    stored = cast(Sequence[int | str], outcome)
    y = np.fromiter((cell.amount(report) for report in stored), np.float64, len(stored))
    return y, mechanism.p_false, mechanism.p_true


def _category_cell(mechanism: ProportionMechanism, option: int | None) -> TallyCell:
    """The tally cell of the category: "yes" without options, else option ``option``'s."""
    categories = {cell.name: cell for cell in mechanism.tally_cells() if cell != ANSWERED}
    if not mechanism.question_type.has_options:
        if option is not None:
            raise UnsupportedOutcomeError("a yes/no question has no options to choose from")
        return categories["yes"]
    # Tick all that apply: the reports about the option saying "ticked" ("j:1"); the
    # caller fits only the rows about that option (the others say nothing of it).
    suffix = ":1" if mechanism.question_type.is_multiple else ""
    last = len(categories) // 2 - 1 if suffix else len(categories) - 1
    if option is None or f"{operator.index(option)}{suffix}" not in categories:
        raise UnsupportedOutcomeError(f"choose an option between 0 and {last}")
    return categories[f"{option}{suffix}"]


def fit_randomized_logistic(
    matrix: npt.ArrayLike,
    reports: npt.ArrayLike,
    p_false: float,
    p_true: float,
    names: Sequence[str] | None = None,
    confidence: float = 0.95,
    weights: npt.ArrayLike | None = None,
) -> RegressionFit:
    """β̂ for P(report | x) = p_false + (p_true - p_false)·logistic(xᵀβ), by maximum likelihood.

    ``matrix`` has one row per response (include the intercept column yourself, or build
    it with ``design_from_columns``); ``reports`` is 1 where the response was reported in
    the category, else 0. With ``weights``, row i stands for weights[i] identical
    responses: the likelihood is the same, and the work (the maximum, then a few dozen
    fits per coefficient for the profile intervals) grows with the distinct covariate
    patterns, not with the responses: a million responses over 16,380 patterns and 12
    coefficients take about 0.4 s of one core. Row by row, a million responses take
    seconds (15 s with six continuous columns).
    """
    x = np.ascontiguousarray(matrix, dtype=np.float64)
    y = np.asarray(reports, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError("need a 2-D matrix and one report per row")
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if w is not None and (w.shape != y.shape or not (w > 0).all()):
        raise ValueError("need one positive weight per row")
    n, columns = int(x.shape[0] if w is None else round(w.sum())), x.shape[1]
    names = tuple(names) if names is not None else tuple(f"x{j}" for j in range(columns))
    if len(names) != columns:
        raise ValueError("need one name per column")
    if not 0 <= p_false < p_true <= 1:
        raise ValueError("need 0 <= p_false < p_true <= 1: a report must carry some signal")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("reports must be 0 or 1")
    if n < MIN_ROWS_PER_COEFFICIENT * columns:
        raise TooFewRowsError(
            f"{n} responses are too few for {columns} coefficients: "
            f"at least {MIN_ROWS_PER_COEFFICIENT * columns} are needed"
        )
    if np.linalg.matrix_rank(_gram(x)) < columns:
        raise DesignMatrixError(
            "some covariates are combinations of others (for example two columns that always "
            "agree), so their effects cannot be told apart"
        )
    likelihood = _Likelihood(*_binomial_rows(x, y, w), p_false, p_true - p_false)
    cutoff = NormalDist().inv_cdf(0.5 + confidence / 2) ** 2  # χ²₁(confidence) = z²
    top, coefficients = _profiled(likelihood, names, cutoff)
    covariance = top.covariance()
    return RegressionFit(
        coefficients=coefficients,
        covariance=None
        if covariance is None
        else tuple(tuple(float(v) for v in row) for row in covariance),
        n=n,
        log_likelihood=top.point.log_likelihood,
        confidence=confidence,
        p_false=p_false,
        p_true=p_true,
    )


def _binomial_rows(x: Matrix, y: Vector, w: Vector | None) -> tuple[Matrix, Vector, Vector]:
    """The rows as (covariates, reports in the category, responses): one per response
    without ``weights``; with them, one per distinct covariate pattern, its "yes" and "no"
    rows merged. The likelihood is the same sum term for term (a binomial row's log-
    likelihood is its responses' Bernoulli terms added up), on half the rows or fewer,
    which every one of a profile's many fits passes over."""
    if w is None:
        return x, y, np.ones_like(y)
    order = np.lexsort(x.T[::-1])
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)])
    yes = np.add.reduceat((w * y)[order], starts)
    total = np.add.reduceat(w[order], starts)
    return np.ascontiguousarray(ordered[starts]), yes, total


def _profiled(
    likelihood: _Likelihood, names: Sequence[str], cutoff: float
) -> tuple[_Maximum, tuple[Coefficient, ...]]:
    """The maximum and every coefficient with its profile-likelihood interval.

    This likelihood need not be concave, and Newton can settle on a lesser top (typically
    running off towards "no one" while a steep slope explains a few reports better). The
    profiles search far along each coefficient; when one of their fits finds a higher
    likelihood, the maximum is refitted from there and the profiles start over (R's
    ``profile.glm`` stops at the same sign with "profiling has found a better solution").
    """
    top = likelihood.maximize()
    for _ in range(_REFITS):
        try:
            return top, tuple(
                _coefficient(likelihood, top, j, name, cutoff) for j, name in enumerate(names)
            )
        except _HigherFound as found:
            top = likelihood.maximize(found.beta)
    raise NotConvergedError(
        "the fit did not settle: the likelihood has several peaks and no clear highest one "
        "(try fewer covariates or more responses)"
    )


def _coefficient(
    likelihood: _Likelihood, top: _Maximum, j: int, name: str, cutoff: float
) -> Coefficient:
    """Column j's estimate, standard error and profile-likelihood interval.

    The search for each bound starts at Wald's half-width z·se, where a nearly quadratic
    likelihood puts the bound, so a well-behaved fit needs only a few constrained fits per
    bound; it starts no further than one unit of the linear predictor (``_unit``), the
    first step of a boundary fit, which has no standard error.
    """
    covariance = top.covariance()
    estimate = float(top.point.beta[j])
    unit = _unit(likelihood.x[:, j])
    std_error = None if covariance is None else float(np.sqrt(covariance[j, j]))
    first = unit if std_error is None else min(math.sqrt(cutoff) * std_error, unit)
    low, flat_low = _bound(_Profile(likelihood, top, j), estimate, -1.0, first, unit, cutoff)
    high, flat_high = _bound(_Profile(likelihood, top, j), estimate, 1.0, first, unit, cutoff)
    if covariance is not None:
        return Coefficient(name, estimate, std_error, low, high)
    # A boundary fit: a coefficient that ran off past the edge, or whose likelihood is as
    # high out at the edge as at its top, is estimated at that infinity (and not at all if
    # both ways: the data do not pin it down).
    flat_low = flat_low or estimate < -PROFILE_REACH * unit
    flat_high = flat_high or estimate > PROFILE_REACH * unit
    at_boundary = {(True, True): None, (True, False): -math.inf, (False, True): math.inf}
    return Coefficient(name, at_boundary.get((flat_low, flat_high), estimate), None, low, high)


def _exp(value: float) -> float:
    """e^value, ∞ past the largest float (a bound can sit 60 units of the linear predictor
    out on a covariate with a small range)."""
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def _unit(column: Vector) -> float:
    """How far β_j moves the linear predictor by one across the column's range (from its
    smallest to its largest value; for the intercept, everywhere)."""
    spread = float(np.ptp(column)) or float(np.max(np.abs(column)))
    return 1 / spread


def _bound(
    profile: _Profile, estimate: float, side: float, first: float, unit: float, cutoff: float
) -> tuple[float, bool]:
    """The profile-likelihood bound on one ``side`` (-1 or 1) of the estimate, and whether
    the likelihood is flat out to the edge (deviance there below ``_FLAT_DEVIANCE``).

    Points are stepped out from the estimate along a path of fits (``_Profile``) until the
    deviance passes the cutoff; ``brentq`` then finds the crossing between the last two.
    The first point is ``first`` away; the next ones where the signed root ±√deviance,
    close to a straight line in b, would pass the cutoff, 5% beyond, but at most twice as
    far as the last and at most ``_PROFILE_STRIDE`` units further (a longer step could
    land where the other coefficients need hundreds of Newton steps). If the deviance has
    not passed the cutoff by the edge, ±``PROFILE_REACH`` units of the linear predictor,
    the bound is infinite. A boundary fit's estimate may lie past the edge: the search
    then starts at the edge.

    The likelihood is not concave: where the information is low, the path stepped out
    can follow a lesser ridge (a moderate slope, or a steep one of the wrong sign) while
    another is within the cutoff far out. So unless the fit is plainly regular (the first
    point, Wald's bound, less than a unit out and its deviance within 20% of the cutoff),
    the edge is fitted again from several starts off the path (``_Profile.off_path``)
    before a finite bound is accepted; below the cutoff there, the bound is infinite (the
    interval is the smallest holding the whole confidence set).
    """
    edge = PROFILE_REACH * unit
    start = min(max(estimate, -edge), edge)
    if side * (estimate - start) > 0:  # run off past this edge
        at_edge = profile.deviance(side * edge)
        return side * math.inf, at_edge < _FLAT_DEVIANCE
    if start != estimate and profile.deviance(start) >= cutoff:
        return start, False  # the whole confidence set lies past the other edge
    span = edge - side * start
    inner, distance = start, first
    regular = start == estimate and first < unit
    while True:
        outer = side * edge if distance >= span else start + side * distance
        deviance = profile.deviance(outer)
        if deviance < cutoff and outer == side * edge:
            return side * math.inf, deviance < _FLAT_DEVIANCE
        if distance == first:
            regular = regular and 0.8 <= deviance / cutoff <= 1.25
        if deviance >= cutoff:
            break
        grow = min(2.0, 1.05 * math.sqrt(cutoff / deviance)) if deviance > 0 else 2.0
        inner, distance = outer, min(grow * distance, distance + _PROFILE_STRIDE * unit)
    if not regular:
        at_edge = profile.off_path(side * edge)
        if at_edge < cutoff:
            return side * math.inf, at_edge < _FLAT_DEVIANCE
    low, high = sorted((inner, outer))
    bound = brentq(
        lambda b: profile.deviance(b) - cutoff,
        low,
        high,
        xtol=min(1e-6 * first, 1e-8 * unit),
        rtol=1e-10,
    )
    return float(bound), False


class _HigherFound(Exception):
    """A profile's fit beat the maximum: ``beta`` is where, to refit from."""

    def __init__(self, beta: Vector) -> None:
        super().__init__()
        self.beta = beta


class _Profile:
    """Column j's profile deviance, 2·(ℓ(β̂) - max{ℓ(β) : β_j = b}), as a function of b.

    Fixing β_j = b is an offset b·x_j for a fit of the other columns. Each fit on the path
    stepped out starts where the last two fits' coefficients, drawn on as a straight line
    in b, put it (continuation): a few Newton steps from the answer, and on the same ridge
    of a likelihood that need not be concave, where starting from the last fit alone can
    let Newton hop to a lesser ridge nearby. A fit far out that has not settled after
    ``MAX_ITERATIONS`` steps counts as it stands: its deviance can only be too high, and
    such fits lie far beyond the cutoff, where a little too high changes nothing.
    """

    def __init__(self, likelihood: _Likelihood, top: _Maximum, j: int) -> None:
        self.j = j
        self.column = likelihood.x[:, j]
        self.others = likelihood.without(j)
        self.top = top.point.log_likelihood
        self.top_rest = np.delete(top.point.beta, j)
        self.path = [(float(top.point.beta[j]), self.top_rest)]
        self.known: dict[float, float] = {}

    def _start(self, b: float) -> Vector:
        """The other coefficients at b on the line through the path's last two fits."""
        if len(self.path) < 2:
            return self.path[-1][1]
        (b1, rest1), (b2, rest2) = self.path[-2:]
        return rest2 + (rest2 - rest1) * ((b - b2) / (b2 - b1))

    def _fit(self, b: float, start: Vector) -> _Maximum:
        return self.others.with_offset(b * self.column).maximize(start, settle=False)

    def deviance(self, b: float) -> float:
        """The deviance at b, from a fit on the path.

        The same b gives the same number (``brentq`` asks again for the ends of the
        bracket, and a fit from another start could land elsewhere on a likelihood that
        is not concave).
        """
        if b in self.known:
            return self.known[b]
        constrained = self._fit(b, self._start(b))
        if b != self.path[-1][0]:
            self.path.append((b, constrained.point.beta))
        self.known[b] = self._deviance(b, constrained)
        return self.known[b]

    def off_path(self, b: float) -> float:
        """The deviance at b from fits off the path: the best from β̂'s other coefficients,
        from no effects at all, and from the path's last fit and its mirror image (every
        other effect reversed), so that a ridge the path did not follow (a steep slope of
        the other sign, say) is found if it is higher."""
        last = self.path[-1][1]
        starts = (self.top_rest, np.zeros_like(last), last, -last)
        fits = (self._fit(b, start) for start in starts)
        return self._deviance(b, max(fits, key=lambda fit: fit.point.log_likelihood))

    def _deviance(self, b: float, constrained: _Maximum) -> float:
        """2·(ℓ(β̂) - ℓ of the fit); a fit higher than β̂ means β̂ was a lesser peak."""
        deviance = 2 * (self.top - constrained.point.log_likelihood)
        if deviance < -_HIGHER_DEVIANCE:
            raise _HigherFound(np.insert(constrained.point.beta, self.j, b))
        return deviance


def _gram(x: Matrix, weights: Vector | None = None) -> Matrix:
    """Σ wᵢ xᵢ xᵢᵀ, in blocks of rows that stay in the CPU's cache (twice as fast at 1M rows)."""
    total = np.zeros((x.shape[1], x.shape[1]))
    for start in range(0, x.shape[0], _GRAM_BLOCK):
        block = x[start : start + _GRAM_BLOCK]
        weighted = block if weights is None else block * weights[start : start + _GRAM_BLOCK, None]
        total += block.T @ weighted
    return total


class _Point:
    """The likelihood's pieces at one β, computed in one pass over the rows (see the module).

    A row holds ``yes`` reports in the category among ``total`` responses, so r is
    yes/μ - no/(1 - μ) and the first factor of the Hessian's weight yes/μ² + no/(1 - μ)².
    """

    def __init__(self, likelihood: _Likelihood, beta: Vector) -> None:
        self.beta = beta
        self.eta: Vector = likelihood.x @ beta
        if likelihood.offset is not None:
            self.eta += likelihood.offset
        self.s: Vector = expit(self.eta)
        mu = likelihood.slope * self.s + likelihood.p0
        # The chances of a report in the category and out of it; one reaches 0 only under
        # a plain design (p0 = 0 or p0 + t = 1), where the floor keeps the logarithm finite.
        inside, outside = np.maximum(mu, 1e-300), np.maximum(1 - mu, 1e-300)
        yes, no = likelihood.yes, likelihood.no
        self.log_likelihood = float(yes @ np.log(inside) + no @ np.log(outside))
        self.d: Vector = likelihood.slope * self.s * (1 - self.s)
        self.rd: Vector = (yes / inside - no / outside) * self.d
        self.curvature: Vector = (yes / inside**2 + no / outside**2) * self.d**2
        self.fisher: Vector = likelihood.total * self.d**2 / (inside * outside)

    def score(self, x: Matrix) -> Vector:
        return x.T @ self.rd

    def observed_weights(self) -> Vector:
        """-(yes/μ² + no/(1 - μ)²)·d² + r·d·(1 - 2s)."""
        return self.rd * (1 - 2 * self.s) - self.curvature

    def expected_weights(self) -> Vector:
        return -self.fisher


@dataclass(frozen=True)
class _Maximum:
    """Where the likelihood is highest: ``point``, with the observed ``information`` there
    (None when the fit ran off to infinity and stopped on the way)."""

    point: _Point
    information: Matrix | None

    def covariance(self) -> Matrix | None:
        """The inverse observed information, through its Cholesky factor; None on a boundary
        fit, whose information is singular."""
        if self.information is None or _far(self.point).any():
            return None
        inverse_factor = np.linalg.inv(np.linalg.cholesky(self.information))
        covariance: Matrix = inverse_factor.T @ inverse_factor
        return covariance


def _far(point: _Point) -> npt.NDArray[np.bool_]:
    """Rows whose fitted share is within e^-30 of 0 or 1: on the boundary."""
    return np.abs(point.eta) > SEPARATION_LINEAR_PREDICTOR


class _Likelihood:
    """The log-likelihood of the reports, with a fixed ``offset`` added to xᵀβ (a profile's
    fixed coefficient), and its maximization."""

    def __init__(
        self,
        x: Matrix,
        yes: Vector,
        total: Vector,
        p0: float,
        slope: float,
        offset: Vector | None = None,
    ) -> None:
        self.x, self.yes, self.total, self.offset = x, yes, total, offset
        self.no: Vector = total - yes
        self.p0, self.slope = p0, slope

    def without(self, j: int) -> _Likelihood:
        """The same reports over every column but j."""
        x = np.delete(self.x, j, axis=1)
        return _Likelihood(x, self.yes, self.total, self.p0, self.slope)

    def with_offset(self, offset: Vector) -> _Likelihood:
        return _Likelihood(self.x, self.yes, self.total, self.p0, self.slope, offset)

    def weighted(self, weights: Vector) -> Matrix:
        """Σ wᵢ xᵢ xᵢᵀ: the Hessian for the observed weights."""
        return _gram(self.x, weights)

    def maximize(self, start: Vector | None = None, settle: bool = True) -> _Maximum:
        """β̂ and the observed information there, from ``start`` (else ``_start()``).

        Stops when the Newton step from a point where the observed information is
        positive definite (a maximum's neighbourhood) is negligible: that point is β̂ to
        within the tolerance, and the information already computed gives its standard
        errors. A fit running off to infinity stops once it no longer gains (``_arrived``).
        After ``MAX_ITERATIONS`` steps it returns where it got to if that is on the
        boundary (shares creeping towards 0 or 1 across a covariate's close values gain
        ever less, long after the interval could tell) or if not asked to ``settle``, and
        raises ``NotConvergedError`` otherwise.
        """
        if self.x.shape[1] == 0:  # the profile of a one-column model: nothing left to fit
            return _Maximum(_Point(self, np.zeros(0)), None)
        point = _Point(self, self._start() if start is None else start)
        for _ in range(MAX_ITERATIONS):
            score = point.score(self.x)
            information = -self.weighted(point.observed_weights())
            step = _solve(information, score)
            if step is None:  # not concave here: Fisher's information, semidefinite
                step = _solve_semidefinite(-self.weighted(point.expected_weights()), score)
            elif np.max(np.abs(step)) < _STEP_TOLERANCE * (1 + np.max(np.abs(point.beta))):
                return _Maximum(point, information)
            candidate = self._line_search(point, step)
            if _arrived(point, candidate) or (not settle and _small(candidate, point)):
                return _Maximum(candidate, None)
            point = candidate
        if not settle or _far(point).any():  # a boundary fit still creeping outwards
            return _Maximum(point, None)
        raise NotConvergedError(
            f"the fit did not settle within {MAX_ITERATIONS} steps; the data may say too "
            "little about these covariates (try fewer covariates or more responses)"
        )

    def _line_search(self, point: _Point, step: Vector) -> _Point:
        """``point`` moved along ``step``: first shortened so that no row's linear predictor
        moves by more than ``_MAX_LINEAR_STEP``, then halved until the log-likelihood does
        not fall. Rows on the boundary moving further out do not count: a fit running off to
        infinity moves them far each step while the rows that still matter settle."""
        moves = self.x @ step
        outward = _far(point) & (moves * point.eta > 0)
        longest = float(np.max(np.abs(moves[~outward]), initial=0.0))
        scale = min(1.0, _MAX_LINEAR_STEP / longest) if longest > 0 else 1.0
        while True:
            candidate = _Point(self, point.beta + scale * step)
            if (
                candidate.log_likelihood >= point.log_likelihood - 1e-12 * abs(point.log_likelihood)
                or scale < 1e-10
            ):
                return candidate
            scale /= 2

    def _start(self) -> Vector:
        """Where Newton starts. On many rows: the estimate from every k-th row (about
        ``_SUBSAMPLE_ROWS``), already within sampling error of the answer, so the full data
        need only the two or three steps of Newton's quadratic end game. Otherwise (or if
        the subsample cannot be fitted, or its fit runs off to infinity): the overall share,
        estimated as for a single proportion, on a constant column 0 (the intercept), and 0
        for everything else."""
        rows = self.x.shape[0]
        if rows >= 4 * _SUBSAMPLE_ROWS:
            every = rows // _SUBSAMPLE_ROWS
            rows = slice(None, None, every)
            sample = _Likelihood(
                self.x[rows], self.yes[rows], self.total[rows], self.p0, self.slope
            )
            try:
                found = sample.maximize()
            except RegressionError:
                pass  # the full data decide; start as for any other fit
            else:
                if found.covariance() is not None:
                    return found.point.beta
        beta = np.zeros(self.x.shape[1])
        if np.all(self.x[:, 0] == self.x[0, 0]) and self.x[0, 0] != 0:
            reported = self.yes.sum() / self.total.sum()
            share = np.clip((reported - self.p0) / self.slope, 0.02, 0.98)
            beta[0] = logit(share) / self.x[0, 0]
        return beta


def _small(candidate: _Point, point: _Point) -> bool:
    """A move short enough that the next would change the log-likelihood by nothing a
    profile can see (Newton converges quadratically: the next move is about its square).
    Checking for a negligible next step costs one more pass over the rows, which the
    profile's many fits, wanting only the log-likelihood, skip."""
    moved = np.max(np.abs(candidate.beta - point.beta), initial=0.0)
    return bool(moved < _PROFILE_STEP_TOLERANCE * (1 + np.max(np.abs(point.beta), initial=0.0)))


def _arrived(point: _Point, candidate: _Point) -> bool:
    """Whether a fit running off to infinity has got there: the step gained (next to)
    nothing, some row's fitted share is on the boundary, and every such row was moving
    further out. A row on the boundary moving back in is a fit that overshot into the
    flat tail (a profile's warm start, say) and is finding its way back: not arrived."""
    gain = candidate.log_likelihood - point.log_likelihood
    far = _far(candidate)
    if gain > _VALUE_TOLERANCE * (1 + abs(point.log_likelihood)) or not far.any():
        return False
    outward = (candidate.eta - point.eta)[far] * candidate.eta[far] >= 0
    return bool(outward.all())


def _solve(information: Matrix, score: Vector) -> Vector | None:
    """The Newton step I⁻¹·score through I's Cholesky factor; None if I is not positive definite."""
    try:
        factor = np.linalg.cholesky(information)
    except np.linalg.LinAlgError:
        return None
    step: Vector = np.linalg.solve(factor.T, np.linalg.solve(factor, score))
    return step


def _solve_semidefinite(information: Matrix, score: Vector) -> Vector:
    """A Fisher scoring step for a semidefinite information: its eigenvalues floored at 1e-12
    of the largest. Fisher's information loses rank only where fitted shares reach 0 or 1
    (on the way to a boundary fit), and the score has no part along the lost directions,
    so the floor only lengthens steps there, which the line search then caps."""
    values, vectors = np.linalg.eigh(information)
    floor = max(float(values[-1]), 1e-300) * 1e-12
    step: Vector = vectors @ ((vectors.T @ score) / np.maximum(values, floor))
    return step


def fit_question(
    design: Design,
    mechanism: ProportionMechanism,
    option: int | None = None,
    confidence: float = 0.95,
) -> RegressionFit:
    """Fit ``design``'s outcome (a yes/no question, or one option of a choice) on its covariates."""
    reports, p_false, p_true = category_reports(design.outcome, mechanism, option)
    return fit_randomized_logistic(
        design.matrix, reports, p_false, p_true, design.names, confidence, design.weights
    )
