"""Which mechanism a question gets, from its type, its ε and the survey file's ``mechanism``.

``auto`` compares the exact variances of the candidates at the same ε, computed from the
rationals each would actually sample, and takes the smaller (ties: the simpler one).
"""

from __future__ import annotations

from fractions import Fraction

from .choice import GeneralizedRandomizedResponse, OptimizedUnaryEncoding
from .mechanism import FAIR_COINS, TwoCoinDesign
from .number import DiscreteLaplace, DuchiBinary

CHOICE_MECHANISMS = ("auto", "grr", "oue")
NUMBER_MECHANISMS = ("auto", "laplace", "duchi")


def yes_no_mechanism(epsilon: Fraction | None) -> TwoCoinDesign:
    """Fair coins (ε = ln 3) without an ε; otherwise the optimal binary design at that ε."""
    return FAIR_COINS if epsilon is None else TwoCoinDesign.from_epsilon(epsilon)


def choice_mechanism(
    k: int, epsilon: Fraction, name: str = "auto"
) -> GeneralizedRandomizedResponse | OptimizedUnaryEncoding:
    """GRR or OUE for k options at ε; ``auto`` takes the smaller variance for rare options.

    Rare options are where precision matters most, and there GRR's variance per report is
    (e^ε + k - 2)/(e^ε - 1)² against OUE's 4e^ε/(e^ε - 1)²: GRR wins iff k < 3e^ε + 2
    (Wang et al. 2017). The comparison uses the exact sampled probabilities.
    """
    if name not in CHOICE_MECHANISMS:
        raise ValueError(f"choice mechanism must be one of {', '.join(CHOICE_MECHANISMS)}")
    grr = GeneralizedRandomizedResponse.from_epsilon(k, epsilon) if name != "oue" else None
    oue = OptimizedUnaryEncoding.from_epsilon(k, epsilon) if name != "grr" else None
    if oue is None or (grr is not None and grr.small_share_variance <= oue.small_share_variance):
        assert grr is not None
        return grr
    return oue


def number_mechanism(
    min: int, max: int, epsilon: Fraction, name: str = "auto"
) -> DiscreteLaplace | DuchiBinary:
    """Discrete Laplace or Duchi's bit for integers in [min, max] at ε; ``auto`` takes the
    one whose unbiased report varies less around the true answer, at its worst answer
    (``worst_answer_variance``; ties: Laplace). Duchi wins at small ε, Laplace at large
    (for a wide range from ε ≈ 2.32, where 8·tanh²(ε/2) = ε²; sooner for a narrow one).

    Not ``worst_case_variance``: that adds the answers' own spread, up to Δ²/4, to
    Laplace's noise but not to Duchi's (whose two report values already span the range),
    and by that measure Duchi wins at every ε and Δ, since Var Z > (Δ/2)²(C² - 1) always.
    Around a concentrated population, which real ones usually are, Laplace at large ε is
    far more precise: its reports stay near the answers, Duchi's always sit ±(Δ/2)·C away.
    """
    if name not in NUMBER_MECHANISMS:
        raise ValueError(f"number mechanism must be one of {', '.join(NUMBER_MECHANISMS)}")
    laplace = DiscreteLaplace.from_epsilon(min, max, epsilon) if name != "duchi" else None
    duchi = DuchiBinary.from_epsilon(min, max, epsilon) if name != "laplace" else None
    if duchi is None or (
        laplace is not None and laplace.worst_answer_variance <= duchi.worst_answer_variance
    ):
        assert laplace is not None
        return laplace
    return duchi
