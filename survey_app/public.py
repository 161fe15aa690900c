"""The public results page: a survey's latest release, shown to anyone, no login.

It shows the numbers stored when the owner published (``releases.py``), never fresh
noise, and sets no cookie: reading results must leave no trace of having looked.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template

from .db import get_db
from .i18n import gettext as _
from .releases import latest_snapshot

bp = Blueprint("public", __name__)


@bp.get("/results/<slug>")
def results(slug: str) -> str:
    snapshot = latest_snapshot(get_db(), slug)
    if snapshot is None:
        abort(404, description=_("No results have been published under that name."))
    return render_template("public/results.html", snapshot=snapshot)
