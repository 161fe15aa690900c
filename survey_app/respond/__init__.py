"""The respondent's pages: the survey list, the survey form and the thank-you page."""

from .routes import bp

__all__ = ["bp"]
