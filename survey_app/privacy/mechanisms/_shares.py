"""What the share mechanisms (yes/no and choice) have in common: option indexes, how far
one report moves a share, R's forced-response design, the choice's cells and words."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..rationals import parse_integer
from ..wire import Report
from ..words import Text
from .cells import ANSWERED, CellRule, TallyCell

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


def check_k(k: object) -> int:
    k = parse_integer(k, "k (the number of options)")
    if k < 2:
        raise ValueError(f"a choice needs at least 2 options, got k = {k}")
    return k


def option(value: object, k: int, what: str = "value") -> int:
    """An option index in 0..k-1, or a clear error."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < k:
        raise ValueError(f"{what} must be an option index in 0..{k - 1}, got {value!r}")
    return value


def share_influence(p_true: Fraction, p_false: Fraction, n: int) -> Fraction:
    """1/(n(p_true - p_false)): the most one report moves a share estimated from n reports.

    A report counts once or not at all in a category, so it moves the count by at most 1
    and the unbiased share (count/n - p_false)/(p_true - p_false) by this much.
    """
    if parse_integer(n, "n") < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return 1 / (n * (p_true - p_false))


def share_variance(p_true: Fraction, p_false: Fraction, share: Fraction) -> Fraction:
    """One report's variance of the unbiased share estimate when the true share is ``share``,
    exactly: λ(1 - λ)/(p_true - p_false)² with λ = p_false + (p_true - p_false)·share (a
    report is in the category or not: a Bernoulli(λ), scaled by 1/(p_true - p_false))."""
    rate = p_false + (p_true - p_false) * share
    return rate * (1 - rate) / (p_true - p_false) ** 2


def small_share_variance(p_true: Fraction, p_false: Fraction) -> float:
    """One report's variance of the unbiased share estimate at π = 0 (λ = p_false)."""
    return float(p_false * (1 - p_false) / (p_true - p_false) ** 2)


def summed_share_variance(p_true: Fraction, p_false: Fraction, k: int) -> float:
    """One report's variance of the k unbiased shares, summed over the options, at equal
    shares. At any other shares it is this less Σπ² - 1/k, the same for every mechanism
    (with λ_j = q + (p - q)π_j, Σλ_j(1 - λ_j) = Σλ_j - Σλ_j² and Σλ_j² = kq² + 2q(p - q) +
    (p - q)²Σπ²): so the order it puts mechanisms in holds whatever the truth."""
    return float(k * share_variance(p_true, p_false, Fraction(1, k)))


class ShareRates:
    """What a share mechanism of ``k`` options derives from its two exact rates
    (``exact_rates``: a member of the category reported in it, a non-member reported in
    it): the float rates the estimators use, the variance per report of the unbiased share
    at a share of 0, and ``auto``'s score, the shares' summed variance."""

    k: int

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]:
        raise NotImplementedError

    @property
    def p_true(self) -> float:
        return float(self.exact_rates[0])

    @property
    def p_false(self) -> float:
        return float(self.exact_rates[1])

    @property
    def small_share_variance(self) -> float:
        return small_share_variance(*self.exact_rates)

    @property
    def pair_rates(self) -> tuple[Fraction, Fraction]:
        """A report in one category only (yes/no, GRR): never in two at once."""
        return Fraction(0), Fraction(0)

    @property
    def auto_score(self) -> float:
        """The summed variance (``summed_share_variance``): the error of the whole
        distribution, ranked alike for every truth. (A rare option's variance alone, the
        score before, picked GRR where subset selection with sets of 2 has up to 1.03
        times less summed error: benchmarks/PEERS.md.)"""
        return summed_share_variance(*self.exact_rates, self.k)


def forced_known(p_true: Fraction, p_false: Fraction, outcome: str | None) -> dict[str, Any]:
    """R ``rr``'s forced-response design for a randomized share.

    ``rrreg`` models P(report 1 | x) = p1 + p·logistic(xᵀβ) with p + p0 + p1 = 1 (it checks
    the sum): so p = p_true - p_false, p1 = p_false (a "yes" whatever the truth) and p0 =
    1 - p_true (a "no" whatever the truth). From the exact fractions, so the three floats
    sum to 1 to R's 10 digits. ``outcome``: how a choice option becomes R's 0/1 outcome.
    """
    design: dict[str, Any] = {
        "design": "forced-known",
        "p": float(p_true - p_false),
        "p1": float(p_false),
        "p0": float(1 - p_true),
    }
    if outcome is not None:
        design["outcome"] = outcome
    return design


def option_cells(k: int) -> tuple[TallyCell, ...]:
    """A one-option report's cells: n, and per option index the reports of it."""
    return (ANSWERED, *(TallyCell(str(i), CellRule.EQUALS, i) for i in range(k)))


def option_texts(report: Report | None, options: Sequence[str]) -> list[tuple[Text | str, bool]]:
    """Every option, marked where it is the one stored."""
    return [(text, report == index) for index, text in enumerate(options)]


def option_index_support(k: int) -> tuple[str, ...]:
    """Every option index as the browser writes it."""
    return tuple(str(j) for j in range(k))


def simulated_options(values: npt.ArrayLike, k: int) -> npt.NDArray[np.int64]:
    """Simulated true options as an integer array, refusing anything not an index below k."""
    import numpy as np  # here only: see the module's TYPE_CHECKING note

    options = np.asarray(values)
    if not np.issubdtype(options.dtype, np.integer) or ((options < 0) | (options >= k)).any():
        raise ValueError(f"values must be option indices in 0..{k - 1}")
    return options.astype(np.int64)
