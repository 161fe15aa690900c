"""The public results page: a survey's latest release, shown to anyone, no login.

It shows the numbers stored when the owner published (``releases.py``), never fresh
noise, and sets no cookie: reading results must leave no trace of having looked. Next to
them it shows what the page guarantees, which rests on every release ever made: the ε
spent by all of them, each release and each change of the budget. Estimates and counts
are drawn as charts in the page itself (``interval_chart``: no script, no image to fetch),
each below the table that holds its numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from flask import Blueprint, abort, render_template
from markupsafe import Markup

from survey_app.domain.release_figures import released_figures
from survey_app.domain.release_snapshots import read_snapshot
from survey_app.storage.releases import latest_snapshot, load_ledger
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.interval_chart import (
    ChartRow,
    count_scale,
    interval_chart,
    range_scale,
    share_scale,
)

bp = Blueprint("public", __name__)


@bp.get("/results/<slug>")
def results(slug: str) -> str:
    db = get_db()
    snapshot = latest_snapshot(db, slug)
    survey = get_survey(db, slug)
    if snapshot is None or survey is None:
        abort(404, description=_("No results have been published under that name."))
    return render_template(
        "public/results.html",
        snapshot=read_snapshot(snapshot),
        ledger=load_ledger(db, survey),
        figures_of=partial(released_figures, survey),
        estimates_chart=estimates_chart,
        groups_chart=groups_chart,
        counts_chart=counts_chart,
    )


def estimates_chart(question: Mapping[str, Any]) -> Markup | None:
    """One question's published estimates: a share's (or each option's) on 0–100%, a
    mean's on the question's range. None without an estimate to draw."""
    rows = question["rows"]
    if not rows:
        return None
    if question["type"].estimates_mean:
        scale = range_scale(question["min"], question["max"])
        labels = [_("Mean answer")]
    elif question["type"].is_yes_no:
        scale, labels = share_scale(), [_("Share answering yes")]
    else:
        scale, labels = share_scale(), [row["label"] for row in rows]
    drawn = [
        ChartRow(label, row["point"], row["low"], row["high"])
        for label, row in zip(labels, rows, strict=True)
    ]
    name = _(
        "Chart of “%(question)s”: each estimate with its 95%% interval. The same numbers "
        "are in the table above.",
        question=question["text"],
    )
    return interval_chart(drawn, scale, name)


def groups_chart(figure: Mapping[str, Any]) -> Markup | None:
    """Each group's published share answering yes, the withheld groups left to the table."""
    rows = [
        ChartRow(group["label"], *(group["estimate"][k] for k in ("point", "low", "high")))
        for group in figure["groups"]
        if group["estimate"] is not None
    ]
    if not rows:
        return None
    name = _(
        "Chart of “%(question)s” by group: each estimate with its 95%% interval. The same "
        "numbers are in the table above.",
        question=figure["text"],
    )
    return interval_chart(rows, share_scale(), name)


def counts_chart(figure: Mapping[str, Any]) -> Markup:
    """A plain question's noisy counts as bars, each with ± its 95% accuracy."""
    accuracy = figure["accuracy"]
    rows = [
        ChartRow(cell["label"], count, count - accuracy, count + accuracy)
        for cell in figure["cells"]
        for count in [cell["noisy_count"]]
    ]
    scale = count_scale([value for row in rows for value in (row.low, row.high)])
    name = _(
        "Chart of the answers to “%(question)s”: each noisy count with how far off it may "
        "be (95%%). The same numbers are in the table above.",
        question=figure["text"],
    )
    return interval_chart(rows, scale, name, bars=True)
