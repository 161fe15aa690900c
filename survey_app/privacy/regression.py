"""Logistic regression of a sensitive yes/no answer on plain covariates, under the known design.

The server never sees the true answer, only a report that is "yes" with probability
p_false for a true "no" and p_true for a true "yes". If the true answer follows a logistic
model, P(yes | x) = logistic(xᵀβ), then the *report* follows

    P(report yes | x) = p0 + t·logistic(xᵀβ),   p0 = p_false, t = p_true - p_false,

a known affine squeeze of the logistic curve (two coins: p0 = (1 - t)f, slope t; the R
packages ``rr`` and ``RRreg`` fit the same likelihood). β is estimated by maximum
likelihood over the reports, with standard errors from the observed information
(the negative Hessian of the log-likelihood at the estimate) and Wald intervals
β̂ ± z·se.

Choice options work the same one option at a time: under GRR an option j is reported with
probability q + (p - q)·P(true = j | x), and under OUE bit j is 1 with probability
q + (1/2 - q)·P(true = j | x), so "option j versus the rest" is this model with
p0 = q. Each option gets its own β: k separate fits need not add up to a coherent
multinomial model, which is said next to the results. Numbers are not supported.

Maths, with s = logistic(η), η = xᵀβ, μ = p0 + t·s, d = dμ/dη = t·s(1 - s) and
r = y/μ - (1 - y)/(1 - μ) (the derivative of the log-likelihood with respect to μ):

    gradient  Σ r·d·x
    Hessian   Σ [-(y/μ² + (1 - y)/(1 - μ)²)·d² + r·d·(1 - 2s)] x xᵀ
    expected  Σ d²/(μ(1 - μ)) x xᵀ   (Fisher information, always positive definite)

Newton steps use the observed information when it is positive definite and Fisher's
otherwise (far from the maximum, where this likelihood is not concave), halving a step
until the log-likelihood rises.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy.special import expit, logit

from .choice import GeneralizedRandomizedResponse, OptimizedUnaryEncoding
from .mechanism import TwoCoinDesign

Matrix = npt.NDArray[np.float64]
Vector = npt.NDArray[np.float64]

# Rows needed per coefficient (the intercept included). Ten "events per variable" is the
# classic floor for plain logistic regression (Peduzzi et al. 1996); randomized reports
# carry far less information each, which the standard errors then show, but below this
# the fit is not worth attempting at all.
MIN_ROWS_PER_COEFFICIENT = 10
# |xᵀβ| beyond this means a fitted share within e^-30 ≈ 1e-13 of 0 or 1 for some row: the
# likelihood's maximum lies at infinity in some direction (separation).
SEPARATION_LINEAR_PREDICTOR = 30.0
MAX_ITERATIONS = 100
_STEP_TOLERANCE = 1e-9
_GRAM_BLOCK = 65_536
_SUBSAMPLE_ROWS = 50_000


class RegressionError(ValueError):
    """The regression cannot be fitted as asked; the message says why, in plain words."""


class TooFewRowsError(RegressionError):
    pass


class SeparationError(RegressionError):
    pass


class NotConvergedError(RegressionError):
    pass


class DesignMatrixError(RegressionError):
    """A covariate cannot be used: sensitive, constant, unknown, or collinear with others."""


class UnsupportedOutcomeError(RegressionError):
    pass


@dataclass(frozen=True)
class Coefficient:
    """One column's β̂ with its standard error and Wald interval at the fit's confidence."""

    name: str
    estimate: float
    std_error: float
    low: float
    high: float


@dataclass(frozen=True)
class RegressionFit:
    """A fitted model: ``coefficients`` in column order (the intercept first).

    ``covariance`` is the inverse observed information; ``log_likelihood`` is of the
    reports at β̂; ``n`` rows were used.
    """

    coefficients: tuple[Coefficient, ...]
    covariance: tuple[tuple[float, ...], ...]
    n: int
    log_likelihood: float
    confidence: float
    p_false: float
    p_true: float


@dataclass(frozen=True)
class Covariate:
    """A question used as a covariate: its key, its type and, for a choice, its option labels.

    ``sensitive`` is the question's flag; a sensitive question is refused, since its
    stored values are randomized reports, not answers.
    """

    key: str
    kind: Literal["number", "choice"]
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
        if covariate.kind not in ("number", "choice"):
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
    if covariate.kind == "number":
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
    outcome: Sequence[object],
    mechanism: TwoCoinDesign | GeneralizedRandomizedResponse | OptimizedUnaryEncoding,
    option: int | None = None,
) -> tuple[npt.NDArray[np.float64], float, float]:
    """The 0/1 "reported in the category" vector and (p_false, p_true) for a question's reports.

    Yes/no: the stored 1/0. GRR: whether the reported option is ``option``. OUE: bit
    ``option`` of the stored bits (a "0101" string or a sequence of 0/1).
    """
    if isinstance(mechanism, TwoCoinDesign):
        if option is not None:
            raise UnsupportedOutcomeError("a yes/no question has no options to choose from")
        return np.asarray(outcome, dtype=np.float64), mechanism.p_false, mechanism.p_true
    if not isinstance(mechanism, (GeneralizedRandomizedResponse, OptimizedUnaryEncoding)):
        raise UnsupportedOutcomeError(
            "regression is available for sensitive yes/no questions and for the options of "
            "sensitive choice questions, not for this question"
        )
    if option is None or not 0 <= operator.index(option) < mechanism.k:
        raise UnsupportedOutcomeError(f"choose an option between 0 and {mechanism.k - 1}")
    if isinstance(mechanism, GeneralizedRandomizedResponse):
        y = np.asarray(outcome, dtype=np.int64) == option
    else:
        y = np.array([_unary_bit(bits, option) for bits in outcome], dtype=np.bool_)
    return y.astype(np.float64), mechanism.p_false, mechanism.p_true


def _unary_bit(bits: object, option: int) -> bool:
    """Bit ``option`` of a stored unary report: a "0101" string or a sequence of 0/1."""
    if isinstance(bits, (str, Sequence)):
        return str(bits[option]) == "1"
    raise UnsupportedOutcomeError(f"{bits!r} is not a unary-encoded report")


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
    responses: the likelihood is the same, so a million responses with a few hundred
    distinct (covariates, report) rows fit in milliseconds.
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
    likelihood = _Likelihood(x, y, p_false, p_true - p_false, w)
    point, information = likelihood.maximize()
    # The inverse observed information at β̂, through its Cholesky factor.
    inverse_factor = np.linalg.inv(np.linalg.cholesky(information))
    covariance = inverse_factor.T @ inverse_factor
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    errors = np.sqrt(np.diag(covariance))
    return RegressionFit(
        coefficients=tuple(
            Coefficient(name, float(b), float(se), float(b - z * se), float(b + z * se))
            for name, b, se in zip(names, point.beta, errors, strict=True)
        ),
        covariance=tuple(tuple(float(v) for v in row) for row in covariance),
        n=n,
        log_likelihood=point.log_likelihood,
        confidence=confidence,
        p_false=p_false,
        p_true=p_true,
    )


def _gram(x: Matrix, weights: Vector | None = None) -> Matrix:
    """Σ wᵢ xᵢ xᵢᵀ, in blocks of rows that stay in the CPU's cache (twice as fast at 1M rows)."""
    total = np.zeros((x.shape[1], x.shape[1]))
    for start in range(0, x.shape[0], _GRAM_BLOCK):
        block = x[start : start + _GRAM_BLOCK]
        weighted = block if weights is None else block * weights[start : start + _GRAM_BLOCK, None]
        total += block.T @ weighted
    return total


