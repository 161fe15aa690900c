"""A sensitive share broken down by the groups of a plain covariate, and two groups compared.

Within one group the reports are what they are everywhere: each respondent's count is
Binomial(n_g, p_false + (p_true - p_false)·π_g), so every group is estimated by
``estimate.estimate_proportion`` with its interval methods, unchanged. Groups come from a
plain question (year of study, faculty): its answers are stored as given, so a group's
*size* is a count of plain answers, which the coins do not protect; this module is for the
dashboard, where researchers see exact sizes. Public pages release sizes through
``central`` instead.

Two groups hold different respondents, so their estimates are independent and their
difference θ_a - θ_b gets the MOVER interval (Zou & Donner 2008, "Construction of
confidence limits about effect measures"; for two Wilson intervals it is Newcombe's 1998
"method 10"): with points p_a, p_b and intervals [l_a, u_a], [l_b, u_b],

    low  = (p_a - p_b) - √((p_a - l_a)² + (u_b - p_b)²)
    high = (p_a - p_b) + √((u_a - p_a)² + (p_b - l_b)²).

Each group's point and interval are the ones the dashboard shows for it, but with the
interval's ends *not* clipped to the range (``estimate.share_interval``,
``means.mean_interval``): the boundary rule has already moved a point that strayed
outside the range onto its end (the maximum-likelihood estimate) and evaluated the
interval there, so the interval holds its point strictly inside. MOVER on the clipped
intervals failed: a group estimated at 0 or 1 (a share) or at min or max (a mean) had an
interval ending at its point, so one distance term collapsed to 0 and the interval
missed; with Clopper–Pearson groups of 30 and 300 under fair coins it covered 0.912 at
π = 1 vs 0.95. Each group's unclipped interval covers exactly when its shown one does, so
MOVER combines two intervals of at least nominal coverage, and the difference's point,
the difference of the two points, lies inside. The interval is then kept within the
differences possible (±1, ±(max - min)). Exact coverage (two binomials summed, for shares
and for Duchi's means) and simulated coverage (discrete Laplace means) are in
docs/COVERAGE.md.

Why not Wald (difference ± z·√(se_a² + se_b²)): its coverage collapses when a share is
near 0 or 1, where the binomial is skewed; MOVER inherits the skewed per-group intervals.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

import numpy as np

from .estimate import (
    DEFAULT_INTERVAL_METHOD,
    Estimate,
    Interval,
    estimate_proportion,
    share_interval,
)
from .means import MeanEstimate, estimate_number_mean, mean_interval, mean_interval_method
from .mechanisms import NumericMechanism, ProportionMechanism

# Below 30 respondents a group is not shown alone. Two reasons. Statistics: at the default
# design (fair coins, slope 1/2) the worst-case 95% half-width is 1.96/√n, ±0.36 at n = 30
# and wider below: a smaller group's "estimate" is mostly coin noise that invites
# over-reading. Disclosure: a group's size is a count of plain answers, and a cell of a
# handful of people (the only fourth-year in a faculty) points at who took part; official
# statistics suppress small cells for the same reason (thresholds of 10 to 30 are common).
MIN_GROUP_SIZE = 30


class GroupCount(NamedTuple):
    """One group's tallies: ``reported`` reports in the category among ``n`` respondents."""

    reported: int
    n: int


class GroupSums(NamedTuple):
    """One group's reports to a number question: how many, their sum and sum of squares."""

    n: int
    total: int
    total_squares: int


Tally = TypeVar("Tally", GroupCount, GroupSums)
Label = TypeVar("Label")
NewLabel = TypeVar("NewLabel")


