"""How a central release counts one question's reports (``privacy.central``).

A page that promises to hide who took part shows a sensitive question's estimates from
noisy counts: how many answered, and counts made of their reports. Each randomized
mechanism says how its reports are counted (``Mechanism.central_counting``), so the
release asks it instead of naming it; the estimate from the noisy counts then follows the
mechanism's kind of answer (a share, or a mean).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CentralCounting:
    """How one question's reports become the counts (c_1, …, c_m) a release noises.

    ``categories``: m; ``contribution(report)``: what one report adds to the counts;
    ``report_sensitivity``: the largest ℓ1 size of a contribution, Δ; ``count_weight``:
    w, how much an error in n moves the estimate next to the same error in a count (1 for
    a share, which is at most 1; for a mean, the farthest an answer lies from ``centre``);
    ``centre``: what a number reported on the answer's scale is summed around (its one
    count is the sum of report - centre).
    """

    categories: int
    contribution: Callable[[Any], tuple[int, ...]]
    report_sensitivity: int = 1
    count_weight: int = 1
    centre: int = 0


def where_one(report: int) -> tuple[int, ...]:
    """A one-bit report's count: 1 where it is 1 (a reported "yes", Duchi's bit)."""
    return (int(report == 1),)
