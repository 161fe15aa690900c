"""The administrators' page of people: the accounts, adding a researcher, changing an
account, and the record of what was done to accounts and surveys.

For administrators only: any other researcher gets 403 (anonymous visitors were already
sent to log in by the research guard). Adding a researcher and resetting a password end
with a single-use link to set a password, shown once (only its hash is stored) and built
on the address the administrator is using, as invitation links are. Every other change is
asked first (a GET: the question, changing nothing, so a link or a prefetch is harmless)
and made by a POST with its CSRF token. The rules (never one's own account, never the last
active administrator) are the storage's (accounts.py); this page only words its refusals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response

from survey_app.storage import accounts
from survey_app.storage.accounts import (
    PASSWORD_LINK_SECONDS,
    AccountError,
    Researcher,
    UnknownAccountError,
    add_researcher,
    find_researcher,
    list_accounts,
    set_active,
    set_administrator,
)
from survey_app.storage.backends import Database
from survey_app.storage.destruction import ANSWERS_DESTROYED, SURVEY_DELETED
from survey_app.storage.events import recent_events
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.research.auth import current_researcher
from survey_app.web.research.forms import ConfirmForm
from survey_app.web.research.people_forms import AddResearcherForm, refusal
from survey_app.web.survey_address import public_base

bp = Blueprint("people", __name__)

# Every event recorded, in words: the account changes made here and the removals of
# storage/destruction.py (its actor "retention" is shown as stored).
EVENT_WORDS = {
    SURVEY_DELETED: _l("survey deleted"),
    ANSWERS_DESTROYED: _l("answers destroyed after the retention date"),
    "administrator added": _l("administrator added"),
    "researcher added": _l("researcher added"),
    "researcher deactivated": _l("researcher deactivated"),
    "researcher reactivated": _l("researcher reactivated"),
    "password reset": _l("password reset"),
    "password set": _l("password set from a link"),
    "password changed": _l("password changed"),
    "administrator made": _l("made an administrator"),
    "administrator unmade": _l("administrator role removed"),
}


def _reset(db: Database, actor: Researcher, username: str) -> str:
    return accounts.reset_password(db, actor, username, accounts.current_time())


@dataclass(frozen=True)
class PersonAction:
    """A change to one account: how it is asked, and what it does (``apply`` returns the
    token of a new password link when it makes one)."""

    question: str
    explanation: str
    button: str
    done: str
    apply: Callable[[Database, Researcher, str], str | None]


ACTIONS = {
    "deactivate": PersonAction(
        _l("Deactivate %(username)s?"),
        _l(
            "They can no longer log in, and every session of theirs ends now. Their surveys "
            "stay. You can reactivate the account later."
        ),
        _l("Yes, deactivate the account"),
        _l("%(username)s is deactivated and logged out everywhere."),
        functools.partial(set_active, active=False),
    ),
    "reactivate": PersonAction(
        _l("Reactivate %(username)s?"),
        _l("They can log in again with their password."),
        _l("Yes, reactivate the account"),
        _l("%(username)s can log in again."),
        functools.partial(set_active, active=True),
    ),
    "reset_password": PersonAction(
        _l("Reset the password of %(username)s?"),
        _l(
            "Their password stops working and every session of theirs ends now. The next "
            "page shows a new link, once, for them to set a new password."
        ),
        _l("Yes, reset the password"),
        "",
        _reset,
    ),
    "make_admin": PersonAction(
        _l("Make %(username)s an administrator?"),
        _l(
            "They will see this page: add researchers, deactivate them, reset their "
            "passwords and make administrators."
        ),
        _l("Yes, make an administrator"),
        _l("%(username)s is an administrator."),
        functools.partial(set_administrator, admin=True),
    ),
    "unmake_admin": PersonAction(
        _l("Remove the administrator role of %(username)s?"),
        _l("They stay a researcher, with their surveys, but no longer manage accounts."),
        _l("Yes, remove the role"),
        _l("%(username)s is no longer an administrator."),
        functools.partial(set_administrator, admin=False),
    ),
}


@bp.before_request
def require_administrator() -> None:
    researcher = current_researcher()
    if researcher is None or not researcher.is_admin:
        abort(403, description=_("Only administrators can manage accounts."))


def _administrator() -> Researcher:
    researcher = current_researcher()
    assert researcher is not None  # guaranteed by require_administrator
    return researcher


def _people_page(
    form: AddResearcherForm | None = None, error: str | None = None
) -> tuple[str, int]:
    db = get_db()
    page = render_template(
        "research/people.html",
        people=list_accounts(db),
        events=recent_events(db),
        event_words=EVENT_WORDS,
        form=form or AddResearcherForm(formdata=None),
        me=_administrator().username,
        error=error,
    )
    return page, 400 if error else 200


def _link_page(username: str, token: str, added: bool) -> str:
    """The link, shown this once. Built without the page's ``lang``: the person who opens
    it may read another language, and their browser chooses."""
    link = public_base() + url_for("auth.set_password", token=token, lang=None)
    return render_template(
        "research/people_link.html",
        username=username,
        link=link,
        added=added,
        days=PASSWORD_LINK_SECONDS // (24 * 3600),
    )


@bp.get("/people")
def index() -> tuple[str, int]:
    return _people_page()


@bp.post("/people")
def add() -> str | tuple[str, int]:
    form = AddResearcherForm()
    if not form.validate_on_submit():
        return _people_page(form, _("Give the new researcher's username."))
    try:
        researcher, token = add_researcher(
            get_db(), _administrator(), form.username.data, accounts.current_time()
        )
    except AccountError as err:
        return _people_page(form, refusal(err))
    return _link_page(researcher.username, token, added=True)


def _ask_then_do(name: str) -> Response | str | tuple[str, int]:
    """Ask about ``ACTIONS[name]`` for the account ``username`` (GET), or do it (POST)."""
    action = ACTIONS[name]
    username = request.values.get("username", "")
    if find_researcher(get_db(), username) is None:
        abort(404, description=refusal(UnknownAccountError(username)))
    form = ConfirmForm()
    if not form.validate_on_submit():
        return render_template(
            "research/people_confirm.html",
            action=action,
            question=str(action.question) % {"username": username},
            username=username,
            form=form,
        )
    try:
        token = action.apply(get_db(), _administrator(), username)
    except AccountError as err:
        return _people_page(error=refusal(err))
    if token is not None:
        return _link_page(username, token, added=False)
    flash(str(action.done) % {"username": username})
    return redirect(url_for(".index"))


@bp.route("/people/deactivate", methods=["GET", "POST"])
def deactivate() -> Response | str | tuple[str, int]:
    return _ask_then_do("deactivate")


@bp.route("/people/reactivate", methods=["GET", "POST"])
def reactivate() -> Response | str | tuple[str, int]:
    return _ask_then_do("reactivate")


@bp.route("/people/reset-password", methods=["GET", "POST"])
def reset_password() -> Response | str | tuple[str, int]:
    return _ask_then_do("reset_password")


@bp.route("/people/make-admin", methods=["GET", "POST"])
def make_admin() -> Response | str | tuple[str, int]:
    return _ask_then_do("make_admin")


@bp.route("/people/unmake-admin", methods=["GET", "POST"])
def unmake_admin() -> Response | str | tuple[str, int]:
    return _ask_then_do("unmake_admin")
