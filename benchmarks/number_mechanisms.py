"""Number mechanisms side by side: one report's variance for four reference truths and at
the worst answer, exactly, and ``auto``'s pick against the best known.

For ε in {0.5, 1, 2, 3, 4, 6, 8} and ranges 0-10, 0-50, 0-1000: discrete Laplace, Duchi's
bit and the discrete piecewise mechanism (``survey_app/privacy/mechanisms/piecewise.py``)
from their exact rationals, and Wang et al. 2019's continuous piecewise (PM) and hybrid
(HM) mechanisms from their formulas (reals: they cannot be sampled exactly, only compared).
A truth's figure is the noise one report adds around its answer, averaged over the truth's
answers, Σ π(x)·Var(x̂ | x): the error of a mean over a fixed population, without the
answers' own spread (which every mechanism adds alike). "auto" is
``number_mechanism``'s pick; its ratio is its worst-answer
variance over the least of all five (target ≤ 1.05). One seeded simulation column checks
the piecewise mechanism's formula: the measured mean of (x̂ - x)² over 200,000 reports of
the uniform truth, ÷ the exact figure.

    .venv/bin/python benchmarks/number_mechanisms.py     # a few seconds
"""

from __future__ import annotations

import datetime
import json
import math
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from survey_app.privacy import number_mechanism  # noqa: E402
from survey_app.privacy.mechanisms import (  # noqa: E402
    DiscreteLaplace,
    DiscretePiecewise,
    DuchiBinary,
    NumericMechanism,
)

HERE = Path(__file__).resolve().parent
EPSILONS = ("0.5", "1", "2", "3", "4", "6", "8")
RANGES = (10, 50, 1000)
#: Below this ε the hybrid mechanism is Duchi's alone (Wang et al. 2019, ε* ≈ 0.61).
HYBRID_FROM = 0.61
SIMULATED_REPORTS = 200_000

Truth = list[tuple[int, Fraction]]


