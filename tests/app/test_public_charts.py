"""The public results page draws each estimate and count as an inline SVG chart below the
table that holds its numbers: in the page's own markup (no script, no image to fetch, no
inline style the Content Security Policy would refuse), named for screen readers, each
point and interval where its numbers say. (tests/browser/test_tables_fit.py: axe in three
languages and the chart's text size on a phone.)"""

from __future__ import annotations

import html
import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from survey_app.domain.definitions import load_definition
from survey_app.domain.releases import publish, quote_release, set_budget
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey, store_survey
from survey_app.web.database_session import get_db
from survey_app.web.interval_chart import (
    EDGE_PERCENT,
    ChartRow,
    Scale,
    count_scale,
    interval_chart,
    share_scale,
)
from tests.support.examples import MIXED, MIXED_SLUG
from tests.support.statistics import Seeded

SLUG = "charted-life"
FIGURES = ["estimates", "histogram:year", "groups:cheated:year", "mode:year"]


@pytest.fixture
def published(mixed_app: Flask, researcher: str, tmp_path: Path) -> dict[str, Any]:
    """ada's copy of the mixed survey with 200 responses and a release of every kind of
    figure (seeded noise); the snapshot it stored."""
    path = tmp_path / "charted.yaml"
    path.write_text(MIXED.read_text().replace(f"slug: {MIXED_SLUG}\n", f"slug: {SLUG}\n"))
    with mixed_app.app_context():
        db = get_db()
        ada = db.execute("SELECT id FROM researchers WHERE username = ?", [researcher]).fetchone()
        survey = store_survey(db, load_definition(path), ada[0])
        for i in range(200):
            answers: dict[str, Any] = {"year": i % 4, "cheated": i % 3 == 0}
            answers |= {"skipped_meals": i % 2 == 0}
            answers |= {"substance": i % 5, "drinks": i % 2, "stress": None}
            record_response(db, survey, answers, f"charted-{i}")
        set_budget(db, survey, Fraction(4))
        stored = get_survey(db, SLUG)
        assert stored is not None
        return publish(db, quote_release(db, stored, FIGURES, "4"), Seeded(18)).snapshot


def charts(page: str) -> list[str]:
    return re.findall(r"<svg class=\"interval-chart\".*?</svg>", page, flags=re.S)


def test_every_estimate_and_count_gets_a_named_chart_the_policy_allows(
    mixed_app: Flask, published: dict[str, Any]
) -> None:
    response = mixed_app.test_client().get(f"/results/{SLUG}")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    drawn = charts(page)
    estimates, _histogram, groups, _mode = published["figures"]
    with_rows = [q for q in estimates["questions"] if q["rows"]]
    # One per sensitive question with an estimate, the histogram and the groups (the mode
    # is one word, not a chart).
    assert len(drawn) == len(with_rows) + 2
    for svg in drawn:
        name = re.search(r'role="img" aria-label="([^"]+)"', svg)
        assert name and f"<title>{name.group(1)}</title>" in svg
        assert "The same numbers are in the table above." in name.group(1)
    assert "style=" not in page and "<style" not in page and "<script" not in page
    headers = response.headers["Content-Security-Policy"]
    assert "style-src 'self'" in headers and "unsafe-inline" not in headers
    assert any("Chart of the answers to “Which year of study are you in?”" in svg for svg in drawn)
    assert any(estimates["questions"][0]["text"] in svg for svg in drawn)
    # Each chart sits right below its table.
    assert page.count('</table>\n<figure class="chart"><svg') == len(drawn)
    assert groups["groups"]  # every year group drawn or withheld by its noisy size


def test_points_and_intervals_are_placed_where_their_numbers_say() -> None:
    scale = share_scale_without_locale()
    svg = interval_chart([ChartRow("Yes", 0.25, 0.1, 0.5)], scale, "A chart")
    place = [EDGE_PERCENT + (100 - 2 * EDGE_PERCENT) * v for v in (0.25, 0.1, 0.5)]
    assert f'<circle cx="{place[0]:.2f}%"' in svg
    assert f'<line x1="{place[1]:.2f}%" x2="{place[2]:.2f}%"' in svg
    assert "viewBox" not in svg  # never scaled: its text stays 14 px on a phone
    outside = interval_chart([ChartRow("Far", 2.0, -1.0, 3.0)], scale, "A chart")
    assert f'cx="{100 - EDGE_PERCENT:.2f}%"' in outside and f'x1="{EDGE_PERCENT:.2f}%"' in outside


def share_scale_without_locale() -> Scale:
    return Scale(0.0, 1.0, ((0.0, "0%"), (0.5, "50%"), (1.0, "100%")))


def test_words_are_escaped_and_long_labels_wrap_on_their_own_lines() -> None:
    label = "<b>Have you</b> " + "really " * 20 + "answered?"
    svg = interval_chart([ChartRow(label, 0.5, 0.4, 0.6)], share_scale_without_locale(), "A & B")
    assert "<b>" not in svg and "&lt;b&gt;Have you&lt;/b&gt;" in svg
    assert 'aria-label="A &amp; B"' in svg
    lines = re.findall(r'<text x="0" y="\d+" font-size="14">([^<]*)</text>', svg)
    assert len(lines) > 1 and all(len(html.unescape(line)) <= 38 for line in lines)
    chinese = interval_chart([ChartRow("你" * 50, 0.5, 0.4, 0.6)], share_scale_without_locale(), "")
    assert all(
        len(line) <= 22 for line in re.findall(r'font-size="14">([^<]*)</text>', chinese)[:-3]
    )


@pytest.mark.parametrize(
    ("values", "ends", "step"),
    [
        ([3, 17], (0, 20), 5),
        ([-4, 96], (-20, 100), 20),
        ([0, 0.4], (0, 1), 1),
        ([990], (0, 1000), 200),
    ],
)
def test_count_axes_run_in_round_steps(
    app: Flask, values: list[float], ends: tuple[int, int], step: int
) -> None:
    with app.test_request_context("/"):
        scale = count_scale(values)
    assert (scale.low, scale.high) == ends
    ticks = [t for t, _text in scale.ticks]
    assert all(math.isclose(b - a, step) for a, b in zip(ticks, ticks[1:], strict=False))
    assert len(ticks) <= 7


def test_shares_are_labelled_in_the_page_s_locale(app: Flask) -> None:
    with app.test_request_context("/?lang=ko"):
        assert [text for _t, text in share_scale().ticks] == ["0%", "25%", "50%", "75%", "100%"]
