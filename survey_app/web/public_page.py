"""The public results page: a survey's latest release, shown to anyone, no login.

It shows the numbers stored when the owner published (``releases.py``), never fresh
noise, and sets no cookie: reading results must leave no trace of having looked. Next to
them it shows what the page guarantees, which rests on every release ever made: the ε
spent by all of them, each release and each change of the budget.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template

from survey_app.domain.releases import central_ledger, latest_snapshot
from survey_app.storage.database import get_db
from survey_app.storage.surveys import get_survey
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
        "public/results.html", snapshot=snapshot, ledger=central_ledger(db, survey)
    )
