"""Coverage of the public page's estimates from noisy counts: the table in docs/public-releases.md.

Each cell draws the true answers and the randomized reports with NumPy (a fixed seed per
cell), tallies them as the page does, and releases the tally through the app's own
``release_question``: discrete Laplace noise from the exact sampler (seeded), then the
estimate and its 95% interval from the noisy counts alone. A cell's coverage is the share
of replicates whose interval holds the truth, among those where an estimate is shown (the
noisy n at least 1); for a choice, the lowest over its options. With 2,000 replicates a
coverage's standard error is about 0.005.

    python scripts/public_coverage.py            # print the table
    python scripts/public_coverage.py --write    # replace it in docs/public-releases.md
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from survey_app.privacy import (
    FAIR_COINS,
    DiscreteLaplace,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    Mechanism,
    OptimizedUnaryEncoding,
    TwoCoinDesign,
)
from survey_app.privacy.central import release_question, tally_reports

DOC = Path(__file__).resolve().parent.parent / "docs" / "public-releases.md"
START, END = "<!-- coverage table: start -->", "<!-- coverage table: end -->"
SEED = 20_261_121
REPLICATES = 2_000
SIZES = (100, 1_000, 10_000)
EPSILONS = (Fraction(1, 10), Fraction(1))
CONFIDENCE = 0.95


class Seeded:
    """``secrets``'s ``randbelow`` from a seeded generator, for the exact sampler."""

    def __init__(self, seed: Sequence[int]) -> None:
        # A simulation must be repeatable; no answer is ever randomized with it.
        self.random = random.Random(str(tuple(seed)))  # noqa: S311

    def randbelow(self, n: int, /) -> int:
        return self.random.randrange(n)


@dataclass(frozen=True)
class Case:
    """A question and a truth: the options' shares, or the answers' distribution on
    [min, max] for a number (``truth[j]``: the share answering min + j)."""

    name: str
    mechanism: Mechanism
    truth: tuple[float, ...]
    truth_text: str


UNIFORM_0_10 = tuple([1 / 11] * 11)
MOSTLY_0 = (0.9, *([0.01] * 10))
CASES = (
    Case("yes/no, fair coins (ε = ln 3)", FAIR_COINS, (0.05,), "5% yes"),
    Case("yes/no, fair coins (ε = ln 3)", FAIR_COINS, (0.5,), "50% yes"),
    Case(
        "choice of 4, GRR, ε = 1",
        GeneralizedRandomizedResponse.from_epsilon(4, 1),
        (0.5, 0.3, 0.15, 0.05),
        "50/30/15/5%",
    ),
    Case(
        "choice of 6, OUE, ε = 1",
        OptimizedUnaryEncoding.from_epsilon(6, 1),
        (0.4, 0.3, 0.15, 0.1, 0.04, 0.01),
        "40/30/15/10/4/1%",
    ),
    Case("0–10, Duchi, ε = 1", DuchiBinary.from_epsilon(0, 10, 1), UNIFORM_0_10, "uniform"),
    Case("0–10, Duchi, ε = 1", DuchiBinary.from_epsilon(0, 10, 1), MOSTLY_0, "90% at 0"),
    Case(
        "0–10, discrete Laplace, ε = 2",
        DiscreteLaplace.from_epsilon(0, 10, 2),
        UNIFORM_0_10,
        "uniform",
    ),
    Case(
        "0–10, discrete Laplace, ε = 2",
        DiscreteLaplace.from_epsilon(0, 10, 2),
        MOSTLY_0,
        "90% at 0",
    ),
)


def targets(case: Case) -> tuple[float, ...]:
    """What each estimate should cover: the options' shares, or the mean answer."""
    if isinstance(case.mechanism, (DuchiBinary, DiscreteLaplace)):
        low = case.mechanism.min
        return (sum((low + j) * share for j, share in enumerate(case.truth)),)
    return case.truth


