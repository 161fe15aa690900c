"""Running a study: what the survey list shows, and the owner's actions on a survey.

The same rules serve the browser and ``survey-app`` (cli.py): opening and closing are
``surveys.set_status``, sharing is ``surveys.share_survey`` with a researcher looked up by
name, and invitation links are ``invitations.create_invitations`` for a survey that takes
answers by invitation only; deleting a survey takes its address typed out, in both. The
errors here carry facts, not sentences: each caller words them in its own language (the
browser's page, the terminal's English).

Only a survey's owner runs it. A survey nobody owns yet (stored before any account
existed) is visible to administrators, but nobody runs it from the browser until the
first account adopts it: it stays with the operator's command line.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from survey_app.storage.accounts import Researcher, find_researcher
from survey_app.storage.backends import Database
from survey_app.storage.invitations import create_invitations
from survey_app.storage.studies import survey_activity, viewer_names
from survey_app.storage.surveys import (
    Survey,
    list_visible_surveys,
    set_status,
    share_survey,
    survey_response_count,
    unshare_survey,
)

# What each button does to a survey's status (the same as `survey-app open` / `close`).
STATUS_ACTIONS = {"open": "open", "close": "closed"}
# Links made at once in the browser: a page of a thousand links is already long. The
# command line makes up to a million, into a file.
MAX_LINKS_AT_ONCE = 1000


class StudyError(ValueError):
    """An action the rules refuse; nothing was changed."""


class UnknownResearcherError(StudyError):
    def __init__(self, username: str) -> None:
        super().__init__(f"no researcher named {username!r}")
        self.username = username


class NotByInvitationError(StudyError):
    def __init__(self, slug: str) -> None:
        super().__init__(
            f"{slug} is open to anyone with its address; invitations need `access: invitation`"
        )
        self.slug = slug


@dataclass(frozen=True)
class StudySummary:
    """One line of the survey list: enough to see how a study is going at a glance."""

    slug: str
    title: str
    status: str
    by_invitation: bool
    responses: int
    last_response: datetime.date | None  # responses keep only their day, never a time
    owned: bool  # whether the researcher looking runs it (else they only view it)


def study_summaries(db: Database, researcher_id: int) -> list[StudySummary]:
    """The surveys this researcher may see, with status, counts and last response day."""
    visible = list_visible_surveys(db, researcher_id)
    activity = survey_activity(db)
    summaries = []
    for row in visible:
        slug = str(row["slug"])
        owner_id = activity[slug].owner_id
        summaries.append(
            StudySummary(
                slug=slug,
                title=str(row["title"]),
                status=str(row["status"]),
                by_invitation=row["access"] == "invitation",
                responses=int(row["responses"]),  # type: ignore[call-overload]
                last_response=activity[slug].last_response,
                owned=owner_id is not None and owner_id == researcher_id,
            )
        )
    return summaries


def is_owner(survey: Survey, researcher_id: int) -> bool:
    """Whether this researcher may run the survey (one nobody owns yet is the operator's)."""
    return survey.owner_id is not None and survey.owner_id == researcher_id


def viewers(db: Database, survey: Survey) -> list[str]:
    """The usernames the survey's results are shared with, for its owner to see."""
    return viewer_names(db, survey)


def change_status(db: Database, survey: Survey, action: str) -> str:
    """Open or close the survey (``action`` is a key of STATUS_ACTIONS); its new status."""
    status = STATUS_ACTIONS[action]
    set_status(db, survey, status)
    return status


def researcher_named(db: Database, username: str) -> Researcher:
    """The researcher to share with; UnknownResearcherError when nobody has that name."""
    researcher = find_researcher(db, username)
    if researcher is None:
        raise UnknownResearcherError(username)
    return researcher


def share_with(db: Database, survey: Survey, username: str) -> str:
    """Let the researcher named ``username`` view the survey's results; their stored name."""
    researcher = researcher_named(db, username)
    share_survey(db, survey, researcher.id)
    return researcher.username


def unshare_with(db: Database, survey: Survey, username: str) -> str:
    """Stop letting the researcher named ``username`` view the survey; their stored name."""
    researcher = researcher_named(db, username)
    unshare_survey(db, survey, researcher.id)
    return researcher.username


def is_unanswered_draft(db: Database, survey: Survey) -> bool:
    """Whether deleting the survey takes only a confirmation: a draft nobody answered has
    no data to lose. Anything else takes its address typed out."""
    return survey.status == "draft" and survey_response_count(db, survey) == 0


def typed_slug_matches(survey: Survey, typed: str) -> bool:
    """Whether the address typed to confirm a deletion is this survey's, exactly."""
    return typed.strip() == survey.slug


def require_invitation_access(survey: Survey) -> None:
    """Refuse, before anything is made, links for a survey anyone may answer anyway."""
    if not survey.by_invitation:
        raise NotByInvitationError(survey.slug)


def invitation_link(base_url: str, slug: str, token: str) -> str:
    """The address a respondent opens: the survey's page with its single-use token."""
    return f"{base_url.rstrip('/')}/s/{slug}?invitation={token}"


def invitation_links(db: Database, survey: Survey, count: int, base_url: str) -> list[str]:
    """Make ``count`` single-use links; only their hashes are stored, so these are the
    only copies: whoever asked must keep them now."""
    require_invitation_access(survey)
    return [
        invitation_link(base_url, survey.slug, token)
        for token in create_invitations(db, survey, count)
    ]
