"""The piecewise mechanism's design search (``piecewise.py``): a design's exact figures
in either kind of number, and the search for the step, width, piecewise share and Duchi's
high report with the least worst-answer variance. Floats to search, Fractions to decide.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property
from typing import Generic, TypeVar

#: ``best_for`` tries steps 1..MAX_STEP (finer grids help small ranges place Duchi's
#: reports), while Δ·s stays within STEP_SPAN (up to 1024 gained at most 0.25% over
#: ε 0.5-8 and ranges 2-300, at four times the search).
MAX_STEP = 16
STEP_SPAN = 256
#: Widths up to this many are all tried; beyond, a golden-section search (smooth there).
FULL_SCAN = 2048
#: Widths beyond WIDEST·Δ·s are not tried: the best is near Δs at ε = 0.1, less above.
WIDEST = 2
#: The piecewise share α is kept to this denominator (short parameters, same variance
#: to well below a part in a million).
SHARE_DENOMINATOR = 1 << 16
#: How many of the float search's best designs are compared exactly.
EXACT_CANDIDATES = 4

#: Floats to search, Fractions to decide.
N = TypeVar("N", float, Fraction)


@dataclass(frozen=True)
class Window(Generic[N]):
    """A design's figures in one kind of number: floats to search, Fractions to decide."""

    span: int
    step: int
    width: int
    ratio: N

    @property
    def outputs(self) -> int:
        return self.span * self.step + self.width

    @cached_property
    def outside(self) -> N:
        return 1 / (self.width * self.ratio + self.outputs - self.width)

    @cached_property
    def inside(self) -> N:
        return self.ratio * self.outside

    @cached_property
    def slope(self) -> N:
        return (self.inside - self.outside) * self.width * self.step

    @cached_property
    def base(self) -> N:
        return self.outside * _sum(self.outputs) + (self.inside - self.outside) * _sum(self.width)

    def piecewise_variance(self, d: int) -> N:
        """Var((y - b)/a | d) for the piecewise part: its two moments, window and rest."""
        start, extra = self.step * d, self.inside - self.outside
        first = self.outside * _sum(self.outputs) + extra * (_sum(start + self.width) - _sum(start))
        second = self.outside * _squares(self.outputs) + extra * (
            _squares(start + self.width) - _squares(start)
        )
        return (second - first * first) / (self.slope * self.slope)

    def lean(self, high: int) -> N:
        return self.span * self.slope / (2 * (high - self.base) - self.span * self.slope)

    def top(self) -> int:
        """H: the least integer whose unbiased value is at least Duchi's Δ/2 + Δ/(2r₀),
        r₀ = (R - 1)/(R + 1), so that the lean it gives is at most r₀."""
        widest = (self.ratio + 1) / (self.ratio - 1)
        return math.ceil(self.base + self.slope * self.span * (1 + widest) / 2)

    def duchi_variance(self, d: int, high: int) -> N:
        """(Δ/2)²/r² - (d - Δ/2)²: Duchi's variance, (Δ/2)²(C² - u²)."""
        lean = self.lean(high)
        return (self.span**2 / (lean * lean) - (2 * d - self.span) ** 2) / 4

    def mixed_variance(self, d: int, high: int, share: N | int) -> N:
        return share * self.piecewise_variance(d) + (1 - share) * self.duchi_variance(d, high)

    def balanced_share(self, high: int) -> N | int:
        """α with equal variance at the end and at the middle (1 for Δ = 1: no middle)."""
        middle = self.span // 2
        duchi = self.duchi_variance(middle, high) - self.duchi_variance(0, high)
        piecewise = self.piecewise_variance(0) - self.piecewise_variance(middle)
        return duchi / (duchi + piecewise) if duchi > 0 else 1

    def worst(self, high: int, share: N | int) -> N:
        middle = self.span // 2
        return max(self.mixed_variance(0, high, share), self.mixed_variance(middle, high, share))


def _sum(n: int) -> int:
    """0 + 1 + … + (n - 1)."""
    return n * (n - 1) // 2


def _squares(n: int) -> int:
    """0² + 1² + … + (n - 1)²."""
    return (n - 1) * n * (2 * n - 1) // 6


def _exact_share(window: Window[Fraction], high: int) -> Fraction:
    """The balanced share kept to SHARE_DENOMINATOR, never 0."""
    share = Fraction(window.balanced_share(high)).limit_denominator(SHARE_DENOMINATOR)
    return max(share, Fraction(1, SHARE_DENOMINATOR))


@cache
def best_design(span: int, ratio: Fraction) -> tuple[int, int, Fraction, int]:
    """(step, width, share, high) with the least exact worst-answer variance among the
    float search's best few; ties to the smaller step, then width."""
    rough = float(ratio)
    found: list[tuple[float, int, int]] = []
    for step in range(1, _steps(span) + 1):

        def score(width: int, step: int = step) -> float:
            window = Window(span, step, width, rough)
            high = window.top()
            return window.worst(high, window.balanced_share(high))

        found.extend((score(width), step, width) for width in _widths(score, WIDEST * span * step))
    found.sort()

    def exact(candidate: tuple[float, int, int]) -> tuple[Fraction, int, int, Fraction, int]:
        _, step, width = candidate
        window = Window(span, step, width, ratio)
        high = window.top()
        share = _exact_share(window, high)
        return window.worst(high, share), step, width, share, high

    _, step, width, share, high = min(exact(c) for c in found[:EXACT_CANDIDATES])
    return step, width, share, high


def _steps(span: int) -> int:
    return max(1, min(MAX_STEP, STEP_SPAN // span))


def _widths(score: Callable[[int], float], widest: int) -> list[int]:
    """Every width up to FULL_SCAN; beyond, a golden-section search on the smooth score
    and the widths next to where it ends."""
    if widest <= FULL_SCAN:
        return list(range(1, widest + 1))
    low, high = 1, widest
    golden = (math.sqrt(5) - 1) / 2
    while high - low > 8:
        left = round(high - golden * (high - low))
        right = round(low + golden * (high - low))
        if score(left) <= score(right):
            high = right
        else:
            low = left
    return list(range(max(1, low - 8), high + 9))
