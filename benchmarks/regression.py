"""Randomized-response regression benchmark: fit time at 10,000 and 1,000,000 responses.

Five plain covariates (four numbers and a yes/no-style choice with two options, so an
intercept and five columns) and a sensitive yes/no answer drawn from a known logistic
model, randomized by the optimal binary design at ε = 1 with
``survey_app.privacy.simulate`` (seeded NumPy: never for real answers). For each size it
times ``fit_randomized_logistic`` (the maximum-likelihood fit, standard errors and
intervals) over several runs and reports the median, and once times building the design
matrix from per-question columns (``design_from_columns``, what the dashboard would do
after reading the stored answers). Target: the dashboard's regression form answers in
under a second at 1M; the ratio 1M/10k is reported.

    .venv/bin/python benchmarks/regression.py             # ~3 minutes on 2 CPUs
    .venv/bin/python benchmarks/regression.py --runs 3
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit

if __package__ in (None, ""):  # run as a script: make ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from survey_app.privacy import QuestionType, TwoCoinDesign, simulate_reports  # noqa: E402
from survey_app.privacy.regression import Covariate, design_from_columns, fit_randomized_logistic  # noqa: E402

HERE = Path(__file__).resolve().parent
SIZES = (10_000, 1_000_000)
TRUE_BETA = np.array([-1.0, 0.5, -0.3, 0.2, 0.0, 0.8])  # intercept, four numbers, the choice
COVARIATES = [Covariate(f"x{j}", QuestionType.NUMBER) for j in range(1, 5)] + [
    Covariate("member", QuestionType.CHOICE, ("no", "yes"))
]
DESIGN = TwoCoinDesign.from_epsilon(1.0)
SEED = 20261121
PAGE_SECTION = "<!-- benchmarks/analysis.py: start -->"


def columns_for(n: int, rng: np.random.Generator) -> dict[str, list[object]]:
    """Stored answers per question: four numbers, a choice index, the randomized outcome."""
    numbers = rng.normal(size=(n, 4)).round(3)
    member = (rng.random(n) < 0.4).astype(np.int64)
    x = np.column_stack([np.ones(n), numbers, member])
    reports = simulate_reports(rng.random(n) < expit(x @ TRUE_BETA), DESIGN, rng)
    columns: dict[str, list[object]] = {f"x{j + 1}": numbers[:, j].tolist() for j in range(4)}
    columns["member"] = member.tolist()
    columns["cheated"] = reports.astype(np.int64).tolist()
    return columns


def seconds(action: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (all of the process's threads) of each run."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


@dataclass(frozen=True)
class Timing:
    """One size's fit times (seconds), the one-off matrix build, and the recovery check."""

    n: int
    median: float
    fastest: float
    slowest: float
    cpu: float
    runs: int
    build: float
    worst_z: float


def measure(n: int, runs: int, rng: np.random.Generator) -> Timing:
    columns = columns_for(n, rng)
    build = seconds(lambda: design_from_columns(columns, "cheated", COVARIATES), 1)[0][0]
    design = design_from_columns(columns, "cheated", COVARIATES)
    reports = np.asarray(design.outcome, dtype=np.float64)

    def fit() -> object:
        return fit_randomized_logistic(
            design.matrix, reports, DESIGN.p_false, DESIGN.p_true, design.names
        )

    fit()  # warm-up: first-call costs of NumPy and SciPy are not the fit's
    times, cpu = seconds(fit, runs)
    result = fit_randomized_logistic(
        design.matrix, reports, DESIGN.p_false, DESIGN.p_true, design.names
    )
    worst_z = max(
        abs(c.estimate - b) / c.std_error
        for c, b in zip(result.coefficients, TRUE_BETA, strict=True)
    )
    return Timing(
        n,
        statistics.median(times),
        min(times),
        max(times),
        statistics.median(cpu),
        runs,
        build,
        worst_z,
    )


def markdown(rows: list[Timing], started: str, elapsed: float) -> str:
    small, large = rows
    ratio = large.median / small.median
    load = os.getloadavg()[0]
    lines = [
        "# Regression benchmark",
        "",
        f"`benchmarks/regression.py`, {started} ({elapsed:.0f} s). Machine: "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, NumPy {np.__version__}; "
        f"1-minute load average {load:.2f} at the end (other work shares the machine, so "
        "single runs vary; the median is what counts).",
        "",
        "A sensitive yes/no answer from a known logistic model on five plain covariates "
        "(four numbers, one two-option choice; an intercept and five columns), randomized "
        "by the optimal binary design at ε = 1; `fit_randomized_logistic` is timed "
        "(maximum likelihood by Newton steps, observed-information standard errors, "
        'profile-likelihood intervals: a few dozen more fits per coefficient). "worst |z|" '
        "is the largest |β̂ − β|/se over the six coefficients: "
        "the fit recovers the known coefficients (below 5, usually below 3).",
        "",
        "| responses | fit, median | min – max | CPU, median | runs | worst \\|z\\| "
        "| building the matrix from columns (once) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.n:,} | {1000 * row.median:.1f} ms "
            f"| {1000 * row.fastest:.1f} – {1000 * row.slowest:.1f} ms | {1000 * row.cpu:.1f} ms "
            f"| {row.runs} | {row.worst_z:.2f} | {1000 * row.build:.0f} ms |"
        )
    lines += [
        "",
        f"**Ratio 1M / 10k (fit medians): {ratio:.0f}×** for 100× the rows. This is the "
        "library fitting one row per response; the dashboard does not: it fits the "
        "distinct (covariates, report) rows with their counts, a few thousand at most "
        "whatever the responses (the page's own timing is in the next section).",
        "",
        "The ratio moves with the machine's load: at 10k the 6-column matrix (480 KB) "
        "stays in the CPU's cache; at 1M every pass streams 48 MB from memory, which the "
        "other work on this machine competes for (compare the CPU column with the "
        "wall-clock one). Most of a fit is its profile intervals: for each of the six "
        "coefficients, the best fit with that coefficient held at a few dozen values, "
        "each a few passes over every row (x·β, the logistic, the score, the information "
        "matrix summed in cache-sized blocks). The last column is building the matrix "
        "from Python lists.",
        "",
        "Rerun: `.venv/bin/python benchmarks/regression.py` (writes this file).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed fits per size")
    parser.add_argument("--markdown", default=str(HERE / "REGRESSION.md"))
    args = parser.parse_args(argv)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    clock = time.perf_counter()
    rng = np.random.default_rng(SEED)
    rows = [measure(n, args.runs, rng) for n in SIZES]
    text = markdown(rows, started, time.perf_counter() - clock)
    target = Path(args.markdown)
    # Keep the page's timings, which benchmarks/analysis.py writes after a marker.
    kept = target.read_text().partition(PAGE_SECTION)[1:] if target.exists() else ("", "")
    Path(args.markdown).write_text(text + "".join(kept))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
