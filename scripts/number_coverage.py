"""Simulated coverage of the mean's interval under the discrete piecewise mechanism.

Each report maps to one unbiased value, min + (y - b)/a, so the dashboard's mean interval
is the t interval of ``means.estimate_number_mean`` from the reports' count, sum and sum
of squares, as for discrete Laplace. Its coverage is simulated with a fixed seed: n
respondents drawn from one of the four reference truths (``benchmarks/number_mechanisms``),
their reports simulated, the app's interval computed, and the share of surveys whose
interval holds the truth's mean counted. The last column is the same t interval on the
plain answers of the skewed truth (no mechanism): what the truth's own skewness costs.
The table goes to docs (``--output``).

    .venv/bin/python scripts/number_coverage.py --runs 10000 -o docs/number-coverage.md
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.number_mechanisms import Truth, reference_truths  # noqa: E402
from survey_app.privacy.means import estimate_number_mean  # noqa: E402
from survey_app.privacy.mechanisms import (  # noqa: E402
    DiscretePiecewise,
    NumericMechanism,
    PlainNumber,
)

SIZES = (30, 100, 300)
EPSILONS = ("1", "4", "8")
RANGES = (10, 1000)


def coverage(mechanism: NumericMechanism, truth: Truth, n: int, runs: int, seed: int) -> float:
    """The share of ``runs`` simulated surveys of n whose 95% interval holds the mean."""
    rng = np.random.default_rng(seed)
    answers = np.array([x for x, _ in truth])
    weights = np.array([float(weight) for _, weight in truth])
    mean = float(sum(x * weight for x, weight in truth))
    values = rng.choice(answers, size=(runs, n), p=weights / weights.sum())
    reports = mechanism.simulate(values, rng).astype(object)  # Python ints: exact sums
    covered = 0
    for row in reports:
        total, squares = int(sum(row)), int(sum(y * y for y in row))
        estimate = estimate_number_mean(mechanism, n, total, squares)
        assert estimate is not None
        covered += estimate.low <= mean <= estimate.high
    return covered / runs


def table(runs: int) -> str:
    lines = [
        "| ε | range | n | middle | uniform | zeros_and_tail | maximum | plain, zeros_and_tail |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lowest = 1.0
    for span in RANGES:
        for epsilon in EPSILONS:
            mechanism = DiscretePiecewise.best_for(0, span, Fraction(epsilon))
            for n in SIZES:
                truths = reference_truths(span).values()
                cells = [coverage(mechanism, t, n, runs, seed=n + span) for t in truths]
                lowest = min(lowest, *cells)
                tail = reference_truths(span)["zeros_and_tail"]
                cells.append(coverage(PlainNumber(0, span), tail, n, runs, seed=n + span))
                shown = " | ".join(f"{cell:.4f}" for cell in cells)
                lines.append(f"| {epsilon} | 0–{span} | {n} | {shown} |")
    error = math.sqrt(0.95 * 0.05 / runs)
    lines += ["", f"{runs:,} surveys per cell; standard error ≈ {error:.4f}; lowest {lowest:.4f}."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("-o", "--output", type=Path)
    arguments = parser.parse_args()
    text = table(arguments.runs)
    if arguments.output:
        arguments.output.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
