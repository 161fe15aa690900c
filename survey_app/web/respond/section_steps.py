"""A sectioned survey without JavaScript: one POST per section, nothing stored until the last.

Each section's page is a form of that section's questions, its form token (the same on
every page of one respondent's way through) and the reports so far, carried signed
(``carried_reports``). Next posts the section's true answers: they are checked, then
randomized at once, that section's questions only (``answers.randomize_response``), and
the next page carries their reports with the earlier ones; it comes back empty. The last
section's Send gives the carried reports and its own to the ordinary, idempotent store
(``routes.submit``). Back shows the section before, empty, carrying only the reports of
the sections before that one: answering it again replaces its reports; the answers
posted with Back are dropped unread.

With JavaScript the page holds every section (``static/sections.js``) and the survey is
sent once, as a page of one section would be: that POST has no carried field and takes
the ordinary path.

Refusals: a carried field that is made up, altered, expired, another survey's, another
form's, or a form token that is not this survey's: 400, nothing stored, and the survey
starts again at its first section (the reports carried cannot be trusted). A section
whose answers are refused (missing, malformed, fields of another section): 400, the same
section again, empty, with the same carried field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from werkzeug.datastructures import MultiDict
from wtforms.form import BaseForm

from survey_app.domain.answers import Report, from_stored, randomize_response, to_stored
from survey_app.domain.display_logic import NOT_APPLICABLE, condition_questions
from survey_app.privacy.wire import Stored
from survey_app.storage.invitations import TICKET_PATTERN
from survey_app.storage.surveys import Survey
from survey_app.web.form_tokens import ExpiredFormToken, FormTokenError, random_part
from survey_app.web.i18n import gettext as _
from survey_app.web.respond.carried_reports import (
    FIELD,
    Carried,
    CarriedReportsError,
    ExpiredCarriedReports,
    carried_before,
    carried_from,
    carry,
)
from survey_app.web.respond.forms import (
    CONTROL_FIELDS,
    answered_values,
    build_response_form,
    checked_submission_id,
    form_problems,
    posted_not_applicable,
    sent_by_browser,
)

#: The button pressed: "next" (Next, and Send on the last section) or "back".
GO = "sections-go"
NEXT, BACK = "next", "back"
#: What a section's page posts besides its answers.
SECTION_CONTROLS = CONTROL_FIELDS | {FIELD, GO}


@dataclass(frozen=True)
class SectionPage:
    """One section's page: which, its form token and its signed carried reports."""

    section: int
    submission_id: str
    carried: str


@dataclass(frozen=True)
class SectionStep:
    """What one section's POST leads to: a page (``page``; None: the first section, afresh)
    with what was refused, if anything, or, after the last section, the whole response's
    reports to store (``reports``; None for the questions in ``not_applicable``) with the
    section's validated ``form``."""

    page: SectionPage | None = None
    problems: list[str] = field(default_factory=list)
    field_errors: dict[str, list[str]] = field(default_factory=dict)
    status: int = 200
    form: BaseForm | None = None
    reports: dict[str, Report | None] | None = None
    not_applicable: frozenset[str] = frozenset()


def posts_a_section(survey: Survey, posted: MultiDict[str, str]) -> bool:
    """Whether this POST is one section's page without JavaScript (it carries reports)."""
    return bool(survey.sections) and FIELD in posted and not sent_by_browser(posted)


def first_page(survey: Survey, token: str) -> SectionPage:
    """The first section's page for a freshly issued form token: nothing carried yet."""
    return SectionPage(0, token, carry(survey, random_part(token), Carried(0, {})))


def posted_ticket(posted: MultiDict[str, str]) -> str | None:
    """The answer ticket a section's page carries (its ``invitation`` field), if it is
    one's shape."""
    ticket = posted.get("invitation")
    return ticket if ticket and TICKET_PATTERN.fullmatch(ticket) else None


def section_step(survey: Survey, posted: MultiDict[str, str]) -> SectionStep:
    """Check one section's POST and take the respondent on: back, on, or to the store."""
    token = posted.get("submission_id", "")
    try:
        if len(posted.getlist(FIELD)) != 1:
            raise CarriedReportsError("sent more than once")
        submission_id = checked_submission_id(survey, token)
        carried = carried_from(survey, submission_id, posted[FIELD])
    except (FormTokenError, CarriedReportsError) as err:
        return SectionStep(problems=[_start_again(err)], status=400)
    if posted.get(GO) == BACK:
        back = max(carried.section - 1, 0)
        kept = carried_before(survey, carried.reports, back)
        return SectionStep(SectionPage(back, token, carry(survey, submission_id, kept)))
    return _answered(survey, posted, SectionPage(carried.section, token, posted[FIELD]), carried)


def _answered(
    survey: Survey, posted: MultiDict[str, str], page: SectionPage, carried: Carried
) -> SectionStep:
    """A section's answers: refused (the same page again), or randomized and carried on."""
    section = dataclasses.replace(survey, questions=survey.section_questions(page.section))
    # Display logic on the plain answers of the sections before and of this one.
    hidden = posted_not_applicable(survey, posted, _plain_answers(survey, carried.reports))
    form = build_response_form(section, posted, hidden)
    problems = form_problems(section, posted, SECTION_CONTROLS)
    if posted.get(GO, NEXT) != NEXT:
        problems.append(_("The form was changed after it left this site."))
    if problems or not form.validate():
        return SectionStep(page, problems, form.errors, status=400)
    # The true answers go no further than this: only their reports are carried or stored.
    values = answered_values(section, form, hidden)
    reports = randomize_response(section, values)  # type: ignore[arg-type]
    stored: dict[str, Stored] = {
        **carried.reports,
        **{
            q.key: NOT_APPLICABLE if q.key in hidden else to_stored(q, reports[q.key])
            for q in section.questions
        },
    }
    following = page.section + 1
    if following < len(survey.sections):
        submission_id = random_part(page.submission_id)
        onward = carry(survey, submission_id, Carried(following, stored))
        return SectionStep(SectionPage(following, page.submission_id, onward))
    skipped = frozenset(key for key, value in stored.items() if value == NOT_APPLICABLE)
    whole = {
        q.key: None if q.key in skipped else from_stored(q, stored[q.key]) for q in survey.questions
    }
    return SectionStep(form=form, reports=whole, not_applicable=skipped)


def _plain_answers(survey: Survey, carried: Mapping[str, Stored]) -> dict[str, object]:
    """The carried plain answers some condition depends on, as the form reads them (a
    plain question's report is its answer, stored as given); None where it did not apply."""
    by_key = {q.key: q for q in survey.questions}
    return {
        key: None if carried[key] == NOT_APPLICABLE else from_stored(by_key[key], carried[key])
        for key in condition_questions(survey.questions) & carried.keys()
    }


def _start_again(error: FormTokenError | CarriedReportsError) -> str:
    """Why the survey starts again, in the respondent's words (never what was carried)."""
    if isinstance(error, (ExpiredFormToken, ExpiredCarriedReports)):
        return _(
            "The page was shown too long ago and has expired, so nothing was stored. "
            "Please answer the survey again from the start."
        )
    return _(
        "The answers carried from the earlier sections could not be used, so nothing was "
        "stored. Please answer the survey again from the start."
    )
