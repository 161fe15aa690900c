"""The browser scripts a survey's page loads: the coins, its mechanisms' modules, the form.

A respondent downloads only the samplers of the mechanisms the survey uses (the page
stays within its weight budget with every type), and each module is the mechanism's own
``browser_script``, so a new mechanism brings its own. They are served minified
(``survey_app.served_scripts``). The order is the load order: ``coins.js`` holds the
registry each module joins, and ``randomize.js`` intercepts the form only when every
mechanism of the design has registered.
"""

from __future__ import annotations

from flask import Response, abort, request, url_for

from survey_app.served_scripts import (
    COINS,
    FORM,
    SECTIONS,
    SHOW_IF,
    script_version,
    served_script,
)
from survey_app.served_stylesheet import served_stylesheet, stylesheet_version
from survey_app.storage.surveys import Survey


def browser_scripts(survey: Survey) -> list[str]:
    """The scripts ``survey``'s page loads, in order, each once: a sectioned survey's
    sections and a conditioned one's display logic before the form, so that they hear
    its "randomizing" event and Enter and Next act before the form's submit. A page
    loads only what it uses (its weight budget)."""
    modules = (question.mechanism.browser_script for question in survey.questions)
    sections = [SECTIONS] if survey.sections else []
    show_if = [SHOW_IF] if any(q.show_if is not None for q in survey.questions) else []
    mechanisms = dict.fromkeys(module for module in modules if module)
    return [COINS, *mechanisms, *sections, *show_if, FORM]


def script_addresses(survey: Survey) -> list[str]:
    """Where ``survey``'s page loads its scripts from, each address naming its version."""
    return [
        url_for("respond.script", name=name, v=script_version(name))
        for name in browser_scripts(survey)
    ]


def script_response(name: str) -> Response:
    """One served script (``served_scripts``); 404 for any other name."""
    try:
        text = served_script(name)
    except KeyError:
        abort(404)
    return _versioned(Response(text, mimetype="text/javascript"), script_version(name))


def stylesheet_address() -> str:
    """Where every page loads the stylesheet from, the address naming its version."""
    return url_for("respond.stylesheet", v=stylesheet_version())


def stylesheet_response() -> Response:
    """The minified stylesheet (``served_stylesheet``)."""
    return _versioned(Response(served_stylesheet(), mimetype="text/css"), stylesheet_version())


def _versioned(response: Response, version: str) -> Response:
    """An address carrying the file's current version may be kept for a year (a changed
    file has a new one); any other is checked against the ETag."""
    if request.args.get("v") == version:
        response.cache_control.public = True
        response.cache_control.max_age = 31_536_000
        response.cache_control.immutable = True
    response.add_etag()
    response.make_conditional(request)
    return response
