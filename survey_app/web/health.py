"""``GET /healthz`` for load balancers and uptime checks."""

from __future__ import annotations

from flask import Blueprint

from survey_app.storage.database import ping
from survey_app.web.database_session import get_db

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> tuple[str, int, dict[str, str]]:
    """Cheap on purpose: one round trip proves the database opens, nothing more."""
    ping(get_db())
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}