class _Point:
    """The likelihood's pieces at one β, computed in one pass over the rows (see the module)."""

    def __init__(self, likelihood: _Likelihood, beta: Vector) -> None:
        self.beta = beta
        self.eta: Vector = likelihood.x @ beta
        self.s: Vector = expit(self.eta)
        self.mu: Vector = likelihood.slope * self.s + likelihood.p0
        y = likelihood.y
        # The chance of each row's actual report; it reaches 0 only under a plain design
        # (p0 = 0 or p0 + t = 1), where the floor keeps the logarithm finite.
        chance = np.maximum(np.where(y, self.mu, 1 - self.mu), 1e-300)
        self.w = likelihood.w
        self.log_likelihood = float(self._weigh(np.log(chance)).sum())
        self.d: Vector = likelihood.slope * self.s * (1 - self.s)
        self.rd: Vector = self.d / chance  # r·d, with r = ±1/chance: + for a report in the category
        np.negative(self.rd, out=self.rd, where=~y)

    def _weigh(self, per_row: Vector) -> Vector:
        """Each row's term times the number of responses the row stands for."""
        return per_row if self.w is None else per_row * self.w

    def score(self, x: Matrix) -> Vector:
        return x.T @ self._weigh(self.rd)

    def observed_weights(self) -> Vector:
        """-(y/μ² + (1 - y)/(1 - μ)²)·d² + r·d·(1 - 2s); for a 0/1 report the first factor is r²."""
        return self._weigh(self.rd * ((1 - 2 * self.s) - self.rd))

    def expected_weights(self) -> Vector:
        return self._weigh(-(self.d**2) / np.maximum(self.mu * (1 - self.mu), 1e-300))


