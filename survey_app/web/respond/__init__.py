"""The respondent's pages: the survey list, the survey form and the thank-you page."""

from survey_app.web.respond.routes import bp

__all__ = ["bp"]
