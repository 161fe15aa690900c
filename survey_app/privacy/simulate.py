"""Vectorized randomized response for simulations and benchmarks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .mechanism import TwoCoinDesign


def simulate_reports(
    true_answers: npt.ArrayLike, design: TwoCoinDesign, rng: np.random.Generator
) -> npt.NDArray[np.bool_]:
    """Randomize a whole array of simulated answers at once, element by element.

    For simulations, tests and benchmarks ONLY, never for real respondents: ``rng`` is
    a NumPy generator, usually seeded so results are reproducible, and anyone who knows
    the seed can replay every coin and recover every true answer. Real answers go
    through ``randomize`` (coins from ``secrets``) or the browser's
    ``crypto.getRandomValues``. The distribution is the same: each report is the truth
    with probability t, otherwise "yes" with probability f.
    """
    answers = np.asarray(true_answers)
    if answers.dtype != np.bool_:
        if not np.isin(answers, (0, 1)).all():
            raise ValueError("true_answers must be booleans (or 0/1)")
        answers = answers.astype(np.bool_)
    truthful = rng.random(answers.shape) < design.truth_probability
    forced_yes = rng.random(answers.shape) < design.forced_yes_probability
    return np.where(truthful, answers, forced_yes)
