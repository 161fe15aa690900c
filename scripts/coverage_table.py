"""Coverage of the dashboard's intervals, computed exactly where it can be: docs/COVERAGE.md.

Four parts, each through the app's own estimators:

1. A share (``estimate_prevalence``, Wilson and Clopper–Pearson): the reported count X is
   Binomial(n, λ) with λ = p0 + t·π, and X = x yields the interval [low_x, high_x], so the
   coverage at a true prevalence π is the finite sum

       C(π) = Σ_x pmf(x; n, p0 + t·π) · [low_x ≤ π ≤ high_x].

   C jumps wherever π crosses an interval endpoint. Between jumps the covered counts form
   a fixed range a..b (the bounds are non-decreasing in x), and P(a ≤ X ≤ b) is unimodal
   in λ, so each smooth piece takes its lowest values at its ends. The minimum is
   therefore searched over a fine grid plus, at every endpoint e, the value C(e) and the
   one-sided limits of C as π → e from below and from above (the same sum with one strict
   inequality). Those limits are where the infimum usually sits; it need not be attained.
2. A number's mean under Duchi's one bit (``estimate_number_mean``): the count of 1s is
   Binomial(n, (1 - r)/2 + r·s) with s = (μ - min)/Δ the mean's share of the range, so the
   same exact sum and search apply, in s.
3. The difference of two groups (``group_difference``, and ``mean_difference`` for
   Duchi): two independent binomials, so the coverage at (π₁, π₂) is the double sum over
   both counts, (n₁ + 1)(n₂ + 1) terms, at every point of a grid. Each group's interval
   before clipping is computed once per count by the app, and ``groups.difference_interval``
   combines all pairs at once (it takes arrays). The minimum is over the grid.
4. The difference of two discrete Laplace means (t intervals): no finite sum, so simulated
   with a fixed seed, and only with ``--simulate`` (minutes). Without it the simulated
   section is copied from the current docs/COVERAGE.md, so the fast exact part can be
   regenerated, and checked by ``tests/privacy/test_coverage.py``, on its own.

    python scripts/coverage_table.py -o docs/COVERAGE.md
    python scripts/coverage_table.py --simulate -o docs/COVERAGE.md
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.special import gammaln

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from survey_app.privacy import (  # noqa: E402
    DiscreteLaplace,
    DuchiBinary,
    SubsetSelection,
    TwoCoinDesign,
    estimate_mean,
    estimate_prevalence,
    simulate,
)
from survey_app.privacy.estimate import (  # noqa: E402
    Interval,
    estimate_proportion,
    share_interval,
)
from survey_app.privacy.groups import GroupSums, difference_interval, mean_difference  # noqa: E402
from survey_app.privacy.means import estimate_number_mean, mean_interval  # noqa: E402

DOC = ROOT / "docs" / "COVERAGE.md"
METHODS = ("wilson", "clopper-pearson")
METHOD_NAMES = {"wilson": "Wilson", "clopper-pearson": "Clopper–Pearson"}
SIZES = (10, 30, 50, 100, 300, 1000)
MAIN_CONFIDENCE = 0.95
OTHER_CONFIDENCES = (0.90, 0.99)
GRID_POINTS = 2001
COMMAND = "python scripts/coverage_table.py -o docs/COVERAGE.md"
SIMULATE_COMMAND = "python scripts/coverage_table.py --simulate -o docs/COVERAGE.md"
# What the lowest coverage of a 95% interval is held to: nominal, less half a point.
TARGET = 0.95 - 0.005

DUCHI_SIZES = (30, 100, 300, 1000)
DUCHI_EPSILONS = (0.5, 1.0, 2.0, 4.0)
NUMBER_RANGE = (0, 10)  # any range gives the same coverage, in shares of it

SUBSET_SIZES = (30, 100, 300)
SUBSET_SETTINGS = ((8, 0.5), (8, 1.0), (20, 2.0), (64, 3.0))  # the four (k, ε)

GROUP_SIZES = ((30, 300), (30, 30), (100, 1000), (300, 300))
# The points reported as bad for the earlier interval (groups of 30 and 300), both ways.
REPORTED_POINTS = ((1.0, 0.95), (0.95, 1.0), (0.02, 0.10), (0.10, 0.02))
# Shares for the grid of (π₁, π₂): every 1/64, where differences are exact in binary, and
# the ends more finely, where clipping used to bite.
GRID_SHARES = tuple(
    sorted({k / 64 for k in range(65)} | {0.01, 0.02, 0.05, 0.10, 0.90, 0.95, 0.98, 0.99})
)

SEED = 20_250_915
REPLICATES = 20_000  # standard error √(0.95·0.05/20000) = 0.0015 at nominal coverage
LAPLACE_EPSILONS = (1.0, 2.0, 4.0)
SIMULATED_POINTS = (*REPORTED_POINTS, (0.0, 0.0), (1.0, 1.0), (0.5, 0.5), (0.0, 1.0))
SIMULATED_BEGIN = "<!-- simulated: begin (written by --simulate; copied as it is otherwise) -->"
SIMULATED_END = "<!-- simulated: end -->"


@dataclass(frozen=True)
class NamedDesign:
    label: str
    design: TwoCoinDesign


DESIGNS = (
    NamedDesign("fair coins", TwoCoinDesign(0.5, 0.5)),
    NamedDesign("ε = 0.5", TwoCoinDesign.from_epsilon(0.5)),
    NamedDesign("ε = 2", TwoCoinDesign.from_epsilon(2.0)),
)
DIFFERENCE_DESIGNS = (
    NamedDesign("fair coins", TwoCoinDesign(0.5, 0.5)),
    NamedDesign("ε = 1", TwoCoinDesign.from_epsilon(1.0)),
)
# At ε = 1 Duchi's bit is the shares' ε = 1 design on the share of the range: same table.
DUCHI_DIFFERENCE_EPSILONS = (2.0,)


@dataclass(frozen=True)
class MinCoverage:
    """The infimum of the coverage over π ∈ [0, 1] and where it is reached.

    ``side`` is "" when the coverage at ``prevalence`` itself is the minimum, "below" or
    "above" when the minimum is the limit as π approaches ``prevalence`` from that side
    (an interval endpoint, where the coverage jumps).
    """

    coverage: float
    prevalence: float
    side: str
    bounds_monotone: bool


@dataclass(frozen=True)
class GridMinimum:
    """The lowest coverage over a grid of (π₁, π₂), where, and at the reported points."""

    coverage: float
    at: tuple[float, float]
    reported: tuple[float, ...]


# --- 1 and 2: one binomial ------------------------------------------------------------


def interval_bounds(
    n: int, design: TwoCoinDesign, confidence: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """low_x and high_x of the reported interval for π, for every count x = 0..n."""
    estimates = [estimate_prevalence(x, n, design, confidence, method) for x in range(n + 1)]
    low = np.array([e.low for e in estimates if e is not None])
    high = np.array([e.high for e in estimates if e is not None])
    return low, high


def duchi_bounds(n: int, mechanism: DuchiBinary, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """The mean's interval for every count of 1s x = 0..n, as shares of the range: the
    dashboard's exact one, or (``exact`` False) the t interval on the 0/1 reports."""
    low, span = mechanism.min, mechanism.max - mechanism.min

    def interval(x: int) -> tuple[float, float]:
        if exact:
            e = estimate_number_mean(mechanism, n, x, x, MAIN_CONFIDENCE)
        else:
            offset, scale = mechanism.value_offset, mechanism.value_scale
            e = estimate_mean(n, x, x, offset, scale, mechanism.min, mechanism.max)
        assert e is not None
        return (e.low - low) / span, (e.high - low) / span

    bounds = np.array([interval(x) for x in range(n + 1)])
    return bounds[:, 0], bounds[:, 1]


