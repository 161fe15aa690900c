"""Exact coverage of the prevalence intervals that estimate_prevalence reports.

For a survey of n respondents under a two-coin design, the reported-yes count X is
Binomial(n, λ) with λ = p0 + t·π. The interval reported for X = x is [low_x, high_x], so
the coverage at a true prevalence π is

    C(π) = Σ_x pmf(x; n, p0 + t·π) · [low_x ≤ π ≤ high_x],

a finite sum, computed here exactly (up to floating point) rather than by simulation.
Each x's interval is computed once per n through the public estimate_prevalence.

C jumps wherever π crosses an interval endpoint. Between jumps the covered counts form a
fixed range a..b (the bounds are non-decreasing in x), and P(a ≤ X ≤ b) is unimodal in λ,
so each smooth piece takes its lowest values at its ends. The minimum is therefore
searched over a fine grid plus, at every endpoint e, the value C(e) and the one-sided
limits of C as π → e from below and from above (the same sum with one strict inequality).
Those limits are where the infimum usually sits; it need not be attained.

    python scripts/coverage_table.py > docs/COVERAGE.md
    python scripts/coverage_table.py -o docs/COVERAGE.md
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import gammaln

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from survey_app.privacy import TwoCoinDesign, estimate_prevalence  # noqa: E402

METHODS = ("wilson", "clopper-pearson")
METHOD_NAMES = {"wilson": "Wilson", "clopper-pearson": "Clopper–Pearson"}
SIZES = (10, 30, 50, 100, 300, 1000)
MAIN_CONFIDENCE = 0.95
OTHER_CONFIDENCES = (0.90, 0.99)
GRID_POINTS = 2001
COMMAND = "python scripts/coverage_table.py > docs/COVERAGE.md"


@dataclass(frozen=True)
class NamedDesign:
    label: str
    design: TwoCoinDesign


DESIGNS = (
    NamedDesign("fair coins", TwoCoinDesign(0.5, 0.5)),
    NamedDesign("ε = 0.5", TwoCoinDesign.from_epsilon(0.5)),
    NamedDesign("ε = 2", TwoCoinDesign.from_epsilon(2.0)),
)


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


def interval_bounds(
    n: int, design: TwoCoinDesign, confidence: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """low_x and high_x of the reported interval for π, for every count x = 0..n."""
    estimates = [estimate_prevalence(x, n, design, confidence, method) for x in range(n + 1)]
    low = np.array([e.low for e in estimates if e is not None])
    high = np.array([e.high for e in estimates if e is not None])
    return low, high


def binomial_pmf(n: int, design: TwoCoinDesign, prevalences: np.ndarray) -> np.ndarray:
    """pmf(x; n, p0 + t·π) as an (n + 1) × len(prevalences) matrix.

    Evaluated in log space (scipy.stats.binom.pmf agrees to about 1e-13 and is ~25 times
    slower). λ stays inside [p0, p1] ⊂ (0, 1), so both logarithms are finite.
    """
    x = np.arange(n + 1, dtype=float)[:, None]
    rate = (
        float(design.p_yes_given_no)
        + float(design.truth_probability) * np.asarray(prevalences)[None, :]
    )
    log_choose = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
    return np.exp(log_choose + x * np.log(rate) + (n - x) * np.log1p(-rate))


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
    grid = np.linspace(0.0, 1.0, grid_points)
    ends = np.unique(np.concatenate([low, high]))
    ends = ends[(ends >= 0.0) & (ends <= 1.0)]
    pis = np.concatenate([grid, ends])
    pmf = binomial_pmf(n, design, pis)

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


def floor4(value: float) -> str:
    """Four decimals, rounded down: a minimum is never displayed higher than it is."""
    return f"{math.floor(value * 10_000 + 1e-9) / 10_000:.4f}"


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


def render(
    sizes: Sequence[int] = SIZES,
    designs: Sequence[NamedDesign] = DESIGNS,
    main_confidence: float = MAIN_CONFIDENCE,
    other_confidences: Sequence[float] = OTHER_CONFIDENCES,
) -> str:
    """The whole of docs/COVERAGE.md."""
    results = compute_all(sizes, designs, (main_confidence, *other_confidences))
    wilson, cp = (METHOD_NAMES[m] for m in METHODS)
    out = [
        "# Exact coverage of the prevalence intervals",
        "",
        "Generated by `scripts/coverage_table.py`. Regenerate with",
        "",
        f"    {COMMAND}",
        "",
        "(or `-o docs/COVERAGE.md`). Do not edit by hand: `tests/test_coverage.py` checks",
        "that this file matches the script's output.",
        "",
        "## What this is",
        "",
        "The coverage of a confidence interval at a true prevalence π is the probability,",
        "over the randomized answers of n respondents, that the interval reported by",
        "`estimate_prevalence` contains π. A 95% interval should cover at least 95% of the",
        "time *whatever π is*. Each table gives, per method and survey size n, the lowest",
        "coverage over all π in [0, 1] and the π where it occurs.",
        "",
        "## How it is computed",
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

    out += ["", "## Summary", ""]
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

    out += ["", f"## {main_confidence:.0%} confidence", ""]
    for named in designs:
        out += [
            f"### {named.label}",
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
        out += [f"## {confidence:.0%} confidence (minimum coverage only)", ""]
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
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    args = parser.parse_args(argv)
    text = render()
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
