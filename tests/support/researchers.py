"""A researcher through Flask's test client: the password, logging in, the pages to visit,
and a clock for sessions and login throttling."""

from __future__ import annotations

import re

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from .examples import SLUG

PASSWORD = "correct horse battery"

# Every research route, for tests that visit them all (the last one is a missing survey).
RESEARCH_ROUTES = [
    "/research/",
    f"/research/surveys/{SLUG}",
    f"/research/surveys/{SLUG}/plot.svg",
    f"/research/surveys/{SLUG}/export.csv",
    f"/research/surveys/{SLUG}/responses.csv",
    f"/research/surveys/{SLUG}/estimates.json",
    f"/research/surveys/{SLUG}/codebook.json",
    "/research/surveys/no-such-survey",
]


def log_in(
    client: FlaskClient, username: str, password: str = PASSWORD, next_url: str = ""
) -> TestResponse:
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert token, "the login form has a CSRF token"
    query = f"?next={next_url}" if next_url else ""
    return client.post(
        f"/login{query}",
        data={"csrf_token": token.group(1), "username": username, "password": password},
    )


class Clock:
    """The accounts module's clock (sessions, login throttling), moved by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def advance(self, seconds: float) -> None:
        self.now += seconds
