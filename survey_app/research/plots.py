"""The dashboard's plot: estimates with interval bars, drawn server-side as SVG.

Matplotlib's object API with its SVG canvas is used directly (no pyplot, no GUI backend), so
drawing holds no global state and is safe in threaded workers. Plots are cached on
their inputs, the counters among them: a new response changes the key and so the plot.
"""

from __future__ import annotations

import io
from functools import lru_cache

PlotRow = tuple[str, float, float, float]  # label, estimate, low, high
LABEL_CHARACTERS = 48  # longer question texts are cut with an ellipsis


def _label(text: str) -> str:
    return text if len(text) <= LABEL_CHARACTERS else text[: LABEL_CHARACTERS - 1] + "…"


@lru_cache(maxsize=256)
def estimates_svg(rows: tuple[PlotRow, ...], confidence: float) -> bytes:
    """Horizontal points with interval bars, one line a question, on the [0, 1] scale."""
    # Imported on first use: Matplotlib adds ~30 MB to a worker, and workers that only
    # serve respondents never draw.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 1.2 + 0.45 * max(len(rows), 1)), layout="constrained")
    axes = figure.add_subplot()
    positions = range(len(rows))
    points = [row[1] for row in rows]
    axes.errorbar(
        points,
        positions,
        xerr=[[row[1] - row[2] for row in rows], [row[3] - row[1] for row in rows]],
        fmt="o",
        color="#0b5cad",
        ecolor="#56606b",
        capsize=4,
    )
    axes.set_yticks(list(positions), [_label(row[0]) for row in rows])
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel(f"Estimated prevalence with {confidence:.0%} confidence interval")
    axes.grid(axis="x", alpha=0.3)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


@lru_cache(maxsize=256)
def options_svg(title: str, rows: tuple[PlotRow, ...], confidence: float) -> bytes:
    """One choice question: a bar per option at its display estimate (the projection onto
    the simplex), with the simultaneous interval over all options."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 1.4 + 0.45 * max(len(rows), 1)), layout="constrained")
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    points = [row[1] for row in rows]
    axes.barh(positions, points, color="#9ec5ea")
    axes.errorbar(
        points,
        positions,
        xerr=[[max(row[1] - row[2], 0) for row in rows], [max(row[3] - row[1], 0) for row in rows]],
        fmt="none",
        ecolor="#1d232a",
        capsize=4,
    )
    axes.set_yticks(positions, [_label(row[0]) for row in rows])
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_title(_label(title), loc="left", fontsize=10)
    axes.set_xlabel(f"Estimated share, with {confidence:.0%} simultaneous intervals")
    axes.grid(axis="x", alpha=0.3)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
