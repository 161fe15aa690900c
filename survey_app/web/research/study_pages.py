"""Running a study: the owner's controls on a survey (open, close, share and unshare,
invite, list on the front page, keep the answers until a date, delete), and a copy of
any survey a researcher can see.

The routes sit on the dashboard's blueprint (``research.dashboard.study`` and so on): one
survey's pages under one name. Every action that changes something is a POST with the
CSRF token. Those that cannot be undone (opening, sharing, links, deletion) are two
steps: a GET that checks the request and asks, changing nothing (a link or a prefetch is
harmless; sharing asks by POST, see ``share``), then the POST that does it. Settings that
can be changed back (listing, the retention date, unsharing) and a copy (a new draft) are
one POST from the study page. None needs JavaScript.
"""

from __future__ import annotations

from flask import Response, abort, flash, redirect, render_template, request, url_for

from survey_app.storage import destruction
from survey_app.storage.destruction import (
    Erasure,
    Removal,
    SurveyGoneError,
    delete_survey,
    survey_holdings,
)
from survey_app.storage.invitations import FEW_LINKS
from survey_app.storage.studies import (
    RetentionDateInPastError,
    RetentionDatePassedError,
    copy_survey,
    set_listed,
    set_retention,
)
from survey_app.storage.surveys import (
    Survey,
    SurveyDestroyedError,
    SurveyNotDraftError,
    delete_draft,
)
from survey_app.web.database_session import get_db
from survey_app.web.i18n import format_date, ngettext
from survey_app.web.i18n import gettext as _
from survey_app.web.limits import limit_share_lookups
from survey_app.web.research.access import owned_survey, visible_survey
from survey_app.web.research.auth import current_researcher
from survey_app.web.research.forms import (
    ConfirmForm,
    DeleteForm,
    InviteForm,
    ListingForm,
    RetentionForm,
    ShareForm,
)
from survey_app.web.research.routes import bp
from survey_app.web.research.studies import (
    MAX_LINKS_AT_ONCE,
    STATUS_ACTIONS,
    NotByInvitationError,
    UnknownResearcherError,
    change_status,
    invitation_links,
    is_unanswered_draft,
    require_invitation_access,
    researcher_named,
    share_with,
    typed_slug_matches,
    unshare_with,
    viewers,
)
from survey_app.web.survey_address import public_base


def _owned_survey(slug: str) -> Survey:
    return owned_survey(slug, _("Only the survey's owner can run the study."))


def _researcher_name() -> str:
    researcher = current_researcher()
    assert researcher is not None  # guaranteed by the research blueprint's guard
    return researcher.username


def _study_page(survey: Survey, error: str | None = None) -> tuple[str, int]:
    retention = RetentionForm(formdata=None, meta={"csrf": False})
    retention.retain_until.data = survey.retain_until
    retention.keep_public_figures.data = survey.keep_public_figures
    page = render_template(
        "research/study.html",
        survey=survey,
        viewers=viewers(get_db(), survey),
        share_form=ShareForm(formdata=None, meta={"csrf": False}),
        invite_form=InviteForm(formdata=None, meta={"csrf": False}),
        retention_form=retention,
        today=destruction.utc_today(),
        max_links=MAX_LINKS_AT_ONCE,
        few_links=FEW_LINKS,
        error=error,
    )
    return page, 400 if error else 200


def _back_to_study(survey: Survey, message: str) -> Response:
    flash(message)
    return redirect(url_for("research.dashboard.study", slug=survey.slug))  # type: ignore[return-value]


@bp.get("/surveys/<slug>/study")
def study(slug: str) -> tuple[str, int]:
    return _study_page(_owned_survey(slug))