def rate_pmf(n: int, p0: float, slope: float, prevalences: np.ndarray) -> np.ndarray:
    """pmf(x; n, p0 + slope·π) as an (n + 1) × len(prevalences) matrix.

    Evaluated in log space (scipy.stats.binom.pmf agrees to about 1e-13 and is ~25 times
    slower). λ stays inside [p0, p0 + slope] ⊂ (0, 1), so both logarithms are finite.
    """
    x = np.arange(n + 1, dtype=float)[:, None]
    rate = p0 + slope * np.asarray(prevalences, dtype=float)[None, :]
    log_choose = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
    return np.exp(log_choose + x * np.log(rate) + (n - x) * np.log1p(-rate))


def binomial_pmf(n: int, design: TwoCoinDesign, prevalences: np.ndarray) -> np.ndarray:
    """``rate_pmf`` for a two-coin design: λ = P(yes | no) + t·π."""
    return rate_pmf(n, float(design.p_yes_given_no), float(design.truth_probability), prevalences)


def coverage(
    n: int, design: TwoCoinDesign, confidence: float, method: str, prevalences: Sequence[float]
) -> np.ndarray:
    """The exact coverage C(π) at each given prevalence."""
    low, high = interval_bounds(n, design, confidence, method)
    pis = np.asarray(prevalences, dtype=float)
    covered = (low[:, None] <= pis[None, :]) & (pis[None, :] <= high[:, None])
    return (binomial_pmf(n, design, pis) * covered).sum(axis=0)


