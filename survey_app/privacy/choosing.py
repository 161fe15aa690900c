"""Which mechanism a question gets, from its kind, its ε and the survey file's ``mechanism``.

``auto`` builds every randomized mechanism registered for the question's kind at the same
ε and takes the one with the smallest ``auto_score`` (ties: the earlier in the registry,
the simpler one). The scores are exact variances, computed from the rationals each
mechanism would actually sample:

- a choice: the variance of the k shares summed, at equal shares
  (``_shares.summed_share_variance``). At any other truth the sum differs by the same
  amount for every mechanism, so the ranking holds whatever the answers. Subset
  selection with its best set size ω (sets of one are GRR, so it only ever ties or wins)
  beats GRR and OUE at mid-range k: 1.33× less summed variance at k = 8, ε = 0.5. Against
  the best frequency oracle of five third-party libraries this is within 1.02 everywhere
  on k 2-64 × ε 0.5-4 (benchmarks/PEERS.md); a rare option's variance alone, the score
  before, picked GRR at k = 4, ε = 0.5 and k = 32, ε = 3, 1.027× the best.
- a number: one unbiased report's variance around the true answer, at its worst answer
  (``worst_answer_variance``; ties: Laplace). Duchi wins at small ε, Laplace at large (for
  a wide range from ε ≈ 2.32, where 8·tanh²(ε/2) = ε²; sooner for a narrow one). Not
  ``worst_case_variance``: that adds the answers' own spread, up to Δ²/4, to Laplace's
  noise but not to Duchi's (whose two report values already span the range), and by that
  measure Duchi wins at every ε and Δ, since Var Z > (Δ/2)²(C² - 1) always. Around a
  concentrated population, which real ones usually are, Laplace at large ε is far more
  precise: its reports stay near the answers, Duchi's always sit ±(Δ/2)·C away.
  The discrete piecewise mechanism (mixed with Duchi's bit) has the least worst-answer
  variance of all three from ε ≈ 0.6 (0.71× the best continuous formula's at ε = 4, and
  3.2× less than Laplace's on 0-50), so ``auto`` takes it there.
- tick all that apply: a rare option's variance per report. One mechanism so far, one
  sampled option with randomized response: coins on every option at ε/k never beat it
  there (``mechanisms/sampled_option.py``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import cast

from .mechanisms import (
    AUTO,
    FAIR_COINS,
    Mechanism,
    NumericMechanism,
    ProportionMechanism,
    TwoCoinDesign,
    file_names,
    plain,
    randomized,
)
from .question_types import AnswerSpace, QuestionType

CHOICE_MECHANISMS = file_names(QuestionType.CHOICE)
NUMBER_MECHANISMS = file_names(QuestionType.NUMBER)


def mechanism_for(
    space: AnswerSpace,
    epsilon: Fraction | None,
    name: str = AUTO,
    *,
    sensitive: bool = True,
    include_unwired: bool = False,
) -> Mechanism:
    """The mechanism for a question with answers ``space`` at ``epsilon``: the one the
    survey file names (its ``file_name``), or ``auto``'s pick; a plain question's when it
    is not ``sensitive``. ``include_unwired``: weigh the mechanisms the app cannot use yet
    too (``mechanisms.UNWIRED``), to compare them; never for a real survey."""
    if not sensitive:
        return plain(space.kind).for_answers(space, None)
    names = file_names(space.kind, include_unwired=include_unwired)
    if name not in names:
        raise ValueError(f"{space.kind} mechanism must be one of {', '.join(names)}")
    candidates = [
        mechanism.for_answers(space, epsilon)
        for mechanism in randomized(space.kind, include_unwired=include_unwired)
        if name in (AUTO, mechanism.file_name)
    ]
    return min(candidates, key=lambda mechanism: mechanism.auto_score)


def yes_no_mechanism(epsilon: Fraction | None) -> TwoCoinDesign:
    """Fair coins (ε = ln 3) without an ε; otherwise the optimal binary design at that ε."""
    return FAIR_COINS if epsilon is None else TwoCoinDesign.from_epsilon(epsilon)


def choice_mechanism(
    k: int, epsilon: Fraction, name: str = AUTO, *, include_unwired: bool = False
) -> ProportionMechanism:
    """The mechanism for one of k options at ε: the one named, or ``auto``'s pick
    (``include_unwired``: as for ``mechanism_for``)."""
    space = AnswerSpace(QuestionType.CHOICE, options=k)
    chosen = mechanism_for(space, epsilon, name, include_unwired=include_unwired)
    return cast(ProportionMechanism, chosen)


def number_mechanism(
    min: int, max: int, epsilon: Fraction, name: str = AUTO, *, include_unwired: bool = False
) -> NumericMechanism:
    """The mechanism for integers in [min, max] at ε: the one named, or ``auto``'s pick
    (``include_unwired``: as for ``mechanism_for``)."""
    space = AnswerSpace(QuestionType.NUMBER, min=min, max=max)
    chosen = mechanism_for(space, epsilon, name, include_unwired=include_unwired)
    return cast(NumericMechanism, chosen)
