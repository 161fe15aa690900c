"""The app's stylesheet as served: minified, at an address that names its version.

Every page loads it, the respondent's too, whose page with every question type must stay
within its 30 KiB budget: served without comments and spare whitespace it is a fifth
smaller. ``rcssmin``, by ``rjsmin``'s author, only strips; it rewrites no rule. Read once
per process.
"""

from __future__ import annotations

from functools import cache

import rcssmin

from survey_app.served_scripts import STATIC, fingerprint

STYLESHEET = "style.css"


@cache
def served_stylesheet() -> str:
    """The minified text of ``static/style.css``."""
    return str(rcssmin.cssmin((STATIC / STYLESHEET).read_text(encoding="utf-8")))


@cache
def stylesheet_version() -> str:
    """A short fingerprint of the served text, for its address (``served_scripts``)."""
    return fingerprint(served_stylesheet())
