"""The respondent's browser scripts as the app serves them: minified, the same text everywhere.

The page with every question type must stay within its 30 KiB budget while each new
mechanism brings its own sampler, so the scripts are served without their comments and
indentation (a third of their bytes), by ``rjsmin``, a small well-kept minifier that only
strips (it renames nothing, so what runs is the source as written, line for line). The
audit, the browser tests and the page all take the text from here: what is audited is
byte for byte what a respondent's browser runs. Read once per process.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import rjsmin

STATIC = Path(__file__).resolve().parent / "static"
COINS = "coins.js"
FORM = "randomize.js"
#: A sectioned survey's Back and Next in the page (web/respond/section_steps.py).
SECTIONS = "sections.js"
#: Display logic in the page: shows a conditioned question while its condition holds.
SHOW_IF = "show_if.js"
MECHANISMS_FOLDER = "mechanisms"


def script_names() -> tuple[str, ...]:
    """Every script a respondent's page may load: the coins, each mechanism's module, the
    sections, display logic, the form. Nothing else is served this way (the builder's
    scripts are plain static files)."""
    modules = sorted(path.name for path in (STATIC / MECHANISMS_FOLDER).glob("*.js"))
    return (COINS, *(f"{MECHANISMS_FOLDER}/{name}" for name in modules), SECTIONS, SHOW_IF, FORM)


def minify(source: str) -> str:
    """JavaScript without its comments and spare whitespace (a fragment too: the audit's
    tests find a shipped statement in the served text by minifying it alike)."""
    return str(rjsmin.jsmin(source))


@cache
def served_script(name: str) -> str:
    """The minified text of ``name`` (one of ``script_names()``)."""
    if name not in script_names():
        raise KeyError(name)
    return minify((STATIC / name).read_text(encoding="utf-8"))


@cache
def script_version(name: str) -> str:
    """A short fingerprint of the served text, for its address: a changed script gets a
    new address, so a browser never runs a stale sampler against a new form."""
    return fingerprint(served_script(name))


def fingerprint(text: str) -> str:
    """12 hex digits of SHA-256 over ``text``: a served file's version."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]
