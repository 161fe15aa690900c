"""Vectorized mechanisms for simulations, tests and benchmarks: NEVER for real respondents.

Every mechanism's ``simulate`` draws from a NumPy generator, usually seeded so results are
reproducible, and anyone who knows the seed can replay every coin and recover every true
answer. Real answers go through each mechanism's ``randomize`` (coins from ``secrets``) or
the browser's ``crypto.getRandomValues``. The report distributions are the same as the
real mechanisms' (a probability is compared with a 53-bit uniform, so it is matched to
within 2^-53; discrete Laplace noise is a difference of two geometric counts).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .mechanisms import Mechanism, TwoCoinDesign


def simulate_reports(
    true_answers: npt.ArrayLike, design: TwoCoinDesign, rng: np.random.Generator
) -> npt.NDArray[np.bool_]:
    """Randomize a whole array of simulated yes/no answers at once, element by element.

    Each report is the truth with probability t, otherwise "yes" with probability f.
    """
    return design.simulate(true_answers, rng)


def simulate(
    mechanism: Mechanism, values: npt.ArrayLike, rng: np.random.Generator
) -> npt.NDArray[np.generic]:
    """Reports for an array of simulated true values through any mechanism."""
    return mechanism.simulate(values, rng)
