"""The end of a survey for a panel's participant: a completion code or a return address.

Panels such as Prolific pay a participant who comes back with the study's completion code,
or who lands on the panel's completion address. The survey file gives one of the two
(``completion: {code: ...}`` or ``completion: {redirect: https://...}``); this checks it.
Both are shown to every respondent whose response was stored, so neither may carry
anything about one person: they are the study's, fixed in the file.

A redirect must be https (the participant's browser carries them there, and the panel's
address is on the page for anyone to see), hold no user name or password (a link with
credentials in it hands them to everyone who answers) and stay short enough to read.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from survey_app.domain.survey_model import Completion, SurveyDefinitionError
from survey_app.domain.survey_reading import YamlScalar, field_path

#: The researcher's thank-you text, per language, as long as a consent text.
MAX_THANK_YOU_LENGTH = 5000
MAX_CODE_LENGTH = 100
MAX_REDIRECT_LENGTH = 2000
COMPLETION_KINDS = ("code", "redirect")
# Printable ASCII without spaces: a code is copied by hand or by selection, and a space
# or a look-alike letter from another script would be copied wrong without a trace.
_CODE = re.compile(r"[!-~]+")
# An address as it goes into a link: printable ASCII, anything else percent-encoded.
_ADDRESS = re.compile(r"[!-~]+")


def read_completion(value: object) -> Completion:
    """The completion ``value`` (the file's ``completion:``) describes."""
    field = "completion"
    kinds = " or ".join(COMPLETION_KINDS)
    if not isinstance(value, dict) or len(value) != 1:
        raise SurveyDefinitionError(
            f"must be a mapping with exactly one key, {kinds} "
            "(for example code: C1AB2CD3, or redirect: https://...)",
            field,
        )
    ((kind, given),) = value.items()
    if kind not in COMPLETION_KINDS:
        raise SurveyDefinitionError(
            f"unknown key {str(kind)[:40]!r} (allowed: {', '.join(COMPLETION_KINDS)})",
            field_path(field, str(kind)),
        )
    path = field_path(field, kind)
    text = _text(given, path)
    if kind == "code":
        return Completion("code", _code(text, path))
    return Completion("redirect", _redirect(text, path))


def _text(value: object, field: str) -> str:
    """A string, or a code written as a bare whole number (``code: 4021``), as written."""
    if isinstance(value, YamlScalar) and value.is_integer:
        return value.text
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise SurveyDefinitionError("must be a string", field)
    return value.strip()


def _code(text: str, field: str) -> str:
    if not text:
        raise SurveyDefinitionError("must not be empty", field)
    if len(text) > MAX_CODE_LENGTH:
        raise SurveyDefinitionError(
            f"must be at most {MAX_CODE_LENGTH} characters (got {len(text)})", field
        )
    if not _CODE.fullmatch(text):
        raise SurveyDefinitionError(
            "must be letters, digits and punctuation from ASCII, without spaces", field
        )
    return text


def _redirect(text: str, field: str) -> str:
    if len(text) > MAX_REDIRECT_LENGTH:
        raise SurveyDefinitionError(
            f"must be at most {MAX_REDIRECT_LENGTH} characters (got {len(text)})", field
        )
    if not _ADDRESS.fullmatch(text):
        raise SurveyDefinitionError(
            "must be an address without spaces, other characters percent-encoded", field
        )
    parts = urlsplit(text)
    if parts.scheme.lower() != "https" or not parts.netloc:
        raise SurveyDefinitionError(
            "must be an https:// address, such as the panel's completion link", field
        )
    if "@" in parts.netloc:
        raise SurveyDefinitionError(
            "must not hold a user name or password: every respondent would see it", field
        )
    try:
        parts.port  # noqa: B018 (a port that is no number raises here)
    except ValueError:
        raise SurveyDefinitionError("has a port that is not a number", field) from None
    if not parts.hostname:
        raise SurveyDefinitionError("must name a host after https://", field)
    return text