def min_coverage(
    n: int,
    design: TwoCoinDesign,
    confidence: float,
    method: str,
    grid_points: int = GRID_POINTS,
) -> MinCoverage:
    """The infimum of C(π) over [0, 1]: a grid plus every endpoint and its one-sided limits."""
    low, high = interval_bounds(n, design, confidence, method)
    p0, slope = float(design.p_yes_given_no), float(design.truth_probability)
    return infimum(low, high, lambda pis: rate_pmf(n, p0, slope, pis), grid_points)


def infimum(
    low: np.ndarray,
    high: np.ndarray,
    pmf_at: Callable[[np.ndarray], np.ndarray],
    grid_points: int = GRID_POINTS,
) -> MinCoverage:
    """The infimum over π ∈ [0, 1] of Σ_x pmf_at(π)[x]·[low_x ≤ π ≤ high_x] (module
    docstring): a grid plus every endpoint e, C(e) and its one-sided limits."""
    grid = np.linspace(0.0, 1.0, grid_points)
    ends = np.unique(np.concatenate([low, high]))
    ends = ends[(ends >= 0.0) & (ends <= 1.0)]
    pis = np.concatenate([grid, ends])
    pmf = pmf_at(pis)

    lo, hi = low[:, None], high[:, None]
    at = pis[None, :]
    e, pmf_e = ends[None, :], pmf[:, grid_points:]
    values = (pmf * ((lo <= at) & (at <= hi))).sum(axis=0)
    from_below = (pmf_e * ((lo < e) & (e <= hi))).sum(axis=0)  # π ↑ e
    from_above = (pmf_e * ((lo <= e) & (e < hi))).sum(axis=0)  # π ↓ e
    # A limit from outside [0, 1] is no coverage of any prevalence.
    from_below[ends <= 0.0] = np.inf
    from_above[ends >= 1.0] = np.inf

    candidates = [(values, pis, ""), (from_below, ends, "below"), (from_above, ends, "above")]
    best = min(
        ((float(v[i]), float(p[i]), side) for v, p, side in candidates for i in [np.argmin(v)]),
        key=lambda c: (c[0], c[1]),
    )
    monotone = bool(np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0))
    return MinCoverage(coverage=best[0], prevalence=best[1], side=best[2], bounds_monotone=monotone)


def option_min_coverage(n: int, mechanism: SubsetSelection) -> MinCoverage:
    """The infimum of one option's 95% Clopper–Pearson interval's coverage over its true
    share: its count is Binomial(n, q + (p - q)·π), as a yes/no count is."""
    p_true, p_false = mechanism.p_true, mechanism.p_false
    estimates = [
        estimate_proportion(x, n, p_true, p_false, MAIN_CONFIDENCE, "clopper-pearson")
        for x in range(n + 1)
    ]
    low = np.array([e.low for e in estimates if e is not None])
    high = np.array([e.high for e in estimates if e is not None])
    return infimum(low, high, lambda pis: rate_pmf(n, p_false, p_true - p_false, pis))


def duchi_min_coverage(n: int, epsilon: float, exact: bool = True) -> MinCoverage:
    """The infimum of the Duchi mean interval's coverage over the true mean (``exact``:
    the dashboard's interval; otherwise the t interval it replaced)."""
    mechanism = DuchiBinary.from_epsilon(*NUMBER_RANGE, Fraction(epsilon))
    low, high = duchi_bounds(n, mechanism, exact)
    p0, slope = float((1 - mechanism.lean) / 2), float(mechanism.lean)
    return infimum(low, high, lambda pis: rate_pmf(n, p0, slope, pis))


# --- 3: two binomials ---------------------------------------------------------------------


def all_pairs(
    first: Sequence[Interval], second: Sequence[Interval], span: float
) -> tuple[np.ndarray, np.ndarray]:
    """low and high of the difference's interval, in shares of the range, for every pair
    of counts (x₁, x₂): an (n₁ + 1) × (n₂ + 1) array each, by ``difference_interval``."""
    a = Interval(*(np.array(column)[:, None] for column in zip(*first, strict=True)))
    b = Interval(*(np.array(column)[None, :] for column in zip(*second, strict=True)))
    _, low, high = difference_interval(a, b, span)
    return np.asarray(low) / span, np.asarray(high) / span