@bp.route("/surveys/<slug>/<any(open, close):action>", methods=["GET", "POST"])
def status_action(slug: str, action: str) -> Response | str | tuple[str, int]:
    survey = _owned_survey(slug)
    form = ConfirmForm()
    if form.validate_on_submit():
        try:
            change_status(get_db(), survey, action)
        except SurveyDestroyedError:
            return _study_page(survey, _destroyed_error())
        if STATUS_ACTIONS[action] == "open":
            return _back_to_study(survey, _("The survey is open: it accepts answers."))
        return _back_to_study(survey, _("The survey is closed: it refuses further answers."))
    return render_template("research/study_confirm.html", survey=survey, action=action, form=form)


def _destroyed_error() -> str:
    return _("Its answers were destroyed after its retention date: it stays closed.")


def _share_error(username: str) -> str:
    return _("There is no researcher named %(username)s.", username=username)


@bp.post("/surveys/<slug>/share")
@limit_share_lookups
def share(slug: str) -> Response | tuple[str, int] | str:
    """Ask to share with a username, then (``confirmed``) share.

    Unlike the other controls, even the question is a POST with CSRF and a rate limit: its
    answer says whether a researcher by that name exists, so no link, prefetch or other
    site can ask it, and guessing names is slow.
    """
    survey = _owned_survey(slug)
    form = ShareForm()
    if not form.validate_on_submit():
        return _study_page(survey, _("Give the username of the researcher to share with."))
    username = form.username.data or ""
    try:
        if request.form.get("confirmed") == "yes":
            shown = share_with(get_db(), survey, username)
            return _back_to_study(
                survey, _("%(username)s can now view this survey's results.", username=shown)
            )
        researcher_named(get_db(), username)
    except UnknownResearcherError:
        return _study_page(survey, _share_error(username))
    return render_template(
        "research/study_confirm.html", survey=survey, action="share", form=form, username=username
    )


@bp.post("/surveys/<slug>/unshare")
def unshare(slug: str) -> Response | tuple[str, int]:
    """Stop sharing with a viewer: the study page lists them, each with this button. It
    can be undone by sharing again, so it asks nothing first."""
    survey = _owned_survey(slug)
    form = ShareForm()
    if not form.validate_on_submit():
        return _study_page(survey, _("Give the username of the researcher to stop sharing with."))
    try:
        shown = unshare_with(get_db(), survey, form.username.data or "")
    except UnknownResearcherError as err:
        return _study_page(survey, _share_error(err.username))
    return _back_to_study(
        survey, _("%(username)s can no longer view this survey's results.", username=shown)
    )


@bp.route("/surveys/<slug>/invite", methods=["GET", "POST"])
def invite(slug: str) -> tuple[str, int] | str:
    survey = _owned_survey(slug)
    try:
        require_invitation_access(survey)
    except NotByInvitationError:
        return _study_page(
            survey,
            _(
                "Anyone with the survey's address may answer it, so it needs no invitations. "
                "Invitation links are for surveys with “access: invitation” in their file."
            ),
        )
    asked = InviteForm(formdata=request.args, meta={"csrf": False})
    form = InviteForm()
    if form.validate_on_submit():
        links = invitation_links(get_db(), survey, form.count.data or 0, public_base())
        return render_template(
            "research/study_links.html", survey=survey, links=links, few_links=FEW_LINKS
        )
    if not asked.validate():
        return _study_page(
            survey,
            _("Ask for a whole number of links, from 1 to %(most)s.", most=MAX_LINKS_AT_ONCE),
        )
    form.count.data = asked.count.data
    return render_template(
        "research/study_confirm.html",
        survey=survey,
        action="invite",
        form=form,
        count=asked.count.data,
    )


@bp.post("/surveys/<slug>/listing")
def listing(slug: str) -> Response | tuple[str, int]:
    survey = _owned_survey(slug)
    form = ListingForm()
    if not form.validate_on_submit():
        abort(400)
    set_listed(get_db(), survey, form.listed.data)
    if form.listed.data:
        return _back_to_study(survey, _("The front page lists the survey while it is open."))
    return _back_to_study(
        survey, _("The front page does not list the survey: only its address leads to it.")
    )


