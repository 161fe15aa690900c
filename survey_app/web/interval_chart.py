"""Estimates with their intervals as a chart written straight into the page: inline SVG,
for pages that load no script and no image, such as the public results page.

Why not the dashboard's plots (``research/plots.py``): Matplotlib's SVG styles its shapes
with ``style`` attributes and a ``<style>`` element, which the pages' Content Security
Policy (``style-src 'self'``, no inline styles) refuses inside a page, and it would load
Matplotlib into workers that serve the public. This chart uses presentation attributes
only (``fill``, ``stroke``, ``font-size``), which the policy does not govern.

Why readable on a phone: the chart has no ``viewBox``, so it is never scaled down. Its
width is the page's (every ``x`` is a percentage), its heights and its 14 px text are CSS
pixels at any width, and each label sits on lines of its own above its interval, wrapped
for a 320 px column. The words come from the caller, in the page's language; the table
beside the chart holds the same numbers, and the chart is named for screen readers by its
``<title>`` and ``aria-label``.
"""

from __future__ import annotations

import math
import textwrap
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from survey_app.web.i18n import format_decimal, format_percent

FONT_PX = 14
LINE_PX = 18
STRIP_PX = 22
AXIS_PX = 26
# Labels wrap to fit this many CSS pixels: a 375 px phone's page, less its margins.
LABEL_PX = 320
# The plotting area starts and ends this far in from the chart's edges (in % of its
# width), so a point or a cap at either end of the scale is drawn whole.
EDGE_PERCENT = 3.0
INK, MUTED, ACCENT, BAR, GRID = "#1d232a", "#56606b", "#0b5cad", "#9ec5ea", "#dde2e6"


@dataclass(frozen=True)
class ChartRow:
    """One estimate: its label, the point and its interval, on the chart's scale."""

    label: str
    point: float
    low: float
    high: float


@dataclass(frozen=True)
class Scale:
    """The horizontal axis: its ends and its labelled ticks (a value, its text)."""

    low: float
    high: float
    ticks: tuple[tuple[float, str], ...]

    def percent(self, value: float) -> float:
        """Where ``value`` goes, in % of the chart's width (kept on the axis)."""
        share = (value - self.low) / (self.high - self.low) if self.high > self.low else 0.5
        share = min(max(share, 0.0), 1.0)
        return EDGE_PERCENT + (100 - 2 * EDGE_PERCENT) * share


def share_scale() -> Scale:
    """0% to 100%, in quarters, as the page's locale writes them."""
    return Scale(0.0, 1.0, tuple((t, format_percent(t)) for t in (0.0, 0.25, 0.5, 0.75, 1.0)))


def range_scale(low: float, high: float) -> Scale:
    """A number question's range, with its two ends and its middle labelled."""
    ticks = (low, (low + high) / 2, high)
    return Scale(low, high, tuple((t, format_decimal(t, "#,##0.##")) for t in ticks))


def count_scale(values: Sequence[float]) -> Scale:
    """From 0 (or below, for a noisy count under 0) to past the largest value, in at most
    six steps of 1, 2 or 5 times a power of ten (seven short labels fit a phone)."""
    low, high = min(0.0, *values), max(1.0, *values)
    for step in _round_steps((high - low) / 5):
        start, end = math.floor(low / step) * step, math.ceil(high / step) * step
        if end - start <= 6 * step:
            break
    ticks = [start + i * step for i in range(round((end - start) / step) + 1)]
    return Scale(start, end, tuple((t, format_decimal(t, "#,##0")) for t in ticks))


def _round_steps(rough: float) -> Iterator[float]:
    """1, 2 or 5 times a power of ten (at least 1), from the smallest not below ``rough``."""
    power = 10.0 ** max(math.floor(math.log10(rough)), 0) if rough > 0 else 1.0
    while True:
        yield from (m * power for m in (1, 2, 5) if m * power >= rough)
        power *= 10


def interval_chart(rows: Sequence[ChartRow], scale: Scale, name: str, bars: bool = False) -> Markup:
    """Each row's label on lines of its own, then its point (a bar from the axis's start
    when ``bars``) and its interval with caps; the ticks' gridlines behind, their labels
    below. ``name`` says what the chart shows, for screen readers and as its tooltip."""
    shapes: list[str] = []
    y = 0
    for row in rows:
        for line in _wrapped(row.label):
            y += LINE_PX
            shapes.append(f'<text x="0" y="{y - 4}" font-size="{FONT_PX}">{escape(line)}</text>')
        shapes.append(_strip(row, scale, y + STRIP_PX // 2, bars))
        y += STRIP_PX
    grid = [
        f'<line x1="{scale.percent(t):.2f}%" x2="{scale.percent(t):.2f}%" y1="0" y2="{y}" '
        f'stroke="{GRID}"/>'
        for t, _text in scale.ticks
    ]
    height = y + AXIS_PX
    return Markup(  # noqa: S704 (every text escaped above and below; numbers formatted here)
        f'<svg class="interval-chart" width="100%" height="{height}" role="img" '
        f'aria-label="{escape(name)}" fill="{INK}">'
        f"<title>{escape(name)}</title>{''.join(grid)}{''.join(shapes)}{_axis(scale, y)}</svg>"
    )


def _strip(row: ChartRow, scale: Scale, middle: int, bars: bool) -> str:
    low, high, point = (scale.percent(v) for v in (row.low, row.high, row.point))
    parts = []
    if bars:
        start = scale.percent(max(scale.low, min(0.0, scale.high)))
        left, width = min(start, point), abs(point - start)
        parts.append(
            f'<rect x="{left:.2f}%" y="{middle - 6}" width="{width:.2f}%" height="12" '
            f'fill="{BAR}"/>'
        )
    parts.append(
        f'<line x1="{low:.2f}%" x2="{high:.2f}%" y1="{middle}" y2="{middle}" '
        f'stroke="{MUTED}" stroke-width="2"/>'
    )
    parts += [
        f'<line x1="{x:.2f}%" x2="{x:.2f}%" y1="{middle - 5}" y2="{middle + 5}" '
        f'stroke="{MUTED}" stroke-width="2"/>'
        for x in (low, high)
    ]
    if not bars:
        parts.append(f'<circle cx="{point:.2f}%" cy="{middle}" r="5" fill="{ACCENT}"/>')
    return "".join(parts)


def _axis(scale: Scale, top: int) -> str:
    anchors = ["middle"] * len(scale.ticks)
    anchors[0], anchors[-1] = "start", "end"
    labels = [
        f'<text x="{scale.percent(t):.2f}%" y="{top + AXIS_PX - 6}" font-size="{FONT_PX}" '
        f'fill="{MUTED}" text-anchor="{anchor}">{escape(text)}</text>'
        for (t, text), anchor in zip(scale.ticks, anchors, strict=True)
    ]
    rule = (
        f'<line x1="{EDGE_PERCENT}%" x2="{100 - EDGE_PERCENT}%" y1="{top}" y2="{top}" '
        f'stroke="{MUTED}"/>'
    )
    return rule + "".join(labels)


def _wrapped(text: str) -> list[str]:
    """The label in lines of at most LABEL_PX: about 0.6 em a Latin letter, 1 em a Korean
    or Chinese character (Chinese has no spaces, so long runs are broken anywhere)."""
    wide = any(unicodedata.east_asian_width(c) in "WF" for c in text)
    characters = int(LABEL_PX / FONT_PX / (1.0 if wide else 0.6))
    return textwrap.wrap(text, width=characters) or [" "]