class _Likelihood:
    """The log-likelihood of the reports and its maximization."""

    def __init__(
        self,
        x: Matrix,
        y: npt.NDArray[np.generic],
        p0: float,
        slope: float,
        w: Vector | None = None,
    ) -> None:
        self.x, self.p0, self.slope, self.w = x, p0, slope, w
        self.y: npt.NDArray[np.bool_] = y.astype(np.bool_)

    def weighted(self, weights: Vector) -> Matrix:
        """Σ wᵢ xᵢ xᵢᵀ: the Hessian for the observed weights."""
        return _gram(self.x, weights)

    def maximize(self) -> tuple[_Point, Matrix]:
        """β̂ and the observed information there.

        Stops when the Newton step from a point where the observed information is
        positive definite (a maximum's neighbourhood) is negligible: that point is β̂ to
        within the tolerance, and the information already computed gives its standard
        errors.
        """
        point = _Point(self, self._start())
        for _ in range(MAX_ITERATIONS):
            score = point.score(self.x)
            information = -self.weighted(point.observed_weights())
            step = _solve(information, score)
            if step is None:  # not concave here: Fisher's information, always definite
                step = _solve(-self.weighted(point.expected_weights()), score)
                if step is None:
                    raise NotConvergedError(
                        "the information matrix is singular; the covariates cannot be told apart"
                    )
            elif np.max(np.abs(step)) < _STEP_TOLERANCE * (1 + np.max(np.abs(point.beta))):
                return point, information
            scale = 1.0
            while True:  # halve the step until the log-likelihood does not fall
                candidate = _Point(self, point.beta + scale * step)
                if (
                    candidate.log_likelihood
                    >= point.log_likelihood - 1e-12 * abs(point.log_likelihood)
                    or scale < 1e-10
                ):
                    break
                scale /= 2
            point = candidate
            if np.max(np.abs(point.eta)) > SEPARATION_LINEAR_PREDICTOR:
                raise SeparationError(
                    "the estimates run off to infinity: in some group of respondents the "
                    "estimated share is 0% or 100%, so an effect cannot be measured "
                    "(merge small groups or drop a covariate)"
                )
        raise NotConvergedError(
            f"the fit did not settle within {MAX_ITERATIONS} steps; the data may say too "
            "little about these covariates (try fewer covariates or more responses)"
        )

    def _start(self) -> Vector:
        """Where Newton starts. On many rows: the estimate from every k-th row (about
        ``_SUBSAMPLE_ROWS``), already within sampling error of the answer, so the full data
        need only the two or three steps of Newton's quadratic end game. Otherwise (or if
        the subsample cannot be fitted): the overall share, estimated as for a single
        proportion, on a constant column 0 (the intercept), and 0 for everything else."""
        rows = self.x.shape[0]
        if rows >= 4 * _SUBSAMPLE_ROWS:
            every = rows // _SUBSAMPLE_ROWS
            sample_w = None if self.w is None else self.w[::every]
            sample = _Likelihood(self.x[::every], self.y[::every], self.p0, self.slope, sample_w)
            try:
                return sample.maximize()[0].beta
            except RegressionError:
                pass  # the full data decide; start as for any other fit
        beta = np.zeros(self.x.shape[1])
        if np.all(self.x[:, 0] == self.x[0, 0]) and self.x[0, 0] != 0:
            share = np.clip((np.average(self.y, weights=self.w) - self.p0) / self.slope, 0.02, 0.98)
            beta[0] = logit(share) / self.x[0, 0]
        return beta


def _solve(information: Matrix, score: Vector) -> Vector | None:
    """The Newton step I⁻¹·score through I's Cholesky factor; None if I is not positive definite."""
    try:
        factor = np.linalg.cholesky(information)
    except np.linalg.LinAlgError:
        return None
    step: Vector = np.linalg.solve(factor.T, np.linalg.solve(factor, score))
    return step


def fit_question(
    design: Design,
    mechanism: TwoCoinDesign | GeneralizedRandomizedResponse | OptimizedUnaryEncoding,
    option: int | None = None,
    confidence: float = 0.95,
) -> RegressionFit:
    """Fit ``design``'s outcome (a yes/no question, or one option of a choice) on its covariates."""
    reports, p_false, p_true = category_reports(design.outcome, mechanism, option)
    return fit_randomized_logistic(
        design.matrix, reports, p_false, p_true, design.names, confidence, design.weights
    )
