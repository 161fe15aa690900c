"""The share of people who tick each option of a tick-all-that-apply question.

Each report is about one option j, drawn uniformly (``mechanisms.sampled_option``), and
says "ticked" (b = 1) or not after randomized response. Given the n_j reports about j,
the count c_j of those saying "ticked" is exactly Binomial(n_j, λ_j) with λ_j = (1 - p) +
(2p - 1)·π_j: the respondents who drew j are a random n_j of them, each with the same
chance π_j of having ticked it. So, conditionally on n_j, option j is a yes/no question
answered n_j times and gets the same estimate and Clopper-Pearson interval
(``estimate_proportion``), whose coverage is at least nominal for every n_j and so over
all surveys too. The options' shares need not sum to 1 (several may be ticked), so there
is nothing to project: the plotted point is each option's clipped estimate.

Simultaneous intervals: each option at level 1 - α/k, so by the union bound all k hold
at once with probability at least 1 - α, as for a choice (``shares.estimate_choice``).
An option no report was about has no estimate (None): its interval is [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .estimate import DEFAULT_INTERVAL_METHOD, Estimate, estimate_proportion


@dataclass(frozen=True)
class TickedEstimate:
    """Each option's share of people who tick it.

    ``options[j]``: option j on its own at level ``confidence`` (None when no report was
    about it). ``simultaneous[j]``: option j at level 1 - (1 - confidence)/k, so that all
    k hold together with probability ≥ ``confidence``. ``about[j]``: n_j, the reports
    about option j, each option's own sample size.
    """

    options: tuple[Estimate | None, ...]
    simultaneous: tuple[Estimate | None, ...]
    about: tuple[int, ...]
    confidence: float
    method: str


def estimate_ticked(
    about: Sequence[int],
    ticked: Sequence[int],
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
) -> TickedEstimate | None:
    """Estimate every option's share from ``about[j]`` = n_j, the reports about option j,
    and ``ticked[j]`` = c_j, those of them saying "ticked" (the tally cells "j:0" + "j:1"
    and "j:1"). ``p_true``, ``p_false``: the mechanism's ``exact_rates``. None when no
    report was made at all."""
    if len(about) != len(ticked) or len(about) < 2:
        raise ValueError("need a count of reports and of ticks for each of at least 2 options")
    if not any(about):
        return None
    family_level = 1 - (1 - confidence) / len(about)

    def each(level: float) -> tuple[Estimate | None, ...]:
        return tuple(
            estimate_proportion(c, n, p_true, p_false, level, method)
            for c, n in zip(ticked, about, strict=True)
        )

    return TickedEstimate(
        options=each(confidence),
        simultaneous=each(family_level),
        about=tuple(about),
        confidence=confidence,
        method=method,
    )