def grid_points() -> np.ndarray:
    """Every (π₁, π₂) of ``GRID_SHARES`` squared, then the reported points."""
    grid = [(a, b) for a in GRID_SHARES for b in GRID_SHARES]
    return np.array([*grid, *REPORTED_POINTS])


def pair_coverage(
    low: np.ndarray, high: np.ndarray, pmf_first: np.ndarray, pmf_second: np.ndarray, d: np.ndarray
) -> np.ndarray:
    """Σ pmf₁(x₁)·pmf₂(x₂)·[low ≤ d ≤ high] at each point (one column of each pmf and one
    d per point).

    Both bounds fall as x₂ grows (checked), so for each x₁ the covered x₂ are one run,
    from the first with low ≤ d to the last with high ≥ d, and the inner sum is a
    difference of two cumulative sums: (n₁ + 1) terms per point instead of
    (n₁ + 1)(n₂ + 1).
    """
    if not (np.all(np.diff(low, axis=1) <= 0) and np.all(np.diff(high, axis=1) <= 0)):
        raise ValueError("the bounds do not fall with the second count: no runs to sum")
    values, which = np.unique(d, return_inverse=True)
    # start[x₁, k]: how many x₂ have low > values[k]; stop: how many have high ≥ values[k].
    start = np.array([np.searchsorted(-row, -values, side="left") for row in low])
    stop = np.array([np.searchsorted(-row, -values, side="right") for row in high])
    stop = np.maximum(stop, start)
    cumulative = np.vstack([np.zeros(len(d)), np.cumsum(pmf_second, axis=0)])
    points = np.arange(len(d))
    inner = cumulative[stop[:, which], points] - cumulative[start[:, which], points]
    return (pmf_first * inner).sum(axis=0)


def difference_minimum(
    sizes: tuple[int, int],
    intervals: Callable[[int], list[Interval]],
    p0: float,
    slope: float,
    span: float,
) -> GridMinimum:
    """The lowest exact coverage of the difference over ``grid_points()``; ``intervals(n)``
    gives a group's interval before clipping for every count 0..n, in units where the range is
    [0, ``span``]."""
    n1, n2 = sizes
    low, high = all_pairs(intervals(n1), intervals(n2), span)
    points = grid_points()
    values = pair_coverage(
        low,
        high,
        rate_pmf(n1, p0, slope, points[:, 0]),
        rate_pmf(n2, p0, slope, points[:, 1]),
        points[:, 0] - points[:, 1],
    )
    grid = values[: -len(REPORTED_POINTS)]
    where = int(np.argmin(grid))
    return GridMinimum(
        float(grid[where]),
        (float(points[where, 0]), float(points[where, 1])),
        tuple(float(v) for v in values[-len(REPORTED_POINTS) :]),
    )


def share_difference_minimum(named: NamedDesign, sizes: tuple[int, int]) -> GridMinimum:
    """``difference_minimum`` for ``group_difference`` (Clopper–Pearson) under a design."""
    d = named.design

    def intervals(n: int) -> list[Interval]:
        return [share_interval(x, n, d.p_true, d.p_false) for x in range(n + 1)]

    return difference_minimum(
        sizes, intervals, float(d.p_yes_given_no), float(d.truth_probability), 1.0
    )


def duchi_difference_minimum(epsilon: float, sizes: tuple[int, int]) -> GridMinimum:
    """``difference_minimum`` for ``mean_difference`` under Duchi's bit at ε."""
    mechanism = DuchiBinary.from_epsilon(*NUMBER_RANGE, Fraction(epsilon))

    def intervals(n: int) -> list[Interval]:
        shifted = (mean_interval(mechanism, n, x, x) for x in range(n + 1))
        return [Interval(*(v - mechanism.min for v in i)) for i in shifted]

    p0, slope = float((1 - mechanism.lean) / 2), float(mechanism.lean)
    return difference_minimum(sizes, intervals, p0, slope, NUMBER_RANGE[1] - NUMBER_RANGE[0])


# --- 4: simulated ----------------------------------------------------------------------


