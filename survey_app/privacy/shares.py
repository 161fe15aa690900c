"""Option shares of a choice question: per-option and simultaneous intervals, a display point.

Each option's report count is Binomial(n, p_false + (p_true - p_false)·π_j), so each share
is estimated exactly like a yes/no prevalence. Two additions for k options at once:

- Simultaneous intervals: each option's interval at level 1 - α/k. By the union bound the
  chance that any of the k misses is at most k·(α/k) = α, so "with 95% probability every
  option is within these bounds" holds, which k separate 95% intervals do not promise.
- A display point on the simplex ("norm-sub", Wang et al. 2020): the unbiased estimates
  can be negative and need not sum to 1 (OUE's never do exactly). Subtracting one common
  amount δ from every estimate and zeroing what falls below 0, with δ chosen so the rest
  sums to 1, gives shares a chart can show. It is the Euclidean projection onto the
  simplex. The unbiased values stay in ``options`` (``unclipped``) for exports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .estimate import DEFAULT_INTERVAL_METHOD, Estimate, estimate_proportion


@dataclass(frozen=True)
class ChoiceEstimate:
    """What can be said about each option's true share.

    ``options[j]``: option j on its own at level ``confidence``.
    ``simultaneous[j]``: option j at level 1 - (1 - confidence)/k (its ``confidence``
    field says so), so that all k intervals hold together with probability ≥ ``confidence``.
    ``display``: shares ≥ 0 summing to 1, for charts (norm-sub of the unbiased estimates).
    """

    options: tuple[Estimate, ...]
    simultaneous: tuple[Estimate, ...]
    display: tuple[float, ...]
    confidence: float
    method: str


def estimate_choice(
    counts: Sequence[int],
    n: int,
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> ChoiceEstimate | None:
    """Estimate every option's share from its report count (``counts[j]``) among ``n``.

    For GRR the counts sum to n; for OUE each is the number of reports with bit j set, and
    they need not. None when n is 0, as for a single proportion.
    """
    if len(counts) < 2:
        raise ValueError("a choice has at least 2 options")
    k = len(counts)
    family_level = 1 - (1 - confidence) / k
    single = [estimate_proportion(c, n, p_true, p_false, confidence, method) for c in counts]
    joint = [estimate_proportion(c, n, p_true, p_false, family_level, method) for c in counts]
    options = tuple(e for e in single if e is not None)
    together = tuple(e for e in joint if e is not None)
    if n == 0:
        return None
    return ChoiceEstimate(
        options=options,
        simultaneous=together,
        display=norm_sub(tuple(e.unclipped for e in options)),
        confidence=confidence,
        method=method,
    )


def norm_sub(estimates: Sequence[float]) -> tuple[float, ...]:
    """max(x_j - δ, 0) with the one δ that makes them sum to 1 (projection onto the simplex).

    Sorting the estimates from the largest, the options kept positive are the largest ρ
    for which x_(ρ) stays above the common amount (sum of the ρ largest - 1)/ρ.
    """
    if not estimates:
        raise ValueError("nothing to normalize")
    ordered = sorted(estimates, reverse=True)
    running = 0.0
    delta = 0.0
    for rank, value in enumerate(ordered, start=1):
        running += value
        candidate = (running - 1) / rank
        if value - candidate > 0:
            delta = candidate
    shares = [max(value - delta, 0.0) for value in estimates]
    total = sum(shares)
    return tuple(share / total for share in shares)  # removes the last float rounding
