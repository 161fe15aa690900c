"""The browser scripts a survey's page loads: the coins, its mechanisms' modules, the form.

A respondent downloads only the samplers of the mechanisms the survey uses (the page
stays within its weight budget with every type), and each module is the mechanism's own
``browser_script``, so a new mechanism brings its own. The order is the load order:
``coins.js`` holds the registry each module joins, and ``randomize.js`` intercepts the
form only when every mechanism of the design has registered.
"""

from __future__ import annotations

from survey_app.storage.surveys import Survey

COINS = "coins.js"
FORM = "randomize.js"


def browser_scripts(survey: Survey) -> list[str]:
    """The static files ``survey``'s page loads, in order, each once."""
    modules = (question.mechanism.browser_script for question in survey.questions)
    return [COINS, *dict.fromkeys(module for module in modules if module), FORM]
