"""The dashboard's plots: estimates with interval bars, drawn server-side as SVG.

Each question (or each option of a choice) gets a strip of its own with its full text,
wrapped, as the strip's title: the plot has to be read on a phone, where long labels
beside the axis would leave no room for the axis and cut words would leave the reader
guessing. Two widths are drawn and the page picks one by the screen's width, so the text
is never shrunk below LEGIBLE_PX on screen (see ``PLOT_WIDTHS``).

Text is written as SVG text, not as glyph outlines: the browser draws it with its own
fonts, so Korean and Chinese texts show even though Matplotlib's bundled font lacks them.
Matplotlib's object API with its SVG canvas is used directly (no pyplot, no GUI backend);
the one global setting (``svg.fonttype``) is set once, the same for every plot, so drawing
is safe in threaded workers. Plots are cached on their inputs, the counters and the
page language's labels among them: a new response changes the key and so the plot.
"""

from __future__ import annotations

import io
import textwrap
import unicodedata
import warnings
from functools import lru_cache

PlotRow = tuple[str, float, float, float]  # label, estimate, low, high

FONT_POINTS = 12.0
LEGIBLE_PX = 12.0
# Figure widths in inches, and the narrowest width on screen (CSS px) each is shown at.
# An SVG of W inches is 96·W px wide natively and its text F pt is F·96/72 px, so shown
# at R px the text is F·R/(72·W) px: ≥ 12 px needs R ≥ 864·W/F. The <picture> in
# dashboard.html switches to the wide plot from a 37.5em (600 px) viewport, where the
# content is at least 560 px wide; the narrow one is for phones down to 320 px, 280 px of
# content. (A 1280 px window at 200% zoom is 640 px: the wide plot.)
PLOT_WIDTHS = {"wide": 7.5, "narrow": 3.6}
SHOWN_AT_LEAST_PX = {"wide": 560, "narrow": 280}
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _wrapped(text: str, width_inches: float) -> str:
    """The text in lines that fit the strip: about 0.55 em a Latin letter, 1 em a Korean
    or Chinese character (Chinese has no spaces, so long runs are broken anywhere)."""
    em_per_line = width_inches * 72 / FONT_POINTS
    wide = any(unicodedata.east_asian_width(c) in "WF" for c in text)
    characters = int(em_per_line if wide else em_per_line / 0.55)
    return "\n".join(textwrap.wrap(text, width=max(characters - 1, 8))) or " "


def _setup() -> None:
    # Imported on first use: Matplotlib adds ~30 MB to a worker, and workers that only
    # serve respondents never draw.
    import matplotlib

    matplotlib.rcParams["svg.fonttype"] = "none"
    # Matplotlib measures text with its own font, which has no Korean or Chinese glyphs,
    # and warns on each; the browser draws the text, so the warning says nothing here.
    warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)


@lru_cache(maxsize=256)
def interval_svg(
    rows: tuple[PlotRow, ...],
    axis_label: str,
    tick_labels: tuple[str, ...],
    width: str,
    bars: bool,
) -> bytes:
    """One strip per row: the estimate (a bar when ``bars``, else a point) and its interval
    on the [0, 1] scale, under the row's wrapped text; the shared axis at the bottom.

    ``tick_labels`` name TICKS in the page's language (e.g. "50%" or "50 %");
    ``width`` is a key of PLOT_WIDTHS.
    """
    _setup()
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    inches = PLOT_WIDTHS[width]
    titles = [_wrapped(row[0], inches) for row in rows] or [" "]
    line_inches = FONT_POINTS * 1.3 / 72
    heights = [0.3 + line_inches * (title.count("\n") + 1) for title in titles]
    layout = ConstrainedLayoutEngine(h_pad=0.02, hspace=0.0)
    figure = Figure(figsize=(inches, sum(heights) + 0.9), layout=layout)
    strips = figure.subplots(
        max(len(rows), 1), 1, sharex=True, squeeze=False, height_ratios=heights
    )[:, 0]
    for strip, title, row in zip(strips, titles, rows, strict=False):
        _label, point, low, high = row
        error = [[max(point - low, 0)], [max(high - point, 0)]]
        if bars:
            strip.barh([0], [point], color="#9ec5ea", height=0.6)
            strip.errorbar([point], [0], xerr=error, fmt="none", ecolor="#1d232a", capsize=4)
        else:
            strip.errorbar(
                [point], [0], xerr=error, fmt="o", color="#0b5cad", ecolor="#56606b", capsize=4
            )
        strip.set_title(title, loc="left", fontsize=FONT_POINTS, color="#1d232a")
        strip.set_yticks([])
        strip.set_ylim(-0.6, 0.6)
        strip.grid(axis="x", alpha=0.3)
        strip.tick_params(axis="x", labelsize=FONT_POINTS, labelbottom=False)
    strips[0].set_xlim(0, 1)
    strips[-1].set_xticks(TICKS, tick_labels)
    strips[-1].tick_params(axis="x", labelbottom=True)
    strips[-1].set_xlabel(_wrapped(axis_label, inches), fontsize=FONT_POINTS)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
