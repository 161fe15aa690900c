"""An invited respondent through Flask's test client: open the link, start, get the form.

Opening a link shows the page that spends it; its button (a POST) spends the link for an
answer ticket and sends the browser on to the questions (``storage/invitations.py``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask.testing import FlaskClient

from .respondents import hidden_fields


def start_page(client: FlaskClient, link: str) -> dict[str, str]:
    """The hidden fields of the page a link opens (its CSRF token and the link)."""
    page = client.get(link)
    assert page.status_code == 200, page.get_data(as_text=True)
    fields = hidden_fields(page.get_data(as_text=True))
    assert "invitation" in fields and "submission_id" not in fields  # not spent by a GET
    return fields


def start(client: FlaskClient, link: str) -> dict[str, str]:
    """Spend the link as its respondent would; the form's hidden fields, with the ticket."""
    path = urlsplit(link).path
    started = client.post(f"{path}/start", data=start_page(client, link))
    assert started.status_code == 303, started.get_data(as_text=True)
    # The ticket's cookie: the survey's pages only (a query in its path would match none).
    cookie = started.headers["Set-Cookie"]
    assert f"Path={path};" in cookie and "HttpOnly" in cookie, cookie
    page = client.get(started.headers["Location"])
    assert page.status_code == 200, page.get_data(as_text=True)
    return hidden_fields(page.get_data(as_text=True))