def laplace_difference_coverage(
    epsilon: float,
    sizes: tuple[int, int],
    shares: tuple[float, float],
    rng: np.random.Generator,
    replicates: int = REPLICATES,
) -> float:
    """The share of simulated surveys whose ``mean_difference`` covers the truth: in each
    group a share s of the answers at max and the rest at min (the widest spread for its
    mean), reported through discrete Laplace at ε."""
    low, high = NUMBER_RANGE
    mechanism = DiscreteLaplace.from_epsilon(low, high, Fraction(epsilon))
    sums = []
    for n, share in zip(sizes, shares, strict=True):
        answers = np.where(rng.random((replicates, n)) < share, high, low)
        reports = simulate(mechanism, answers, rng).astype(np.int64)
        sums.append((reports.sum(axis=1), (reports * reports).sum(axis=1)))
    truth = (high - low) * (shares[0] - shares[1])
    covered = 0
    for r in range(replicates):
        groups = {
            name: GroupSums(n, int(total[r]), int(squares[r]))
            for name, n, (total, squares) in zip("ab", sizes, sums, strict=True)
        }
        difference = mean_difference(groups, "a", "b", mechanism, MAIN_CONFIDENCE)
        covered += difference.low <= truth <= difference.high
    return covered / replicates


def simulated_section(replicates: int = REPLICATES, seed: int = SEED) -> list[str]:
    """The Laplace table, one seeded generator for the whole of it, in table order."""
    rng = np.random.default_rng(seed)
    results = {
        (epsilon, sizes, point): laplace_difference_coverage(epsilon, sizes, point, rng, replicates)
        for epsilon in LAPLACE_EPSILONS
        for sizes in GROUP_SIZES
        for point in SIMULATED_POINTS
    }
    lowest = min(results.items(), key=lambda item: item[1])
    error = math.sqrt(0.95 * 0.05 / replicates)
    (epsilon, sizes, point), value = lowest
    out = [
        "## The difference of two means under discrete Laplace (simulated)",
        "",
        f"{replicates:,} simulated surveys per cell (`--simulate`), NumPy's",
        f"`default_rng({seed})` drawn in table order, so the standard error of a coverage",
        f"near 0.95 is {error:.4f}. In each group a share s of the answers sits at max and the",
        f"rest at min (range {NUMBER_RANGE[0]}–{NUMBER_RANGE[1]}: the widest spread for the mean",
        "min + s·Δ), reported through discrete Laplace; the interval is `mean_difference`'s",
        "MOVER on the groups' t intervals before clipping, 95% confidence. Columns are",
        f"(s₁, s₂). The lowest of these {len(results)} cells falls about 2.5 standard errors",
        "below the true coverage by chance alone.",
        "",
        f"**Minimum {floor4(value)}** (ε = {epsilon:g}, groups {sizes[0]}/{sizes[1]}, "
        f"s = {point[0]:g} vs {point[1]:g}); {verdict(value)}.",
        "",
        "| ε | n₁ / n₂ | " + " | ".join(f"({a:g}, {b:g})" for a, b in SIMULATED_POINTS) + " |",
        "|---:|---:|" + "---:|" * len(SIMULATED_POINTS),
    ]
    for epsilon in LAPLACE_EPSILONS:
        for sizes in GROUP_SIZES:
            cells = [floor4(results[(epsilon, sizes, p)]) for p in SIMULATED_POINTS]
            out.append(f"| {epsilon:g} | {sizes[0]} / {sizes[1]} | " + " | ".join(cells) + " |")
    return out


def kept_simulated_section(text: str) -> list[str] | None:
    """The simulated section between its markers in ``text``, or None when there is none."""
    lines = text.split("\n")
    if SIMULATED_BEGIN not in lines or SIMULATED_END not in lines:
        return None
    return lines[lines.index(SIMULATED_BEGIN) + 1 : lines.index(SIMULATED_END)]


# --- the document ------------------------------------------------------------------------


def floor_to(value: float, digits: int) -> str:
    """Rounded down: a minimum is never displayed higher than it is."""
    scale = 10**digits
    return f"{math.floor(value * scale + 1e-9) / scale:.{digits}f}"


def floor4(value: float) -> str:
    return floor_to(value, 4)


def verdict(minimum: float) -> str:
    """Whether a table's minimum meets ``TARGET``."""
    met = "met" if minimum >= TARGET else "NOT met"
    return f"target ≥ {TARGET:.3f}: {met}"


def where(result: MinCoverage) -> str:
    if result.coverage > 1 - 1e-9:
        return "any"  # every interval is [0, 1]: the argmin is rounding noise
    mark = {"": "", "below": "⁻", "above": "⁺"}[result.side]
    return f"{result.prevalence:.4f}{mark}"


