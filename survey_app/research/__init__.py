"""The researcher's side: login, dashboard, plots and exports."""

from .auth import bp as auth_bp
from .routes import bp

__all__ = ["auth_bp", "bp"]
