"""The researcher's side: every page under /research/ behind one door, and the login.

``bp`` is the door: one blueprint at /research whose guard (``auth.require_researcher``)
runs before any page nested in it (the dashboard and study controls, the builder, the
analyses, publishing), so a page added to any of them is guarded without asking;
``tests/app/test_access.py`` walks the app's URL map to check it. Login and logout
(``auth_bp``) stay outside it, at /login and /logout, reachable without a login.
Endpoints are named through the door: ``research.dashboard.study``,
``research.builder.edit``, ``research.analysis.groups``, ``research.publishing.release``.
"""

from flask import Blueprint

from survey_app.web.research import (
    account,
    analysis_pages,
    builder,
    downloads,
    people,
    publishing,
    routes,
)
from survey_app.web.research.auth import bp as auth_bp
from survey_app.web.research.auth import require_researcher

bp = Blueprint("research", __name__, url_prefix="/research")
bp.before_request(require_researcher)
for pages in (
    routes.bp,
    builder.bp,
    analysis_pages.bp,
    publishing.bp,
    people.bp,
    account.bp,
    downloads.bp,
):
    bp.register_blueprint(pages)

__all__ = ["auth_bp", "bp"]
