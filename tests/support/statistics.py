"""Statistical checks with known false-alarm rates, and a seeded source of randomness."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import chisquare


class Seeded:
    """A reproducible stand-in for ``secrets``: the same ``randbelow`` interface."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def randbelow(self, n: int, /) -> int:
        return self.random.randrange(n)


def five_se(p: float, trials: int) -> float:
    """Five standard errors of a share p observed in ``trials`` draws: a two-sided false
    alarm about once in 1.7 million runs, in the normal approximation."""
    return 5 * math.sqrt(p * (1 - p) / trials)


def within_five_se(hits: int, trials: int, p: float) -> bool:
    """Whether ``hits`` in ``trials`` draws is a share within five standard errors of p."""
    return abs(hits / trials - p) <= five_se(p, trials)


def assert_distribution(counts: Counter[Any], expected: Mapping[Any, float]) -> None:
    """Chi-square goodness of fit; cells expected below 5 draws are pooled with the rest.

    A p-value below 1e-6 fails: a false alarm about once in a million runs.
    """
    draws = sum(counts.values())
    assert set(counts) <= set(expected) or sum(expected.values()) < 1, set(counts) - set(expected)
    observed, wanted = [], []
    rest_observed, rest_wanted = draws, float(draws)
    for cell, probability in expected.items():
        if probability * draws >= 5:
            observed.append(counts.get(cell, 0))
            wanted.append(probability * draws)
            rest_observed -= counts.get(cell, 0)
            rest_wanted -= probability * draws
    if rest_wanted >= 1e-9 * draws:
        observed.append(rest_observed)
        wanted.append(rest_wanted)
    else:
        assert rest_observed == 0
    p_value = chisquare(observed, np.array(wanted) * sum(observed) / sum(wanted)).pvalue
    assert p_value > 1e-6, (p_value, observed, wanted)
