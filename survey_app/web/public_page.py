"""The public results page: a survey's latest release, shown to anyone, no login.

It shows the numbers stored when the owner published (``releases.py``), never fresh
noise, and sets no cookie: reading results must leave no trace of having looked. Next to
them it shows what the page guarantees, which rests on every release ever made: the ε
spent by all of them, each release and each change of the budget.
"""

from __future__ import annotations

from functools import partial

from flask import Blueprint, abort, render_template

from survey_app.domain.release_figures import released_figures
from survey_app.domain.release_snapshots import read_snapshot
from survey_app.storage.releases import latest_snapshot, load_ledger
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _

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
    )
