"""Rate limits on submissions, logins and share lookups (Flask-Limiter: fixed windows per
address).

Limits are a brake on scripted abuse, not a privacy mechanism. Two limiters keep their
counts in two places, for two reasons:

- researchers' limits (logins, password links, share lookups) are counted in the
  database (``storage/rate_counts.py``, keys hashed), so every worker process and every
  machine serving one database counts the same attempts, as for the lock-out counts;
- a respondent's submissions are counted in memory, or in Redis (``RATE_LIMIT_STORAGE``),
  under the client's address and never in the database: a count written beside each
  response would tie it to its minute and its address in the write-ahead log (privacy
  invariant 6). In memory each worker process counts its own, so the limit holds per
  process; Redis, kept in memory only, shares it between processes and machines.

A sectioned survey answered without JavaScript posts once per section. Only the POSTs
that could store a response count towards ``SUBMIT_RATE_LIMIT`` (each is still refused
once the address is over it): a section's Next that carries the respondent on
(``carried_on``) costs what showing a page does, and a survey of six sections would
otherwise reach the limit six times sooner than one of one page.
"""

from __future__ import annotations

from flask import Flask, Response, current_app, g
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from werkzeug.exceptions import TooManyRequests
from werkzeug.middleware.proxy_fix import ProxyFix

from survey_app.storage import rate_counts
from survey_app.web.database_session import get_db

# The research limiter's storage is the current request's database connection.
limiter = Limiter(
    key_func=get_remote_address,
    storage_uri=f"{rate_counts.STORAGE_SCHEME}://",
    # Flask-Limiter types its options as plain values; limits hands them to the storage.
    storage_options={"connection": get_db},  # type: ignore[dict-item]
)
respondent_limiter = Limiter(key_func=get_remote_address)
_CARRIED_ON = "survey_app.web.limits.carried_on"


def carried_on() -> None:
    """Say that this POST took a respondent on to a survey's next section, storing nothing:
    it is not counted as a submission."""
    setattr(g, _CARRIED_ON, True)


def _counts_as_submission(_response: Response) -> bool:
    return not g.get(_CARRIED_ON, False)


limit_submissions = respondent_limiter.limit(
    lambda: str(current_app.config["SUBMIT_RATE_LIMIT"]),
    methods=["POST"],
    error_message="Too many answers sent from your network just now; please wait a minute.",
    deduct_when=_counts_as_submission,
)
limit_logins = limiter.limit(
    lambda: str(current_app.config["LOGIN_RATE_LIMIT"]),
    methods=["POST"],
    error_message="Too many login attempts from your network; please wait a minute.",
)
# A link to set a password is as good as a login: tried (opened or used) no faster than
# logins, from one address.
limit_password_links = limiter.limit(
    lambda: str(current_app.config["LOGIN_RATE_LIMIT"]),
    error_message=TooManyRequests.description,
)

# Sharing a survey looks a researcher up by name, and its answer says whether that name
# exists: a brake on guessing names that still lets an owner share with several colleagues
# in a row (each share is two lookups: the question, then its confirmation).
SHARE_RATE_LIMIT = "10 per minute; 100 per day"
limit_share_lookups = limiter.limit(
    SHARE_RATE_LIMIT,
    methods=["POST"],
    # Werkzeug's own words for a 429: the error page puts them in the page's language.
    error_message=TooManyRequests.description,
)


def init_app(app: Flask) -> None:
    app.config["RATELIMIT_ENABLED"] = app.config["RATE_LIMITS"]
    app.config["RATELIMIT_STORAGE_URI"] = app.config["RATE_LIMIT_STORAGE"]
    app.config["RATELIMIT_HEADERS_ENABLED"] = True
    proxies = int(app.config["TRUSTED_PROXIES"])
    if proxies:
        # Behind a proxy every request comes from the proxy's address; believe exactly as
        # many X-Forwarded-* hops as there are proxies, never more (they can be forged).
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)  # type: ignore[method-assign]
    limiter.init_app(app)
    respondent_limiter.init_app(app)