@dataclass(frozen=True)
class GroupEstimate(Generic[Label]):
    """The estimate for ``groups``: one group, or several small ones pooled together.

    ``n`` and ``estimate`` are None when the group has fewer than ``MIN_GROUP_SIZE``
    respondents: ``withheld`` then says so, and neither its size nor its estimate is shown.
    """

    groups: tuple[Label, ...]
    n: int | None
    estimate: Estimate | MeanEstimate | None

    @property
    def pooled(self) -> bool:
        return len(self.groups) > 1

    @property
    def withheld(self) -> bool:
        return self.estimate is None

    @property
    def status(self) -> str:
        """What a table row shows: "withheld", "pooled" or "shown"."""
        return "withheld" if self.withheld else "pooled" if self.pooled else "shown"

    def relabelled(self, label: Callable[[Label], NewLabel]) -> GroupEstimate[NewLabel]:
        """The same estimate with its groups named otherwise (the app's group records)."""
        return GroupEstimate(tuple(label(group) for group in self.groups), self.n, self.estimate)


@dataclass(frozen=True)
class Difference:
    """π_a - π_b between two independent groups, with its MOVER interval at ``confidence``."""

    first: str
    second: str
    point: float
    low: float
    high: float
    confidence: float
    method: str


class GroupTooSmallError(ValueError):
    """A group below ``MIN_GROUP_SIZE`` was asked for on its own."""


def count_by_group(pairs: Iterable[tuple[str | None, bool]]) -> dict[str, GroupCount]:
    """Tally (group, reported in the category) pairs, one per response, into ``GroupCount``.

    A response whose group is None (the covariate was skipped) belongs to no group.
    """
    reported: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for group, in_category in pairs:
        if group is None:
            continue
        totals[group] += 1
        reported[group] += bool(in_category)
    return {group: GroupCount(reported[group], totals[group]) for group in totals}


def estimate_by_group(
    counts: Mapping[str, GroupCount],
    mechanism: ProportionMechanism,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
    min_size: int = MIN_GROUP_SIZE,
) -> tuple[GroupEstimate[str], ...]:
    """Each group's share estimate, in the order of ``counts``; small groups pooled.

    Groups with at least ``min_size`` respondents are estimated alone. The smaller ones
    are pooled into one last row when there are at least two of them and the pool
    reaches ``min_size`` (the pool is a real group, "everyone in those groups", so the
    estimate is valid for it); otherwise the small groups are withheld, one row each
    without size or estimate. A group with no respondents is withheld too.

    ``mechanism`` is the question's (yes/no: two coins; an option of a choice: GRR or
    OUE): only its ``p_true`` and ``p_false`` are used.
    """
    return _by_group(counts, _share_of(mechanism, confidence, method), min_size)


def means_by_group(
    sums: Mapping[str, GroupSums],
    mechanism: NumericMechanism,
    confidence: float = 0.95,
    min_size: int = MIN_GROUP_SIZE,
) -> tuple[GroupEstimate[str], ...]:
    """Each group's mean of a number question, pooled and withheld like the shares.

    Within a group the reports are what they are everywhere, so each group's mean is the
    dashboard's (``means.estimate_number_mean`` with the question's ``mechanism``).
    """
    return _by_group(sums, _mean_of(mechanism, confidence), min_size)


def _by_group(
    tallies: Mapping[str, Tally],
    estimate: Callable[[Tally], Estimate | MeanEstimate],
    min_size: int,
) -> tuple[GroupEstimate[str], ...]:
    min_size = operator.index(min_size)
    if min_size < 1:
        raise ValueError("the minimum group size must be at least 1")
    shown: list[GroupEstimate[str]] = []
    small: dict[str, Tally] = {}
    for group, tally in tallies.items():
        if tally.n >= min_size:
            shown.append(GroupEstimate((group,), tally.n, estimate(tally)))
        else:
            small[group] = tally
    pool = _pooled(list(small.values()))
    if len(small) >= 2 and pool is not None and pool.n >= min_size:
        shown.append(GroupEstimate(tuple(small), pool.n, estimate(pool)))
    else:
        shown.extend(GroupEstimate((group,), None, None) for group in small)
    return tuple(shown)


def _pooled(tallies: list[Tally]) -> Tally | None:
    """The tallies of several groups added up, field by field (None for no groups)."""
    if not tallies:
        return None
    kind = type(tallies[0])
    return kind(*(sum(column) for column in zip(*tallies, strict=True)))