def design_description(named: NamedDesign) -> str:
    d = named.design
    return (
        f"{named.label}: t = {float(d.truth_probability):.4f}, "
        f"f = {float(d.forced_yes_probability):.4f}, ε = {d.epsilon:.4f}; "
        f"λ runs over [{float(d.p_yes_given_no):.4f}, {float(d.p_yes_given_yes):.4f}]"
    )


def compute_all(
    sizes: Sequence[int] = SIZES,
    designs: Sequence[NamedDesign] = DESIGNS,
    confidences: Sequence[float] = (MAIN_CONFIDENCE, *OTHER_CONFIDENCES),
) -> dict[tuple[str, float, str, int], MinCoverage]:
    """min_coverage for every (design label, confidence, method, n)."""
    return {
        (named.label, confidence, method, n): min_coverage(n, named.design, confidence, method)
        for named in designs
        for confidence in confidences
        for method in METHODS
        for n in sizes
    }


def render(simulated: Sequence[str] | None = None) -> str:
    """The whole of docs/COVERAGE.md; the simulated section as given, else as it stands
    in docs/COVERAGE.md."""
    if simulated is None:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        simulated = kept_simulated_section(current) or [
            "Not generated yet: run `" + SIMULATE_COMMAND + "`."
        ]
    return "\n".join(
        [
            *introduction(),
            *prevalence_section(),
            *subset_section(),
            *duchi_section(),
            *difference_section(),
            SIMULATED_BEGIN,
            *simulated,
            SIMULATED_END,
            "",
        ]
    )


def introduction() -> list[str]:
    return [
        "# Coverage of the dashboard's intervals",
        "",
        "Generated by `scripts/coverage_table.py`. Regenerate with",
        "",
        f"    {COMMAND}",
        "",
        "Do not edit by hand: `tests/privacy/test_coverage.py` checks that this file matches the",
        "script's output, all but the last section. That one is simulated and takes",
        "minutes, so only",
        "",
        f"    {SIMULATE_COMMAND}",
        "",
        "rewrites it; otherwise it is copied as it stands.",
        "",
        "The coverage of a confidence interval at a truth is the probability, over the",
        "randomized answers, that the interval the app reports contains that truth. A 95%",
        "interval should cover at least 95% of the time *whatever the truth is*; each table",
        "gives the lowest coverage over the truths and where it occurs. Minima are rounded",
        "*down*.",
        "",
    ]