def reference_truths(span: int) -> dict[str, Truth]:
    """The four answer distributions on 0..Δ: all at the middle (⌊Δ/2⌋), uniform, 80% at
    the minimum with the rest spread evenly over 1..Δ, all at the maximum."""
    rest = Fraction(1, 5 * span)
    return {
        "middle": [(span // 2, Fraction(1))],
        "uniform": [(x, Fraction(1, span + 1)) for x in range(span + 1)],
        "zeros_and_tail": [(0, Fraction(4, 5))] + [(x, rest) for x in range(1, span + 1)],
        "maximum": [(span, Fraction(1))],
    }


def piecewise_formula(epsilon: float, span: int, x: int) -> float:
    """Continuous PM's Var(x̂ | x) for x in [0, Δ]: (Δ/2)²(t²/(e^(ε/2) - 1) +
    (e^(ε/2) + 3)/(3(e^(ε/2) - 1)²)), t = 2x/Δ - 1."""
    root = math.exp(epsilon / 2)
    t = 2 * x / span - 1
    return (span / 2) ** 2 * (t * t / (root - 1) + (root + 3) / (3 * (root - 1) ** 2))


def duchi_formula(epsilon: float, span: int, x: int) -> float:
    """Duchi's Var(x̂ | x) with the real lean tanh(ε/2): (Δ/2)²(C² - t²), C = 1/tanh(ε/2)."""
    t = 2 * x / span - 1
    return (span / 2) ** 2 * (1 / math.tanh(epsilon / 2) ** 2 - t * t)


def hybrid_formula(epsilon: float, span: int, x: int) -> float:
    """HM: PM with probability α = 1 - e^(-ε/2) (above ε*), else Duchi; both unbiased,
    so the variances mix. Above ε* it is the same for every answer."""
    share = 1 - math.exp(-epsilon / 2) if epsilon > HYBRID_FROM else 0.0
    pm, duchi = piecewise_formula(epsilon, span, x), duchi_formula(epsilon, span, x)
    return share * pm + (1 - share) * duchi


def exact_variance(mechanism: NumericMechanism) -> Callable[[int], float]:
    """Var(x̂ | x) of a mechanism of the app, from its exact rationals."""
    if isinstance(mechanism, DiscreteLaplace):
        return lambda x: mechanism.noise_variance
    if isinstance(mechanism, DuchiBinary):
        middle = Fraction(mechanism.min + mechanism.max, 2)
        half = Fraction(mechanism.max - mechanism.min, 2)
        return lambda x: float(half**2 / mechanism.lean**2 - (x - middle) ** 2)
    if isinstance(mechanism, DiscretePiecewise):
        return lambda x: float(mechanism.answer_variance(x))
    raise ValueError(f"no variance for {mechanism.name}")


def variances(epsilon: str, span: int) -> dict[str, Callable[[int], float]]:
    """Var(x̂ | x) for every mechanism compared, on answers 0..Δ."""
    exact = Fraction(epsilon)
    real = float(exact)
    return {
        "discrete_laplace": exact_variance(DiscreteLaplace.from_epsilon(0, span, exact)),
        "duchi_binary": exact_variance(DuchiBinary.from_epsilon(0, span, exact)),
        "piecewise": exact_variance(DiscretePiecewise.best_for(0, span, exact)),
        "continuous_pm": lambda x: piecewise_formula(real, span, x),
        "continuous_hm": lambda x: hybrid_formula(real, span, x),
    }


def worst_answer(variance: Callable[[int], float], span: int) -> float:
    """Every variance compared is a quadratic in x symmetric about Δ/2, so its largest
    over the integers 0..Δ is at an end or at ⌊Δ/2⌋."""
    return max(variance(0), variance(span // 2))


def best_known(epsilon: str, span: int) -> float:
    """The least worst-answer variance among all five."""
    return min(worst_answer(v, span) for v in variances(epsilon, span).values())


def simulated_ratio(mechanism: DiscretePiecewise, truth: Truth, seed: int) -> tuple[float, float]:
    """Measured mean of (x̂ - x)² over SIMULATED_REPORTS reports of the truth ÷ the exact,
    and two standard errors of that ratio (from the squared errors' spread: at large ε the
    rare Duchi reports make them heavy-tailed)."""
    rng = np.random.default_rng(seed)
    answers = np.array([x for x, _ in truth])
    weights = np.array([float(weight) for _, weight in truth])
    values = rng.choice(answers, size=SIMULATED_REPORTS, p=weights / weights.sum())
    unbiased = mechanism.value_offset + mechanism.value_scale * mechanism.simulate(values, rng)
    exact = float(sum(weight * mechanism.answer_variance(x) for x, weight in truth))
    squares = (unbiased - values) ** 2
    spread = 2 * float(np.std(squares)) / math.sqrt(SIMULATED_REPORTS)
    return float(np.mean(squares)) / exact, spread / exact


def point(epsilon: str, span: int) -> dict[str, Any]:
    """One (ε, range): every mechanism's figures, auto's pick and its ratio."""
    truths = reference_truths(span)
    rows = {
        name: {
            **{key: float(sum(w * variance(x) for x, w in truth)) for key, truth in truths.items()},
            "worst_answer": worst_answer(variance, span),
        }
        for name, variance in variances(epsilon, span).items()
    }
    best = min(row["worst_answer"] for row in rows.values())
    chosen = number_mechanism(0, span, Fraction(epsilon))
    today = number_mechanism(0, span, Fraction(epsilon))
    piecewise = DiscretePiecewise.best_for(0, span, Fraction(epsilon))
    return {
        "epsilon": epsilon,
        "range": [0, span],
        "variance": rows,
        "auto": chosen.name,
        "auto_over_best": rows[chosen.name]["worst_answer"] / best,
        "today": today.name,
        "today_over_best": rows[today.name]["worst_answer"] / best,
        "piecewise_design": piecewise.parameters(),
        "piecewise_simulated_over_exact": simulated_ratio(
            piecewise, truths["uniform"], seed=span * 100 + int(float(epsilon) * 10)
        ),
    }


def table(points: list[dict[str, Any]]) -> str:
    """The Markdown table of NUMBER_MECHANISMS.md."""
    names = ["discrete_laplace", "duchi_binary", "piecewise", "continuous_pm", "continuous_hm"]
    lines = [
        "| ε | range | truth | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for row in points:
        variance = row["variance"]
        for truth in ("middle", "uniform", "zeros_and_tail", "maximum", "worst_answer"):
            cells = " | ".join(f"{variance[name][truth]:,.4g}" for name in names)
            lines.append(f"| {row['epsilon']} | 0–{row['range'][1]} | {truth} | {cells} |")
    lines += [
        "",
        "| ε | range | auto (with piecewise) | ÷ best | today | ÷ best | simulated ÷ exact |",
    ]
    lines.append("|---|---|---|---|---|---|---|")
    for row in points:
        lines.append(
            f"| {row['epsilon']} | 0–{row['range'][1]} | {row['auto']} | "
            f"{row['auto_over_best']:.3f} | {row['today']} | {row['today_over_best']:.2f} | "
            "{:.3f} ± {:.3f} |".format(*row["piecewise_simulated_over_exact"])
        )
    return "\n".join(lines)


def main() -> None:
    points = [point(epsilon, span) for span in RANGES for epsilon in EPSILONS]
    result = {"generated": datetime.datetime.now(datetime.UTC).isoformat(), "points": points}
    (HERE / "results" / "number-mechanisms.json").write_text(json.dumps(result, indent=1) + "\n")
    print(table(points))


if __name__ == "__main__":
    main()