def _share_of(
    mechanism: ProportionMechanism, confidence: float, method: str
) -> Callable[[GroupCount], Estimate]:
    def share(tally: GroupCount) -> Estimate:
        result = estimate_proportion(
            tally.reported, tally.n, mechanism.p_true, mechanism.p_false, confidence, method
        )
        assert result is not None  # n >= min_size >= 1
        return result

    return share


def _mean_of(mechanism: NumericMechanism, confidence: float) -> Callable[[GroupSums], MeanEstimate]:
    """One group's mean as the dashboard estimates it, for ``_by_group``."""

    def mean(tally: GroupSums) -> MeanEstimate:
        result = estimate_number_mean(mechanism, *tally, confidence)
        assert result is not None  # n >= min_size >= 1
        return result

    return mean


def group_difference(
    counts: Mapping[str, GroupCount],
    first: str,
    second: str,
    mechanism: ProportionMechanism,
    confidence: float = 0.95,
    method: str = DEFAULT_INTERVAL_METHOD,
    min_size: int = MIN_GROUP_SIZE,
) -> Difference:
    """π_first - π_second with its MOVER interval (module docstring), at ``confidence``.

    Each group's interval is ``estimate_proportion``'s at the same level, by ``method``,
    before clipping; the point is the difference of the shown points, in [-1, 1] and
    inside its interval. Both groups must have ``min_size`` respondents: a difference
    would show a small group's estimate by another name.
    """
    a, b = (
        share_interval(
            tally.reported, tally.n, mechanism.p_true, mechanism.p_false, confidence, method
        )
        for tally in _two_groups(counts, first, second, min_size)
    )
    return _difference(first, second, a, b, 1.0, confidence, f"mover-{method}")


def mean_difference(
    sums: Mapping[str, GroupSums],
    first: str,
    second: str,
    mechanism: NumericMechanism,
    confidence: float = 0.95,
    min_size: int = MIN_GROUP_SIZE,
) -> Difference:
    """μ_first - μ_second with the MOVER interval from the two groups' intervals before
    clipping (t, or exact for Duchi's bits), kept within ±(max - min)."""
    a, b = (
        mean_interval(mechanism, *tally, confidence)
        for tally in _two_groups(sums, first, second, min_size)
    )
    span = float(mechanism.max - mechanism.min)
    method = f"mover-{mean_interval_method(mechanism)}"
    return _difference(first, second, a, b, span, confidence, method)


def difference_interval(a: Interval, b: Interval, span: float) -> Interval:
    """θ_a - θ_b for two independent estimates (module docstring): the difference of the
    points and its MOVER interval, kept within ±``span``, the widest difference possible.

    Written with NumPy's elementwise functions, so it takes arrays as well as numbers:
    ``scripts/coverage_table.py`` evaluates it on every pair of counts at once.
    """
    point = a.point - b.point
    low = point - np.hypot(a.point - a.low, b.high - b.point)
    high = point + np.hypot(a.high - a.point, b.point - b.low)
    return Interval(point, np.maximum(low, -span), np.minimum(high, span))


def _two_groups(
    tallies: Mapping[str, Tally], first: str, second: str, min_size: int
) -> tuple[Tally, Tally]:
    if first == second:
        raise ValueError("choose two different groups to compare")
    for group in (first, second):
        if group not in tallies:
            raise ValueError(f"there is no group {group!r}")
        if tallies[group].n < min_size:
            raise GroupTooSmallError(
                f"group {group!r} has fewer than {min_size} respondents, too few to show alone"
            )
    return tallies[first], tallies[second]


def _difference(
    first: str,
    second: str,
    a: Interval,
    b: Interval,
    span: float,
    confidence: float,
    method: str,
) -> Difference:
    point, low, high = difference_interval(a, b, span)
    return Difference(
        first=first,
        second=second,
        point=float(point),
        low=float(low),
        high=float(high),
        confidence=confidence,
        method=method,
    )
