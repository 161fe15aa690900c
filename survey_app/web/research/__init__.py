"""The researcher's side: login, dashboard, plots and exports."""

from survey_app.web.research.auth import bp as auth_bp
from survey_app.web.research.routes import bp

__all__ = ["auth_bp", "bp"]
