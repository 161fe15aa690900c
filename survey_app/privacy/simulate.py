"""Vectorized mechanisms for simulations, tests and benchmarks: NEVER for real respondents.

Every function here draws from a NumPy generator, usually seeded so results are
reproducible, and anyone who knows the seed can replay every coin and recover every true
answer. Real answers go through each mechanism's ``randomize`` (coins from ``secrets``) or
the browser's ``crypto.getRandomValues``. The report distributions are the same as the
real mechanisms' (a probability is compared with a 53-bit uniform, so it is matched to
within 2^-53; discrete Laplace noise is a difference of two geometric counts).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .choice import GeneralizedRandomizedResponse, OptimizedUnaryEncoding, PlainChoice
from .mechanism import Mechanism, TwoCoinDesign
from .number import DiscreteLaplace, DuchiBinary, PlainNumber


def simulate_reports(
    true_answers: npt.ArrayLike, design: TwoCoinDesign, rng: np.random.Generator
) -> npt.NDArray[np.bool_]:
    """Randomize a whole array of simulated yes/no answers at once, element by element.

    Each report is the truth with probability t, otherwise "yes" with probability f.
    """
    answers = np.asarray(true_answers)
    if answers.dtype != np.bool_:
        if not np.isin(answers, (0, 1)).all():
            raise ValueError("true_answers must be booleans (or 0/1)")
        answers = answers.astype(np.bool_)
    truthful = rng.random(answers.shape) < float(design.truth_probability)
    forced_yes = rng.random(answers.shape) < float(design.forced_yes_probability)
    return np.where(truthful, answers, forced_yes)


def _options(values: npt.ArrayLike, k: int) -> npt.NDArray[np.int64]:
    options = np.asarray(values)
    if not np.issubdtype(options.dtype, np.integer) or ((options < 0) | (options >= k)).any():
        raise ValueError(f"values must be option indices in 0..{k - 1}")
    return options.astype(np.int64)


def _numbers(values: npt.ArrayLike, low: int, high: int) -> npt.NDArray[np.int64]:
    numbers = np.asarray(values)
    if not np.issubdtype(numbers.dtype, np.integer) or ((numbers < low) | (numbers > high)).any():
        raise ValueError(f"values must be integers in [{low}, {high}]")
    return numbers.astype(np.int64)


def simulate_grr(
    values: npt.ArrayLike, mechanism: GeneralizedRandomizedResponse, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """GRR reports: the true option with p, else one of the other k - 1 uniformly."""
    truth = _options(values, mechanism.k)
    keep = rng.random(truth.shape) < float(mechanism.keep_probability)
    other = rng.integers(0, mechanism.k - 1, size=truth.shape)
    other = other + (other >= truth)  # skip the true index
    return np.where(keep, truth, other)


def simulate_oue(
    values: npt.ArrayLike, mechanism: OptimizedUnaryEncoding, rng: np.random.Generator
) -> npt.NDArray[np.int8]:
    """OUE reports: one row of k bits per value (shape values.shape + (k,))."""
    truth = _options(values, mechanism.k)
    is_true = truth[..., np.newaxis] == np.arange(mechanism.k)
    one = np.where(
        is_true, float(mechanism.one_probability), float(mechanism.flip_to_one_probability)
    )
    return (rng.random(one.shape) < one).astype(np.int8)


def simulate_discrete_laplace(
    values: npt.ArrayLike, mechanism: DiscreteLaplace, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """x + Z, Z the difference of two Geometric(1 - α) counts: two-sided geometric noise."""
    truth = _numbers(values, mechanism.min, mechanism.max)
    success = -math.expm1(-float(mechanism.gamma))  # 1 - α, exact for tiny γ too
    noise = rng.geometric(success, truth.shape) - rng.geometric(success, truth.shape)
    return truth + noise


def simulate_duchi(
    values: npt.ArrayLike, mechanism: DuchiBinary, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """Duchi reports: 1 with probability (1 + r·u)/2, u = (2x - min - max)/Δ."""
    truth = _numbers(values, mechanism.min, mechanism.max)
    u = (2 * truth - mechanism.min - mechanism.max) / mechanism.sensitivity
    one = 0.5 + float(mechanism.lean) * u / 2
    return (rng.random(truth.shape) < one).astype(np.int64)


def simulate(
    mechanism: Mechanism, values: npt.ArrayLike, rng: np.random.Generator
) -> npt.NDArray[np.generic]:
    """Reports for an array of simulated true values through any mechanism."""
    if isinstance(mechanism, TwoCoinDesign):
        return simulate_reports(values, mechanism, rng)
    if isinstance(mechanism, GeneralizedRandomizedResponse):
        return simulate_grr(values, mechanism, rng)
    if isinstance(mechanism, OptimizedUnaryEncoding):
        return simulate_oue(values, mechanism, rng)
    if isinstance(mechanism, DiscreteLaplace):
        return simulate_discrete_laplace(values, mechanism, rng)
    if isinstance(mechanism, DuchiBinary):
        return simulate_duchi(values, mechanism, rng)
    if isinstance(mechanism, PlainChoice):
        return _options(values, mechanism.k)
    if isinstance(mechanism, PlainNumber):
        return _numbers(values, mechanism.min, mechanism.max)
    raise ValueError(f"no simulator for {mechanism!r}")
