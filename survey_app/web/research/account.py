"""Every researcher's own account: who they are, and changing their password.

The current password is required, and checked as a login is (so a wrong one counts
towards the same throttles: a session left open on a shared computer cannot be used to
guess it faster). Once changed, every other session of the account ends, wherever it
was, and this one stays: someone who had the old password is out.
"""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from survey_app.storage import accounts
from survey_app.storage.accounts import AccountError, LoginThrottled
from survey_app.web.database_session import get_db
from survey_app.web.i18n import gettext as _
from survey_app.web.research.auth import (
    SESSION_KEY,
    current_researcher,
    new_password_error,
    throttled,
)
from survey_app.web.research.people_forms import ChangePasswordForm, refusal

bp = Blueprint("account", __name__)


@bp.route("/account", methods=["GET", "POST"])
def account() -> Response | tuple[str, int]:
    researcher = current_researcher()
    assert researcher is not None  # guaranteed by the research blueprint's guard
    form = ChangePasswordForm()
    error, status = new_password_error(form), 400  # 400 for a form the page refuses
    if request.method == "POST" and error is None:
        try:
            accounts.change_password(
                get_db(),
                researcher,
                form.current.data,
                form.password.data,
                address=request.remote_addr or "",
                now=accounts.current_time(),
                keep_session=session[SESSION_KEY],
            )
        except LoginThrottled as err:
            error, status = throttled(err), 429
        except AccountError as err:
            error = refusal(err)
        else:
            flash(_("Your password is changed. You are logged out everywhere else."))
            return redirect(url_for(".account"))
    page = render_template(
        "research/account.html",
        researcher=researcher,
        form=form,
        error=error,
        min_length=accounts.MIN_PASSWORD_LENGTH,
    )
    return page, status if error else 200