@bp.post("/surveys/<slug>/retention")
def retention(slug: str) -> Response | tuple[str, int]:
    """Set, move or clear the date after which the survey's answers are destroyed."""
    survey = _owned_survey(slug)
    form = RetentionForm()
    if not form.validate_on_submit():
        return _study_page(survey, _("Give the date as a day, such as 2030-12-31, or none."))
    until = form.retain_until.data
    try:
        set_retention(get_db(), survey, until, form.keep_public_figures.data)
    except RetentionDateInPastError:
        return _study_page(survey, _("The date must be today or later."))
    except RetentionDatePassedError:
        return _study_page(
            survey, _("Its retention date has passed: its answers are about to be destroyed.")
        )
    except SurveyDestroyedError:
        return _study_page(survey, _destroyed_error())
    if until is None:
        return _back_to_study(survey, _("No retention date: the answers are kept until deleted."))
    return _back_to_study(
        survey,
        _("The answers will be destroyed after %(day)s (UTC).", day=format_date(until)),
    )


@bp.route("/surveys/<slug>/delete", methods=["GET", "POST"])
def delete(slug: str) -> Response | str | tuple[str, int]:
    """Delete a draft nobody answered (a confirmation), or a survey and all its data (its
    address typed out, after a page saying what goes and what backups keep)."""
    survey = _owned_survey(slug)
    if is_unanswered_draft(get_db(), survey):
        return _delete_draft(survey)
    form = DeleteForm()
    error = None
    if form.validate_on_submit():
        if typed_slug_matches(survey, form.slug.data or ""):
            return _deleted(_delete_survey(survey))
        error = _("That is not this survey's address name: nothing was deleted.")
    elif request.method == "POST":
        error = _("Type the survey's address name to delete it.")
    page = render_template(
        "research/study_delete.html",
        survey=survey,
        form=form,
        holdings=survey_holdings(get_db(), survey),
        error=error,
    )
    return page, 400 if error else 200


def _delete_draft(survey: Survey) -> Response | str:
    form = ConfirmForm()
    if not form.validate_on_submit():
        return render_template("research/study_delete.html", survey=survey, form=form)
    try:
        delete_draft(get_db(), survey)
    except SurveyNotDraftError:
        abort(
            409, description=_("The survey was opened or answered meanwhile: nothing was deleted.")
        )
    flash(_("The draft %(title)s is deleted.", title=survey.title))
    return redirect(url_for("research.dashboard.index"))  # type: ignore[return-value]


def _delete_survey(survey: Survey) -> Removal:
    try:
        return delete_survey(get_db(), survey, _researcher_name())
    except SurveyGoneError:
        abort(404, description=_("There is no survey with that name."))


def _deleted(removal: Removal) -> Response:
    flash(
        ngettext(
            "%(title)s is deleted, with its %(num)s response and everything made from it.",
            "%(title)s is deleted, with its %(num)s responses and everything made from them.",
            removal.responses,
            title=removal.title,
        )
    )
    if removal.erasure is Erasure.LOG_BUSY:
        flash(
            _(
                "The database was busy: copies of the deleted pages stay in its write-ahead "
                "log until its next checkpoint."
            )
        )
    elif removal.erasure is Erasure.VACUUMED:
        flash(
            _(
                "The tables were vacuumed: no old version of the deleted rows is left in "
                "them, but copies remain in PostgreSQL’s write-ahead log archives, replicas "
                "and backups for as long as they are kept."
            )
        )
    return redirect(url_for("research.dashboard.index"))  # type: ignore[return-value]


@bp.post("/surveys/<slug>/copy")
def copy(slug: str) -> Response:
    """A new draft of the researcher's own with this survey's questions and mechanisms,
    opened in the builder. A viewer may copy too: they can read the survey anyway."""
    survey = visible_survey(slug)
    if not ConfirmForm().validate_on_submit():
        abort(400)
    researcher = current_researcher()
    assert researcher is not None
    draft = copy_survey(get_db(), survey, researcher.id)
    return redirect(url_for("research.builder.edit", slug=draft.slug, saved=1))  # type: ignore[return-value]