def prevalence_section(
    sizes: Sequence[int] = SIZES,
    designs: Sequence[NamedDesign] = DESIGNS,
    main_confidence: float = MAIN_CONFIDENCE,
    other_confidences: Sequence[float] = OTHER_CONFIDENCES,
) -> list[str]:
    results = compute_all(sizes, designs, (main_confidence, *other_confidences))
    wilson, cp = (METHOD_NAMES[m] for m in METHODS)
    out = [
        "## A share: the prevalence intervals",
        "",
        "### How it is computed",
        "",
        "Exactly, not by simulation. The reported-yes count X is Binomial(n, λ) with",
        "λ = p0 + t·π, and X = x yields the interval [low_x, high_x], so",
        "",
        "    C(π) = Σ_{x=0..n} pmf(x; n, p0 + t·π) · [low_x ≤ π ≤ high_x].",
        "",
        "Each count's interval is computed once (n + 1 calls to `estimate_prevalence`, with",
        "its boundary rule and clipping). C jumps where π crosses an interval endpoint;",
        "between jumps the covered counts are a fixed range a..b and P(a ≤ X ≤ b) is",
        "unimodal in λ, so the lowest values sit at the jumps. The minimum is taken over a",
        f"grid of {GRID_POINTS} prevalences plus, at every endpoint e, C(e) and the one-sided",
        "limits of C as π approaches e from below (⁻) and from above (⁺). A marked π means",
        "the minimum is such a limit: coverage gets arbitrarily close to it near that π but",
        'does not reach it. Minima are rounded *down* to four decimals; "any" means every',
        "interval is [0, 1], so the coverage is 1 at every π.",
        "",
        "Designs (f = 1/2 is the optimal binary design at a given ε):",
        "",
    ]
    out += [f"- {design_description(named)}" for named in designs]

    monotone = all(r.bounds_monotone for r in results.values())
    if not monotone:
        out += [
            "",
            "**Note:** some interval bounds are not monotone in the count, so the covered",
            "counts may not be a range; the grid still bounds the minimum from above.",
        ]

    def rows_below(method: str, confidence: float) -> list[tuple[str, int]]:
        return [
            (named.label, n)
            for named in designs
            for n in sizes
            if results[(named.label, confidence, method, n)].coverage < confidence
        ]

    out += ["", "### Summary", ""]
    for confidence in (main_confidence, *other_confidences):
        level = f"{confidence:.0%}"
        cp_below = rows_below("clopper-pearson", confidence)
        w_below = rows_below("wilson", confidence)
        total = len(designs) * len(sizes)
        cp_text = (
            f"{cp} never falls below nominal"
            if not cp_below
            else f"{cp} falls below nominal in {len(cp_below)} of {total} cases"
        )
        lowest = min(
            [
                (results[(named.label, confidence, "wilson", n)], named.label, n)
                for named in designs
                for n in sizes
            ],
            key=lambda item: (item[0].coverage, item[0].prevalence),
        )
        out.append(
            f"- At {level}: {cp_text}; {wilson} falls below it in {len(w_below)} of "
            f"{total} (design, n) cases, lowest {floor4(lowest[0].coverage)} "
            f"({lowest[1]}, n = {lowest[2]}, π ≈ {lowest[0].prevalence:.2f})."
        )
    out += [
        "",
        f"{cp} is exact: its coverage is never below the nominal level, for any n and",
        f"π. {wilson} is close to nominal on average but dips below it at some π, most at",
        "small n, which is why the default method is Clopper–Pearson.",
    ]

    out += ["", f"### {main_confidence:.0%} confidence", ""]
    for named in designs:
        out += [
            f"#### {named.label}",
            "",
            f"| n | {wilson} min | at π | {cp} min | at π |",
            "|---:|---:|---:|---:|---:|",
        ]
        for n in sizes:
            w = results[(named.label, main_confidence, "wilson", n)]
            c = results[(named.label, main_confidence, "clopper-pearson", n)]
            out.append(
                f"| {n} | {floor4(w.coverage)} | {where(w)} | {floor4(c.coverage)} | {where(c)} |"
            )
        out.append("")

    for confidence in other_confidences:
        out += [f"### {confidence:.0%} confidence (minimum coverage only)", ""]
        header = ["n"] + [f"{d.label}: {METHOD_NAMES[m]}" for d in designs for m in METHODS]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---:|" * len(header))
        for n in sizes:
            cells = [str(n)] + [
                floor4(results[(d.label, confidence, m, n)].coverage)
                for d in designs
                for m in METHODS
            ]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


