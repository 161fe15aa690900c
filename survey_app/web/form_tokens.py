"""Form tokens: only a form this server showed, recently, can submit a response, once.

Each rendering of a survey form carries a fresh token in its ``submission_id`` field:
``<random part>.<issue time>.<signature>``, an HMAC (itsdangerous' ``TimestampSigner``,
SHA-256) over the random part and the time, under the app's secret key and a salt that
names the survey. A script can therefore no longer make up its own ids and replay one
cookie and CSRF token: a made-up or altered token, or one shown for another survey,
fails the signature; a token older than the form's lifetime has expired; and a token
already used returns the response stored under it (the retry rule: same page, stored
once), because its random part is the response's UNIQUE submission id.

Privacy invariant 6: only the random part is stored, as the submission id. It is 128
bits from ``secrets``, drawn independently of the time, so the stored row says nothing
about when the form was shown or sent; the issue time lives only in the token the
browser holds and is checked, then dropped. (A hash of the random part would protect
nothing more: the token in the respondent's page shows the random part in clear, and
whoever holds that page has seen the thank-you page's copy of the stored row anyway.)
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Callable, Sequence

from itsdangerous import BadSignature, TimestampSigner

SALT = "survey-app form token for survey "
# The random part is secrets.token_urlsafe(16); the time is a base64 integer; the
# signature a base64 SHA-256 HMAC (43 characters).
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{1,12}\.[A-Za-z0-9_-]{43}")
DEFAULT_MAX_AGE_HOURS = 24
# Several machines serving one database may disagree on the time by a little: a token
# that seems issued up to this many seconds in the future is still accepted.
CLOCK_SKEW_SECONDS = 300

now: Callable[[], float] = time.time  # the clock; tests replace it


class FormTokenError(ValueError):
    """The form's token cannot submit a response; the message says why, for the page."""


class ForgedFormToken(FormTokenError):
    pass


class ExpiredFormToken(FormTokenError):
    pass


class _Signer(TimestampSigner):
    def get_timestamp(self) -> int:
        return int(now())


def _signer(secret_keys: Sequence[str | bytes], slug: str) -> _Signer:
    """Signs for one survey: the slug is in the salt, so a token is good for its survey only.

    ``secret_keys`` lists the old keys first and the current one last (Flask's
    ``SECRET_KEY_FALLBACKS`` then ``SECRET_KEY``): forms shown before a key rotation
    still verify; new ones are signed with the current key.
    """
    keys = [key.encode() if isinstance(key, str) else key for key in secret_keys]
    return _Signer(keys, salt=SALT + slug, digest_method=hashlib.sha256)


def issue_form_token(secret_keys: Sequence[str | bytes], slug: str) -> str:
    """A fresh token for one rendering of the survey's form."""
    return _signer(secret_keys, slug).sign(secrets.token_urlsafe(16)).decode("ascii")


def submission_id_from(
    secret_keys: Sequence[str | bytes], slug: str, token: str, max_age_hours: float
) -> str:
    """The submission id (the token's random part) of a token this app issued for the survey
    within the last ``max_age_hours``; FormTokenError otherwise."""
    if not TOKEN_PATTERN.fullmatch(token):
        raise ForgedFormToken(
            "The form was not issued by this site for this survey, so nothing was stored. "
            "Please answer again."
        )
    try:
        value, issued = _signer(secret_keys, slug).unsign(token, return_timestamp=True)
    except BadSignature as err:
        raise ForgedFormToken(
            "The form was not issued by this site for this survey, so nothing was stored. "
            "Please answer again."
        ) from err
    age = now() - issued.timestamp()
    if not -CLOCK_SKEW_SECONDS <= age <= max_age_hours * 3600:
        lifetime = "an hour" if max_age_hours == 1 else f"{max_age_hours:g} hours"
        raise ExpiredFormToken(
            f"This form was shown more than {lifetime} ago and has expired, so nothing was "
            "stored. Please answer again."
        )
    return value.decode("ascii")


def random_part(token: str) -> str:
    """The submission id inside a token that ``submission_id_from`` has already accepted."""
    return token.split(".", 1)[0]
