"""The reports a sectioned survey carries from page to page without JavaScript.

Without JavaScript each section's Next posts that section's true answers; the server
randomizes them at once (``answers.randomize_response``) and answers with the next
section's page, which carries the reports so far in one hidden field. Nothing is stored
until the last section is sent. The field holds only reports (a plain answer is its own
report), never a true answer to a sensitive question, so the page, the browser's history
and the network hold no more than the thank-you page will show.

The field is signed and expiring (itsdangerous' ``URLSafeTimedSerializer``, the app's
secret keys, a salt of its own, SHA-256) and names the survey, the form's submission id
(the random part of its form token, ``web/form_tokens.py``) and the section it is for: a
field altered, too old, from another survey or carried into another respondent's form is
refused, and so is one for another section than the page's.

Its length does not depend on the answers: the JSON is never compressed (zlib would make
its length depend on the reports) and is padded to a length fixed by the survey and the
section alone, each carried question counted at the longest stored report it can have
(``_longest_stored``). Signed, not encrypted: the respondent may read their own reports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flask import current_app
from itsdangerous import BadSignature, SignatureExpired, TimestampSigner, URLSafeTimedSerializer
from itsdangerous.encoding import base64_encode
from itsdangerous.serializer import Serializer

from survey_app.domain.display_logic import NOT_APPLICABLE
from survey_app.domain.survey_limits import LARGEST_REPORT
from survey_app.privacy.wire import Stored
from survey_app.storage.surveys import Question, Survey
from survey_app.web import form_tokens
from survey_app.web.signing_keys import signing_keys

SALT = "survey-app reports carried between the sections of a survey"
#: The hidden field's name: not a question key (those have no hyphen).
FIELD = "sections-carried"
#: The longest stored report of any kind but a set or bits: a number within
#: ±LARGEST_REPORT with its sign; an index or "2j + b" is shorter, and null is 4.
_LONGEST_SCALAR = len(str(-LARGEST_REPORT))
#: A question that did not apply is carried as the text ``NOT_APPLICABLE`` (display logic).
_NOT_APPLICABLE_LENGTH = len(json.dumps(NOT_APPLICABLE))


class CarriedReportsError(ValueError):
    """The carried field cannot be used: made up, altered, for another survey, form or
    section. The respondent starts the survey again; nothing was stored."""


class ExpiredCarriedReports(CarriedReportsError):
    """The carried field is older than its lifetime."""


@dataclass(frozen=True)
class Carried:
    """The reports of every section before ``section``, the one the page shows, by key."""

    section: int
    reports: dict[str, Stored]


class _Signer(TimestampSigner):
    """Reads the form tokens' clock (``form_tokens.now``), which tests move."""

    def get_timestamp(self) -> int:
        return int(form_tokens.now())


class _Uncompressed(URLSafeTimedSerializer):
    """Never compressed: zlib's output length would depend on the reports."""

    def dump_payload(self, obj: object) -> bytes:
        return base64_encode(Serializer.dump_payload(self, obj))


def _serializer(secret_keys: Sequence[str | bytes]) -> _Uncompressed:
    keys = [key.encode() if isinstance(key, str) else key for key in secret_keys]
    return _Uncompressed(
        keys,
        salt=SALT,
        signer=_Signer,
        signer_kwargs={"digest_method": hashlib.sha256},
    )


def carry(survey: Survey, submission_id: str, carried: Carried) -> str:
    """The signed field for the page of section ``carried.section`` of the form whose
    submission id is ``submission_id``, padded to that section's one length."""
    payload: dict[str, object] = {
        "survey": survey.id,
        "form": submission_id,
        "section": carried.section,
        "reports": carried.reports,
        "pad": "",
    }
    unpadded = len(_json(payload))
    target = _padded_length(survey, submission_id, carried.section)
    if unpadded > target:  # a report longer than _longest_stored allows: never send it
        raise ValueError("a carried report is longer than its question's longest")
    payload["pad"] = " " * (target - unpadded)
    return str(_serializer(signing_keys()).dumps(payload))


def carried_from(survey: Survey, submission_id: str, text: str) -> Carried:
    """The reports carried in ``text``, if this app signed them within their lifetime for
    this survey and this form, for one of its sections; CarriedReportsError otherwise."""
    hours = int(current_app.config["SECTION_MAX_AGE_HOURS"])
    try:
        payload = _serializer(signing_keys()).loads(text, max_age=hours * 3600)
    except SignatureExpired as err:
        raise ExpiredCarriedReports("expired") from err
    except BadSignature as err:
        raise CarriedReportsError("not signed by this app") from err
    if not isinstance(payload, dict) or payload.get("survey") != survey.id:
        raise CarriedReportsError("another survey's")
    if payload.get("form") != submission_id:
        raise CarriedReportsError("another form's")
    section = payload.get("section")
    if not isinstance(section, int) or not 0 <= section < len(survey.sections):
        raise CarriedReportsError("no section of this survey")
    reports = payload.get("reports")
    expected = {q.key for index in range(section) for q in survey.section_questions(index)}
    if not isinstance(reports, dict) or set(reports) != expected:
        raise CarriedReportsError("not the reports of the sections before")
    return Carried(section, reports)


def carried_before(survey: Survey, reports: Mapping[str, Stored], section: int) -> Carried:
    """What the page of ``section`` carries: the reports of the sections before it (on
    Back, the later ones are dropped; that section is answered again)."""
    keys = [q.key for index in range(section) for q in survey.section_questions(index)]
    return Carried(section, {key: reports[key] for key in keys})


def _json(payload: Mapping[str, object]) -> str:
    """The payload as the serializer writes it (compact, keys in order, ASCII)."""
    return json.dumps(payload, separators=(",", ":"))


def _padded_length(survey: Survey, submission_id: str, section: int) -> int:
    """The payload's length with every carried question at its longest report: the same
    for every respondent on the page of ``section``."""
    longest = {
        q.key: "9" * _longest_stored(q)
        for index in range(section)
        for q in survey.section_questions(index)
    }
    payload = {
        "survey": survey.id,
        "form": submission_id,
        "section": section,
        "reports": {key: int(digits) for key, digits in longest.items()},
        "pad": "",
    }
    return len(_json(payload))


def _longest_stored(question: Question) -> int:
    """The most characters a question's stored report takes as JSON, generously: a set of
    options or their bits is a quoted text of at most three characters per option (a
    two-digit index and a comma); anything else a number or null."""
    return max(_LONGEST_SCALAR, _NOT_APPLICABLE_LENGTH, 2 + 3 * len(question.options))