def subset_section() -> list[str]:
    mechanisms = {
        (k, epsilon): SubsetSelection.best_for(k, Fraction(epsilon))
        for k, epsilon in SUBSET_SETTINGS
    }
    results = {
        (setting, n): option_min_coverage(n, mechanism)
        for setting, mechanism in mechanisms.items()
        for n in SUBSET_SIZES
    }
    lowest = min(results.items(), key=lambda item: item[1].coverage)
    (k, epsilon), n = lowest[0]
    out = [
        "## A choice's option under subset selection",
        "",
        "Each report is a set of ω options, holding the true one with probability p and any",
        "other with q; an option's count is Binomial(n, q + (p − q)·π), so its interval",
        "(`estimate_proportion`, Clopper–Pearson, 95%) has the exact coverage of a share's,",
        "in its own π, whatever the other options' shares. The settings are those where",
        "`auto` picks subset selection over GRR and OUE.",
        "",
        f"**Minimum {floor4(lowest[1].coverage)}** (k = {k}, ε = {epsilon:g}, n = {n}); "
        f"{verdict(lowest[1].coverage)}.",
        "",
        "| k | ε | ω | n | min | at π |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for (k, epsilon), mechanism in mechanisms.items():
        for n in SUBSET_SIZES:
            result = results[((k, epsilon), n)]
            out.append(
                f"| {k} | {epsilon:g} | {mechanism.size} | {n} | {floor4(result.coverage)} "
                f"| {where(result)} |"
            )
    out.append("")
    return out


def duchi_section() -> list[str]:
    results = {
        (epsilon, n, exact): duchi_min_coverage(n, epsilon, exact)
        for epsilon in DUCHI_EPSILONS
        for n in DUCHI_SIZES
        for exact in (True, False)
    }
    if not all(r.bounds_monotone for (_, _, exact), r in results.items() if exact):
        raise ValueError("the exact interval's bounds should grow with the count of 1s")
    lowest = min(
        ((r, epsilon, n) for (epsilon, n, exact), r in results.items() if exact),
        key=lambda item: item[0].coverage,
    )
    out = [
        "## A number's mean under Duchi's one bit",
        "",
        "The count of 1s is Binomial(n, (1 − r)/2 + r·s), r = tanh(ε/2) as sampled and",
        "s = (μ − min)/Δ the true mean's share of the range (it depends on the answers only",
        "through their mean), so the same exact sum and search apply, in s. The interval is",
        "the dashboard's (`estimate_number_mean`: Clopper–Pearson on the count, mapped to",
        "min + Δ·s, with the shares' boundary rule); beside it, the t interval on the 0/1",
        "reports that it replaced. 95% confidence.",
        "",
        *(
            []
            if all(r.bounds_monotone for (_, _, exact), r in results.items() if not exact)
            else [
                "The t interval's bounds are not monotone in the count (its width peaks where",
                "half the reports are 1), so its covered counts need not be a range and its",
                "column is the minimum over the grid and the endpoints: an upper bound on the",
                "infimum.",
                "",
            ]
        ),
        f"**Minimum {floor4(lowest[0].coverage)}** (ε = {lowest[1]:g}, n = {lowest[2]}); "
        f"{verdict(lowest[0].coverage)}.",
        "",
        "| ε | n | exact min | at s | t interval min | at s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for epsilon in DUCHI_EPSILONS:
        for n in DUCHI_SIZES:
            e, t = results[(epsilon, n, True)], results[(epsilon, n, False)]
            out.append(
                f"| {epsilon:g} | {n} | {floor4(e.coverage)} | {where(e)} "
                f"| {floor4(t.coverage)} | {where(t)} |"
            )
    out.append("")
    return out


def difference_section() -> list[str]:
    tables: list[tuple[str, dict[tuple[int, int], GridMinimum]]] = [
        (
            f"Shares, {named.label} (`group_difference`)",
            {sizes: share_difference_minimum(named, sizes) for sizes in GROUP_SIZES},
        )
        for named in DIFFERENCE_DESIGNS
    ]
    tables += [
        (
            f"Means, Duchi's bit at ε = {epsilon:g} (`mean_difference`, shares of the range)",
            {sizes: duchi_difference_minimum(epsilon, sizes) for sizes in GROUP_SIZES},
        )
        for epsilon in DUCHI_DIFFERENCE_EPSILONS
    ]
    lowest = min(m.coverage for _, table in tables for m in table.values())
    out = [
        "## The difference of two groups",
        "",
        "Two groups' counts are independent binomials, so the coverage of the difference's",
        "interval at (π₁, π₂) is the double sum over both counts, exactly. Each group's",
        "interval before clipping is computed once per count by the app, and",
        "`groups.difference_interval` (MOVER, kept within the possible differences) combines",
        "every pair. The minimum is over a grid: every (π₁, π₂) with each share in",
        "{k/64} ∪ {0.01, 0.02, 0.05, 0.1, 0.9, 0.95, 0.98, 0.99}",
        f"({len(GRID_SHARES) ** 2} points); the coverage jumps, so the true infimum can sit a",
        "little lower between grid points. The last four columns are the points where the",
        "earlier interval (MOVER on the clipped intervals) failed, 0.912 at 1 vs 0.95 and",
        "0.927 at 0.02 vs 0.10 (fair coins, groups of 30 and 300), each way round. 95%",
        "confidence, Clopper–Pearson in each group. Duchi's bit at ε is two coins with",
        "t = tanh(ε/2), f = ½ on the mean's share of the range, so at ε = 1 its table is the",
        "shares' one at ε = 1; it is shown at ε = 2.",
        "",
        f"**Minimum over every table: {floor4(lowest)}**; {verdict(lowest)}.",
        "",
    ]
    header = "| n₁ / n₂ | min | at (π₁, π₂) | " + " | ".join(
        f"({a:g}, {b:g})" for a, b in REPORTED_POINTS
    )
    for title, table in tables:
        out += [f"### {title}", "", header + " |", "|---:|---:|---:|" + "---:|" * 4]
        for (n1, n2), m in table.items():
            cells = " | ".join(floor4(v) for v in m.reported)
            out.append(
                f"| {n1} / {n2} | {floor4(m.coverage)} | ({m.at[0]:.4g}, {m.at[1]:.4g}) | {cells} |"
            )
        out.append("")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument(
        "--simulate", action="store_true", help="rerun the simulated section (minutes)"
    )
    args = parser.parse_args(argv)
    text = render(simulated_section() if args.simulate else None)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