def simulate_tally(case: Case, n: int, rng: np.random.Generator) -> tuple[int, ...]:
    """One survey's true tally (n, report counts) as ``tally_reports`` makes it."""
    mechanism = case.mechanism
    if isinstance(mechanism, TwoCoinDesign):
        rate = mechanism.p_false + (mechanism.p_true - mechanism.p_false) * case.truth[0]
        return n, int(rng.binomial(n, rate))
    if isinstance(mechanism, GeneralizedRandomizedResponse):
        p, q = mechanism.p_true, mechanism.p_false
        rates = [q + (p - q) * share for share in case.truth]
        return n, *(int(c) for c in rng.multinomial(n, rates))
    if isinstance(mechanism, OptimizedUnaryEncoding):
        chosen = rng.multinomial(n, case.truth)
        half, q = mechanism.p_true, mechanism.p_false
        return n, *(int(rng.binomial(m, half) + rng.binomial(n - m, q)) for m in chosen)
    answers = mechanism.min + rng.choice(len(case.truth), size=n, p=case.truth)
    if isinstance(mechanism, DuchiBinary):
        lean = float(mechanism.lean)
        u = (2 * answers - mechanism.min - mechanism.max) / (mechanism.max - mechanism.min)
        ones = rng.random(n) < (1 + lean * u) / 2
        return tally_reports(mechanism, {1: int(ones.sum()), 0: n - int(ones.sum())})
    assert isinstance(mechanism, DiscreteLaplace)
    # Z = G₁ - G₂ for two geometric counts of failures with success 1 - α: discrete Laplace.
    alpha = mechanism.alpha
    noise = rng.geometric(1 - alpha, size=n) - rng.geometric(1 - alpha, size=n)
    values, times = np.unique(answers + noise, return_counts=True)
    return tally_reports(mechanism, {int(v): int(t) for v, t in zip(values, times, strict=True)})


@dataclass(frozen=True)
class Cell:
    case: Case
    n: int
    epsilon: Fraction
    coverage: float
    shown: float


def cell(case: Case, n: int, epsilon: Fraction, index: int, replicates: int = REPLICATES) -> Cell:
    """Coverage of one case at one n and one question ε, seeded by its index."""
    rng = np.random.default_rng([SEED, index])
    source = Seeded((SEED, index))
    truth = targets(case)
    hits = np.zeros(len(truth))
    shown = 0
    for _ in range(replicates):
        release = release_question(
            case.mechanism, simulate_tally(case, n, rng), epsilon, CONFIDENCE, source
        )
        if not release.estimates:
            continue
        shown += 1
        hits += [e.low <= t <= e.high for e, t in zip(release.estimates, truth, strict=True)]
    coverage = float(hits.min() / shown) if shown else float("nan")
    return Cell(case, n, epsilon, coverage, shown / replicates)


def cells(replicates: int = REPLICATES) -> list[Cell]:
    grid = [(case, n, eps) for case in CASES for eps in EPSILONS for n in SIZES]
    return [cell(c, n, e, i, replicates) for i, (c, n, e) in enumerate(grid)]


def row(result: Cell) -> str:
    return (
        f"| {result.case.name} | {result.case.truth_text} | {float(result.epsilon):g} | "
        f"{result.n:,} | {result.coverage:.3f} | {result.shown:.1%} |"
    )


def table(results: Sequence[Cell]) -> str:
    lowest = min(results, key=lambda r: r.coverage)
    lines = [
        START,
        "| question | truth | ε of the question | n | coverage | estimate shown |",
        "|---|---|---|---|---|---|",
        *(row(r) for r in results),
        "",
        f"Minimum: **{lowest.coverage:.3f}** ({lowest.case.name}, {lowest.case.truth_text}, "
        f"the question's central ε {float(lowest.epsilon):g}, n = {lowest.n:,}); "
        f"{REPLICATES:,} replicates a cell, seed {SEED} (standard error about 0.005).",
        END,
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"replace the table in {DOC}")
    args: Any = parser.parse_args(argv)
    text = table(cells())
    if not args.write:
        print(text)
        return
    doc = DOC.read_text(encoding="utf-8")
    before, rest = doc.split(START)
    _, after = rest.split(END)
    DOC.write_text(before + text + after, encoding="utf-8")


if __name__ == "__main__":
    main()
